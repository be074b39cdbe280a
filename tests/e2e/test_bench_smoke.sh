#!/usr/bin/env bash
# Smoke test of tests/bench/bench_search.py: the --quick run (2 seeds, 15 trials, the first
# held-out generated landscape, gen:1001) finishes, writes its results, every regret is finite,
# and --report reprints the table from the results file. With Optuna importable
# the Optuna tuners run too; without python3 the test is skipped. Measures nothing.
# Usage: bash test_bench_smoke.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
py=""
# Debian's python3-optuna lives in the system interpreter; prefer one that imports it.
for cand in /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import optuna" >/dev/null 2>&1; then
    py=$cand; break
  fi
done
if [ -z "$py" ]; then
  command -v python3 >/dev/null 2>&1 || skip_all "python3 not found"
  py=python3 extra=--no-optuna
  echo "note: optuna not importable: flagtune's tuners only"
fi
# Five tuners keep it short on a loaded machine: each Optuna sampler family once.
tuners=tpe,random,halving
[ -z "${extra:-}" ] && tuners=$tuners,optuna-tpe-c,optuna-mtpe,optuna-cmaes
"$py" "$src/tests/bench/bench_search.py" --quick --landscapes gen:heldout --tuners $tuners ${extra:-} \
  --flagtune "$ft" --sim "$sim" --cache "$work/cache" --out "$work/results.jsonl" \
  --markdown "$work/table.md" >"$work/log" 2>&1 || { cat "$work/log"; die "bench_search.py --quick"; }
"$py" - "$work/results.jsonl" "${extra:-}" <<'PY'
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
tuners = {r["tuner"] for r in rows}
want = {"tpe", "random", "halving"} | (set() if sys.argv[2] else {"optuna-tpe-c", "optuna-mtpe", "optuna-cmaes"})
assert {r["landscape"] for r in rows} == {"gen:1001"}, {r["landscape"] for r in rows}
assert want <= tuners, (want, tuners)
assert len(rows) == 2 * len(tuners), len(rows)
for r in rows:
    assert math.isfinite(r["regret"]) and r["regret"] >= -1e-9, r
    # found: the best true value among what it ran, so never worse than what it reported.
    assert -1e-9 <= r["found"] <= r["regret"] + 1e-12, r
print("ok: %d runs, tuners %s" % (len(rows), ", ".join(sorted(tuners))))
PY
check "every tuner ran both seeds, every regret finite" [ $? = 0 ]
check "the table has the tpe row" grep -q "| gen:heldout | 15 | tpe |" "$work/table.md"
"$py" "$src/tests/bench/bench_search.py" --report "$work/results.jsonl" > "$work/report.md"
check "--report reprints the tpe row" grep -q "| gen:heldout | 15 | tpe |" "$work/report.md"
finish
