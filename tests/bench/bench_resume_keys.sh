#!/usr/bin/env bash
# Resume with the seen set from the stored keys against a build without it (docs/COST.md,
# resume): `resume 1 --trials T+5` of the largest sweep of gen_big_db.py's 100,000-trial file
# (random{}, 60,000 trials), the two builds in alternating order each round, each on a fresh
# copy of the file (a write open upgrades the schema; OLD gets the file as schema 18 has it,
# without sweeps.space_digest). Prints per round and as medians: wall s, user + system CPU s,
# peak RSS MiB and the 1-minute load. Then checks that both builds leave the same rows and
# print the same summary: on that random{} sweep and on a grid{} sweep NEW creates (40
# configurations, 20 run, resumed to 45 trials). OLD_SCHEMA=19 gives OLD the file as schema
# 19 has it (with the space digest) instead, to pair against a build that has the stored keys;
# OLD_SCHEMA=same gives OLD the file as it is (two builds of the same schema).
# usage: bench_resume_keys.sh NEW_BUILD OLD_BUILD   (env: ROUNDS=5, DB=a cached file to reuse,
#        CACHE=~/.cache/flagtune/bench-cost, OLD_SCHEMA=18)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
new=$(realpath "$1")/flagtune old=$(realpath "$2")/flagtune
ROUNDS=${ROUNDS:-5} CACHE=${CACHE:-$HOME/.cache/flagtune/bench-cost} OLD_SCHEMA=${OLD_SCHEMA:-18}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$CACHE"
db=${DB:-$CACHE/t100000-keys.db}
if [ ! -f "$db" ]; then
  nice python3 "$root/tests/bench/gen_big_db.py" "$new" "$db.tmp" > /dev/null
  rm -f "$db.tmp-wal" "$db.tmp-shm" "$db.tmp".sweep-*.lock
  mv "$db.tmp" "$db"
fi
# as_old SRC DST: SRC as schema 18 wrote it (no space digest), for OLD; with OLD_SCHEMA=19,
# as schema 19 did (without schema 20's index); with OLD_SCHEMA=same, as it is.
as_old() {
  cp "$1" "$2"
  if [ "$OLD_SCHEMA" = same ]; then
    return 0
  elif [ "$OLD_SCHEMA" = 19 ]; then
    sqlite3 "$2" "DROP INDEX IF EXISTS trials_unok_config; PRAGMA user_version = 19"
  else
    sqlite3 "$2" "ALTER TABLE sweeps DROP COLUMN space_digest; PRAGMA user_version = 18"
  fi
}
# fresh WHICH: the file for WHICH (new, old) in its own directory, as r.db.
fresh() {
  rm -rf "$work/$1" && mkdir -p "$work/$1"
  if [ "$1" = old ]; then cp "$work/base18.db" "$work/$1/r.db"; else cp "$db" "$work/$1/r.db"; fi
}
as_old "$db" "$work/base18.db"
n=$(sqlite3 "$db" "SELECT count(*) FROM trials WHERE sweep_id = 1")
# run WHICH: one timed resume; appends "which wall user sys rss_kib load" to runs.txt.
run() {
  local bin=$new
  [ "$1" = old ] && bin=$old
  fresh "$1"
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$work/$1" && /usr/bin/time -f "%e %U %S %M" -o t.txt "$bin" -q resume 1 \
    --trials $((n + 5)) --db r.db > out.txt 2> err.txt) || { tail -3 "$work/$1/err.txt"; exit 1; }
  echo "$1 $(tail -1 "$work/$1/t.txt") $load" >> "$work/runs.txt"
}
: > "$work/runs.txt"
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then run new; run old; else run old; run new; fi
done
echo "## resume 1 --trials $((n + 5)) of $db ($n trials in sweep 1), $ROUNDS rounds alternating"
echo "| build | wall s | user+sys s | peak RSS MiB | load | (each round: wall / cpu) |"
echo "| --- | ---: | ---: | ---: | --- | --- |"
python3 - "$work/runs.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for which in ("new", "old"):
    r = [[float(x) for x in row[1:]] for row in rows if row[0] == which]
    med = lambda f: statistics.median(f(x) for x in r)
    each = " ".join("%.2f/%.2f" % (x[0], x[1] + x[2]) for x in r)
    print("| %s | %.2f | %.2f | %.1f | %.1f-%.1f | %s |" % (which, med(lambda x: x[0]),
          med(lambda x: x[1] + x[2]), med(lambda x: x[3]) / 1024, min(x[4] for x in r),
          max(x[4] for x in r), each))
PY
rows="SELECT number, role, status, config, value, steps_budget FROM trials WHERE sweep_id = 1 ORDER BY number"
# same WHAT: both builds' last runs left the same rows and printed the same summary.
same() {
  local a b
  a=$(sqlite3 "$work/new/r.db" "$rows" | md5sum) b=$(sqlite3 "$work/old/r.db" "$rows" | md5sum)
  if [ "$a" = "$b" ] && cmp -s "$work/new/out.txt" "$work/old/out.txt"; then
    echo "$1: the same rows and summary"
  else
    echo "$1: DIFFERENT rows or summary"
    diff "$work/new/out.txt" "$work/old/out.txt" | head -10
    exit 1
  fi
}
same "random{}, $n trials"
# A grid{} sweep made by NEW (so with its digest), resumed by both.
mkdir -p "$work/g"
cat > "$work/g/grid.lua" <<'LUA'
return experiment { name = "grid", model = "m", hardware = "h",
  command = { "/bin/echo", '{"step_time_ms": 1.5}' }, metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 19), xla_gpu_enable_latency_hiding_scheduler = bool() },
  strategy = grid {}, budget = { trials = 21 }, seed = 1 }
LUA
(cd "$work/g" && FLAGTUNE_LOG_DIR="$work/g/logs" "$new" -q run grid.lua --db g.db > /dev/null 2>&1)
cp "$work/g/g.db" "$work/g/new.db"
as_old "$work/g/g.db" "$work/g/old.db"
for which in new old; do
  bin=$new
  [ "$which" = old ] && bin=$old
  rm -rf "$work/$which" && mkdir -p "$work/$which"
  cp "$work/g/$which.db" "$work/$which/r.db"
  (cd "$work/$which" && FLAGTUNE_LOG_DIR="$work/$which/logs" "$bin" -q resume 1 --trials 45 \
    --db r.db > out.txt 2> err.txt) || { tail -3 "$work/$which/err.txt"; exit 1; }
done
same "grid{}, 21 trials resumed to 45"
