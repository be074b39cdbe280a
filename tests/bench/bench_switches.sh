#!/usr/bin/env bash
# Context switches a trial, per process of the chain (not run by CI: it measures, it does not
# gate). Runs the per-trial sweep (per_trial_exp.sh: printf of 5 step lines, random{}) under
# `perf record -e context-switches -c 1` (every switch, whole tree) and sorts the switches by
# role: the orchestrator's loop thread, its durability worker, the fork server, the trials'
# supervisors, the commands. Then the floors' totals (`perf stat`): the same number of printf
# spawns from a C posix_spawn loop and from a bash loop. Numbers: docs/COST.md.
# Usage: bench_switches.sh [BUILD_DIR]   (env: N=200 PARALLEL=1 CPU=1 OTHER=BUILD_DIR ROUNDS=9)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
N=${N:-200} PARALLEL=${PARALLEL:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FLAGTUNE_LOG_DIR="$work/logs"
source "$root/tests/bench/per_trial_exp.sh"
exp sw "$N" "$PARALLEL"
echo "## context switches a trial, $N trials, parallel $PARALLEL (load: $(cut -d' ' -f1-3 /proc/loadavg))"
perf record -q -e context-switches -c 1 -o sw.data -- "$build/flagtune" -q run sw.lua --db sw.db > /dev/null 2>&1
# by_role DATA DIV FORMAT: each role's samples in DATA a trial (over DIV), printed with FORMAT.
# The orchestrator is flagtune's first pid, its worker the other flagtune pid; the fork server
# is the flagtune-supervise process with the most samples, every other one a supervisor.
by_role() {
  perf report -i "$1" --sort pid --stdio -n -g none 2>/dev/null | grep -E '^ +[0-9.]+%' |
    awk '{ split($3, a, ":"); print a[1], a[2], $2 }' | sort -n |
    awk -v n="$N" -v d="$2" -v f="  %-22s $3\n" '
      $2 == "flagtune" { c[++ft == 1 ? "orchestrator" : "durability worker"] += $3; t += $3; next }
      $2 ~ /^flagtune-sup/ { sup += $3; t += $3; if ($3 > top) top = $3; next }
      { c["command (" $2 ")"] += $3; t += $3 }
      END {
        c["fork server"] = top
        c["supervisors"] = sup - top
        for (r in c) printf f, r, c[r] / d / n
        printf f, "total", t / d / n
      }'
}
by_role sw.data 1 "%6.2f"
cc -O2 -o spawn "$root/tests/bench/spawn_loop.c"
floor() { # label command...
  local label=$1
  shift
  perf stat -x, -e context-switches -- "$@" 2>&1 > /dev/null |
    awk -F, -v n="$N" -v l="$label" '$3 == "context-switches" { printf "  %-22s %6.2f\n", l, $1 / n }'
}
echo "## the floors (parallel 1), total a trial"
floor "posix_spawn loop" ./spawn "$N" 1 /usr/bin/printf "$five"
floor "bash loop" bash -c 'for ((i = 0; i < $1; i++)); do /usr/bin/printf "$0" > /dev/null & wait; done' "$five" "$N"
# CPU=1: each role's CPU a trial too, from `perf record -F 4999` of the same sweep (samples
# over the rate, sorted by role as the switches are).
if [ -n "${CPU:-}" ]; then
  rm -rf sw.db* "$FLAGTUNE_LOG_DIR"
  perf record -q -F 4999 -o cpu.data -- "$build/flagtune" -q run sw.lua --db sw.db > /dev/null 2>&1
  echo "## CPU a trial, ms ($N trials, parallel $PARALLEL, load: $(cut -d' ' -f1-3 /proc/loadavg))"
  by_role cpu.data 4.999 "%6.3f"
fi
# OTHER=BUILD_DIR: the whole tree's CPU (task-clock) and context switches a trial of this build's
# sweep and OTHER's, ROUNDS rounds (which goes first alternates), medians and the paired ratio.
if [ -n "${OTHER:-}" ]; then
  other=$(cd "$OTHER" && pwd)
  tree() { # FLAGTUNE -> "task-clock-ms switches" of one sweep
    rm -rf sw.db* "$FLAGTUNE_LOG_DIR"
    perf stat -x, -e task-clock,context-switches -- "$1" -q run sw.lua --db sw.db 2>&1 > /dev/null |
      awk -F, '$3 ~ /^task-clock/ { t = $1 } $3 == "context-switches" { s = $1 } END { print t, s }'
  }
  : > pair.txt
  for r in $(seq "${ROUNDS:-9}"); do
    if [ $((r % 2)) = 1 ]; then a=$(tree "$build/flagtune"); o=$(tree "$other/flagtune"); else
      o=$(tree "$other/flagtune"); a=$(tree "$build/flagtune"); fi
    echo "$a $o" >> pair.txt
  done
  echo "## the whole tree a trial, this build / OTHER, ${ROUNDS:-9} rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  python3 - pair.txt "$N" <<'PY'
import statistics as st, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
n = int(sys.argv[2])
for i, what in ((0, "CPU ms"), (1, "switches")):
    a = [r[i] / n for r in rows]; o = [r[i + 2] / n for r in rows]
    q = sorted(x / y for x, y in zip(a, o))
    print("  %-9s this %.3f  OTHER %.3f  paired ratio median %.3fx (range %.3f-%.3f)" % (
        what, st.median(a), st.median(o), st.median(q), q[0], q[-1]))
PY
fi
