#!/usr/bin/env bash
# Output flood (not run by CI; docs/COST.md "Output"): flagtune's own CPU per MB of non-step
# output against the writer's, the writer measured both ways: into /dev/null, and into a pipe
# (what it does under flagtune: a reader on the other end, here `cat > /dev/null`, whose own CPU
# is not counted; GNU time gives the writer's). Paired: the cases alternate, RUNS rounds. The writer is
# `yes LINE | head -c N` (two processes: their CPU is the children's CPU of the sh).
# With OTHER_BUILD, that build's flagtune runs the same flood in the same rounds (before/after).
# Usage: bench_flood.sh [BUILD_DIR [OTHER_BUILD]]   (env: MB=200 RUNS=3)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ft=$build/flagtune
other=${2:+$(cd "$2" && pwd)/flagtune}
selfcpu="python3 $root/tests/bench/selfcpu.py"
MB=${MB:-200} RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FLAGTUNE_LOG_DIR="$work/logs"
text='step line of output that is not a metric, printed again and again by a noisy trial'
bytes=$((MB * 1048576))
for n in flood quiet; do
  if [ $n = flood ]; then body="yes '$text' | head -c $bytes; echo; "; else body=""; fi
  cat > $n.lua <<LUA
return experiment {
  name = "$n", hardware = "bench",
  command = { "sh", "-c", [[${body}echo '{"step_time_ms": 2}']] },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 4) },
  budget = { trials = 2 }, timeout = "10m", seed = 1, software_probe = false,
}
LUA
done
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
echo "| round | flagtune self CPU, 2 x $MB MB (ms) | quiet sweep (ms) | flagtune per MB (ms) | writer to /dev/null per MB (ms) | writer into a pipe per MB (ms) |${other:+ other build per MB (ms) |}"
echo "| --- | ---: | ---: | ---: | ---: | ---: |${other:+ ---: |}"
for r in $(seq "$RUNS"); do
  rm -rf f.db* logs; fl=$($selfcpu "$ft" -q run flood.lua --db f.db | field self_cpu_ms)
  rm -rf f.db* logs; qu=$($selfcpu "$ft" -q run quiet.lua --db f.db | field self_cpu_ms)
  # GNU time's child is the sh, which reaps yes and head: their CPU, not the reader's
  null=$( { /usr/bin/time -f "%U %S" sh -c "yes '$text' | head -c $bytes" > /dev/null; } 2>&1 |
    awk '{print ($1 + $2) * 1000}')
  pipe=$( { /usr/bin/time -f "%U %S" sh -c "yes '$text' | head -c $bytes" | cat > /dev/null; } 2>&1 |
    awk '{print ($1 + $2) * 1000}')
  col=""
  if [ -n "$other" ]; then
    rm -rf f.db* logs; ofl=$($selfcpu "$other" -q run flood.lua --db f.db | field self_cpu_ms)
    rm -rf f.db* logs; oqu=$($selfcpu "$other" -q run quiet.lua --db f.db | field self_cpu_ms)
    col=$(printf ' %.2f |' "$(echo "($ofl - $oqu) / (2 * $MB)" | bc -l)")
  fi
  printf '| %d | %s | %s | %.2f | %.2f | %.2f |%s\n' "$r" "$fl" "$qu" \
    "$(echo "($fl - $qu) / (2 * $MB)" | bc -l)" "$(echo "$null / $MB" | bc -l)" \
    "$(echo "$pipe / $MB" | bc -l)" "$col"
done
