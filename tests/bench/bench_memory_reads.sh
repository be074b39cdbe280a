#!/usr/bin/env bash
# Memory of the commands that read a large sweep back (not run by CI; docs/COST.md "Memory"):
# peak RSS (GNU time's %M, the process alone) and time of
#   - `resume` of the sweep extended by 5 trials (`resume 1 --trials N+5`: the whole resume path,
#     the history replayed into the strategy, then 5 trials),
#   - `minimize 1 --repeats 1 --trials 3` (the winner, its interval, the plan, 3 trials),
#   - `run` of the same experiment with `warm_start = true` and 3 trials (the earlier sweep's
#     trials as history),
# each on a fresh copy of the database, every build once a round, builds alternating.
# DIR is a directory that `KEEP=DIR bench_memory.sh` left (mem.db, mem.lua: its sweep 1).
# Usage: bench_memory_reads.sh DIR ROUNDS BUILD [BUILD ...]
set -eu
dir=$(cd "$1" && pwd)
rounds=$2
shift 2
builds=()
for b in "$@"; do builds+=("$(cd "$b" && pwd)"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FLAGTUNE_LOG_DIR="$work/logs"
n=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(
  'select count(*) from trials where sweep_id = 1').fetchone()[0])" "$dir/mem.db")
sed -e 's/strategy = /warm_start = true, strategy = /' -e 's/trials = [0-9]*/trials = 3/' \
  "$dir/mem.lua" > "$work/warm.lua"
grep -q 'warm_start = true' "$work/warm.lua"
echo "## $dir: sweep 1 of $n trials; $rounds round(s)"
echo "| build | command | peak RSS MiB | wall s | CPU s | exit |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
one() { # BUILD NAME ARGS...: one command on a fresh copy of the database
  local build=$1 name=$2
  shift 2
  cp "$dir/mem.db" "$work/run.db"
  rm -f "$work/run.db-wal" "$work/run.db-shm"
  local rc=0
  (cd "$dir" && /usr/bin/time -f "%M %e %U %S" -o "$work/time.txt" \
    "$build/flagtune" -q "$@" --db "$work/run.db" > /dev/null 2> "$work/err.txt") || rc=$?
  read -r kb wall user sys < <(tail -1 "$work/time.txt")
  printf "| %s | %s | %.1f | %.2f | %.2f | %d |\n" "$build" "$name" "$(echo "$kb / 1024" | bc -l)" \
    "$wall" "$(echo "$user + $sys" | bc -l)" "$rc"
  [ "$rc" -le 1 ] || sed 's/^/    /' "$work/err.txt" | tail -3
}
for _ in $(seq "$rounds"); do
  for b in "${builds[@]}"; do
    one "$b" "resume 1 --trials $((n + 5))" resume 1 --trials $((n + 5))
    one "$b" "minimize 1 --repeats 1 --trials 3" minimize 1 --repeats 1 --trials 3
    one "$b" "run (warm start, 3 trials)" run "$work/warm.lua"
  done
done
