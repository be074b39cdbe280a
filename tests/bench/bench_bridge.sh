#!/usr/bin/env bash
# The per-trial cost of the C/Lua bridge (not run by CI: it measures, it does not gate): a
# random{} sweep of N trivial trials (per_trial_exp.sh: printf writing 5 JSON step lines),
# parallel 1, RUNS times; prints flagtune's own CPU (selfcpu.py: without its children's) and
# wall time per trial, and the median of the runs. BASE=BUILD_DIR runs that build's flagtune
# the same way first (a before/after in one run).
# Usage: bench_bridge.sh [BUILD_DIR]   (env: N=2000 RUNS=3 BASE=)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
N=${N:-2000} RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FLAGTUNE_LOG_DIR="$work/logs"
source "$root/tests/bench/per_trial_exp.sh" # exp NAME TRIALS PARALLEL
exp p1 "$N" 1
measure() { # LABEL FLAGTUNE
  local ms=()
  for _ in $(seq "$RUNS"); do
    rm -rf b.db b.db-wal b.db-shm logs
    line=$(python3 "$root/tests/bench/selfcpu.py" --label "$1" "$2" -q run p1.lua --db b.db)
    # selfcpu.py: "LABEL self_cpu_ms=N (...) children_cpu_ms=N (...) ... wall_ms=N ... exit=N"
    case $line in *" exit=0") ;; *) echo "bench_bridge: the sweep failed: $line" >&2; exit 1 ;; esac
    self=$(sed -n 's/.* self_cpu_ms=\([0-9.]*\) .*/\1/p' <<<"$line")
    wall=$(sed -n 's/.* wall_ms=\([0-9.]*\) .*/\1/p' <<<"$line")
    printf '%s: self %.3f ms/trial, wall %.3f ms/trial\n' "$1" \
      "$(bc -l <<<"$self / $N")" "$(bc -l <<<"$wall / $N")"
    ms+=("$(bc -l <<<"$self / $N")")
  done
  printf '%s: median self %.3f ms/trial over %d runs of %d trials\n' "$1" \
    "$(printf '%s\n' "${ms[@]}" | sort -g | sed -n "$(((RUNS + 1) / 2))p")" "$RUNS" "$N"
}
if [ -n "${BASE:-}" ]; then measure base "$(cd "$BASE" && pwd)/flagtune"; fi
measure this "$build/flagtune"
