#!/usr/bin/env bash
# The orchestrator's system calls a trial (not run by CI: it measures, it does not gate).
# Runs the per-trial sweep of bench_orchestration.sh section 1 (per_trial_exp.sh: printf
# writing 5 JSON step lines, random{}, no software probe) under `strace -c` of flagtune alone (not its server,
# supervisors or trials) at SMALL and at SMALL + N trials, and prints the difference over N:
# the calls a trial costs, start-up and the end of the sweep taken out. Then flagtune's own
# user and system CPU for N trials (selfcpu.py), RUNS times. Numbers: docs/COST.md.
# Usage: bench_syscalls.sh [BUILD_DIR]   (env: N=300 SMALL=30 PARALLEL=1 RUNS=3)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ft=$build/flagtune
N=${N:-300} SMALL=${SMALL:-30} PARALLEL=${PARALLEL:-1} RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FLAGTUNE_LOG_DIR="$work/logs"
source "$root/tests/bench/per_trial_exp.sh" # exp NAME TRIALS PARALLEL
exp small "$SMALL" "$PARALLEL"
exp big $((SMALL + N)) "$PARALLEL"
counts() { # experiment -> "call count" lines
  rm -rf b.db* "$FLAGTUNE_LOG_DIR"
  strace -c -U name,calls -o "$1.strace" "$ft" -q run "$1.lua" --db b.db > /dev/null
  awk 'NR > 2 && $1 !~ /^-/ && $1 != "total" && NF == 2 { print $1, $2 }' "$1.strace"
}
counts small > small.txt
counts big > big.txt
echo "## system calls a trial (flagtune alone, parallel $PARALLEL, ($SMALL + $N trials - $SMALL) / $N)"
awk -v n="$N" 'FNR == NR { s[$1] = $2; next } { d = ($2 - s[$1]) / n; t += d; if (d >= 0.05) printf "  %-16s %6.2f\n", $1, d }
  END { printf "  %-16s %6.2f\n", "total", t }' small.txt big.txt | sort -k2 -n -r
echo "## flagtune's own CPU, $N trials, parallel $PARALLEL"
exp cpu "$N" "$PARALLEL"
for _ in $(seq "$RUNS"); do
  rm -rf b.db* "$FLAGTUNE_LOG_DIR"
  python3 "$root/tests/bench/selfcpu.py" --label "flagtune run ($N trials)" "$ft" -q run cpu.lua --db b.db
done
