#!/usr/bin/env bash
# End-to-end: `show --all` prints its trial table as the rows are read (src/cli/cli.c show_all,
# docs/COST.md "Memory"), and what it prints is the listing show builds:
#  1. a sweep of at most one page (50 trials): `show --all` and `show` print the same text and
#     the same JSON, byte for byte (the streamed table is the collected one);
#  2. a sweep of more than a page: --all lists every trial by number with each one's error
#     line, --json is one valid document whose "trials" holds every trial and says "all",
#     and its importance is show's: one estimate over every trial, failures included;
#  3. an unknown sweep is still an error (exit 2), with nothing on stdout.
# Usage: test_show_all.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is needed to read the JSON"

exp() { # name trials
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", hardware = "test-box",
  command = { "sh", "-c", [[echo '{"step_time_ms": 2}'; case "\$XLA_FLAGS" in *autotune_level=1*) exit 3;; esac]] },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 1000), xla_gpu_enable_triton_gemm = bool() },
  budget = { trials = $2 }, seed = 1,
}
LUA
}
exp small 12
exp big 64
"$ft" -q run small.lua > /dev/null 2>&1 || die "the small sweep did not run"
"$ft" -q run big.lua > /dev/null 2>&1 || die "the big sweep did not run"

"$ft" show 1 > s.txt && "$ft" show 1 --all > sa.txt || die "show 1"
"$ft" show 1 --json > s.json && "$ft" show 1 --all --json > sa.json || die "show 1 --json"
check "one page: --all prints what show prints" cmp -s s.txt sa.txt
check "one page: --all --json is show --json" cmp -s s.json sa.json

"$ft" show 2 --all > ba.txt || die "show 2 --all"
"$ft" show 2 --all --json > ba.json || die "show 2 --all --json"
n=$(val "SELECT count(*) FROM trials WHERE sweep_id = 2")
check_eq "the big sweep ran past a page" "$([ "$n" -gt 50 ] && echo yes)" yes
rows=$(grep -cE '^ *[0-9]+  [a-z]+ ' ba.txt)
check_eq "--all lists every trial" "$rows" "$n"
failed=$(val "SELECT count(*) FROM trials WHERE sweep_id = 2 AND status <> 'ok' AND error IS NOT NULL AND error <> ''")
errs=$(grep -c '^       ' ba.txt || true)
check_eq "--all prints each failed trial's error line" "$errs" "$failed"
check "--all lists by number" python3 - "$n" <<'PY'
import json, re, sys
n = int(sys.argv[1])
nums = [int(m.group(1)) for m in re.finditer(r"^ *(\d+)  [a-z]+ ", open("ba.txt").read(), re.M)]
assert nums == list(range(n)), nums[:5]
d = json.load(open("ba.json"))
assert d["trials_listed"] == "all", d["trials_listed"]
assert [t["number"] for t in d["trials"]] == list(range(n))
assert d["n_trials"] == n and isinstance(d["trials"][1]["config"], dict)
assert isinstance(d["best"], dict) and isinstance(d["importance"], dict)
PY
"$ft" show 2 --json > b.json || die "show 2 --json"
check "the page's listing and --all's differ only in the trials listed; one importance" python3 - <<'PY'
import json
a, b = json.load(open("ba.json")), json.load(open("b.json"))
assert a["importance"] == b["importance"], "one importance estimate for show and show --all"
assert a["importance"]["trials"] > 50, "over more than the page listed"
for k in ("trials", "trials_listed"):
    a.pop(k); b.pop(k)
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
"$ft" show 9 --all > none.txt 2> none.err
check_eq "an unknown sweep exits 2" "$?" 2
check_eq "and prints nothing on stdout" "$(wc -c < none.txt)" 0
finish
