#!/usr/bin/env bash
# The 95 % interval's cost at display (not run by CI: it measures). A real sweep whose
# baseline and trials print STEPS step lines each (the simulator, no sleeping) ends and caches
# its interval (schema 11); `show` and `export` are timed with the cache, then with the cache
# cleared (what a running sweep or an older database costs: the bootstrap at every display).
# Usage: bench_interval.sh [BUILD_DIR]   (env: STEPS=20000 RUNS=5)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ft=$build/flagtune
STEPS=${STEPS:-20000} RUNS=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FLAGTUNE_LOG_DIR="$work/logs"
cat > long.lua <<LUA
return experiment {
  name = "long", model = "sim-7b", hardware = "test-box",
  command = { "$build/flagtune-sim", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 3, steps = $STEPS }, prune = false, seed = 1,
}
LUA
"$ft" -q run long.lua --db l.db > /dev/null
echo "steps per trial: $(sqlite3 l.db 'SELECT group_concat(n_steps) FROM trials')"
time_it() { # label args...
  python3 - "$@" <<'PY'
import statistics, subprocess, sys, time
label, argv = sys.argv[1], sys.argv[2:]
ts = []
for _ in range(int(__import__("os").environ.get("RUNS", "5"))):
    t = time.perf_counter(); out = subprocess.run(argv, capture_output=True, text=True)
    ts.append((time.perf_counter() - t) * 1e3)
line = next((l for l in out.stdout.splitlines() if "CI" in l), "")
print("| %s | %.1f | %s |" % (label, statistics.median(ts), line.strip()[:90]))
PY
}
echo "| command | wall ms (median of $RUNS) | the interval line |"
echo "| --- | ---: | --- |"
time_it "show, interval cached" "$ft" show 1 --db l.db
time_it "export, interval cached" "$ft" export 1 --db l.db
sqlite3 l.db "UPDATE sweeps SET best_ci_trial = NULL"
time_it "show, no cache (bootstrap)" "$ft" show 1 --db l.db
time_it "export, no cache (bootstrap)" "$ft" export 1 --db l.db
time_it "flagtune --version (floor)" "$ft" --version

# Pruning's running median (two heaps, O(log n) a step): flagtune's own CPU for the same
# sweep with pruning on (the default) and off; the difference is what pruning costs.
sed 's/prune = false, //' long.lua > pruned.lua
echo
for f in long pruned; do
  rm -f p.db*
  python3 "$root/tests/bench/selfcpu.py" --label "$STEPS-step trials, $([ $f = long ] && echo 'prune = false' || echo 'pruning on')" \
    "$ft" -q run $f.lua --db p.db
done
