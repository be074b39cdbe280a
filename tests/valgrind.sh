#!/usr/bin/env bash
# Runs an end-to-end sweep of the simulated workload (baseline + 5 trials, parallel 2, one trial
# that times out) and then `show`, `best`, `export` and `query` under valgrind
# --leak-check=full --error-exitcode=1. Children (the trials) are not traced. Prints each
# command's verdict and exits 1 if valgrind reported an error or a definite leak anywhere.
# Usage: tests/valgrind.sh [BUILD_DIR]   (default build/; a non-sanitizer build)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ft=$build/flagtune sim=$build/flagtune-sim
command -v valgrind > /dev/null || { echo "SKIP: valgrind is not installed"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export FLAGTUNE_DB="$work/v.db" FLAGTUNE_LOG_DIR="$work/logs"
# Every Lua block from malloc, every state closed: memcheck sees them (src/luahost/lhost.h).
export FLAGTUNE_LUA_ARENA=0
cat > v.lua <<LUA
return experiment {
  name = "valgrind", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.01" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "4GiB") },
  strategy = random {}, budget = { trials = 6, steps = 12 }, parallel = 2, seed = 4,
  timeout = "20s",
}
LUA
failed=0
vg() { # name args...
  local name=$1; shift
  valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
    --trace-children=no --log-file="$work/$name.vg" "$ft" "$@" > "$name.out" 2> "$name.err"
  local code=$?
  local summary
  summary=$(grep -E "ERROR SUMMARY|definitely lost" "$work/$name.vg" | sed 's/^==[0-9]*== //' | tr '\n' ' ')
  if [ $code = 99 ]; then
    failed=$((failed + 1))
    echo "FAIL $name: $summary"
    grep -A12 -E "Invalid|uninitialised|definitely lost in" "$work/$name.vg" | head -40
  else
    echo "ok   $name (exit $code): $summary"
  fi
}
vg run -q run v.lua
vg show show 1
vg show-json show 1 --json
vg best best
vg export export 1
vg query query "SELECT count(*) FROM trials"
vg check check v.lua
[ $failed = 0 ]
