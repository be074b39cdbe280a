#!/usr/bin/env bash
# flagtune's cost, each figure as a ratio against its floor measured in the same run (not run
# by CI: it measures, it does not gate; docs/COST.md shows its table). Cases alternate round
# by round (A/B pairs in turn); every figure is a median over ROUNDS.
#   per trial  N trials of a trivial command (per_trial_exp.sh: printf of 5 step lines) under
#              random{}, parallel 1 and 2, against a bash loop and a C posix_spawn loop
#              spawning the same command as often, as many at a time. Durability on (the
#              database on this disk, the finishes synced by the store's worker); its cost
#              apart: the same sweep with the database on tmpfs (/dev/shm), where fsync costs
#              nothing.
#   resume     `resume 1 --trials T+5` of the largest sweep (history replayed, 5 trials run)
#              on a copy of a generated database: wall time and peak RSS, against sqlite3
#              reading that sweep's trials and steps (what a replay must read at least).
#   reads      every read command, the database without and with ANALYZE statistics,
#              against sqlite3 running the command's main query on the same file.
# at SIZES trials (gen_big_db.py; generated databases are cached in CACHE).
# Usage: bench_cost.sh [BUILD_DIR]   (env: ROUNDS=5 N=200 SIZES="1000 10000 100000"
#        CACHE=~/.cache/flagtune/bench-cost ONLY=trial,resume,reads OTHER=BUILD_DIR)
# OTHER: per trial, also the sweep of OTHER's flagtune on disk in every round (which of the
# two goes first alternates round by round), its ratios to the floors, and the paired ratio
# of the two with a 95 % bootstrap interval of its geometric mean.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ft=$build/flagtune
ROUNDS=${ROUNDS:-5} N=${N:-200} SIZES=${SIZES:-"1000 10000 100000"} OTHER=${OTHER:-}
other_ft=${OTHER:+$(cd "$OTHER" && pwd)/flagtune}
CACHE=${CACHE:-$HOME/.cache/flagtune/bench-cost} ONLY=${ONLY:-trial,resume,reads}
mkdir -p "$CACHE"
work=$(mktemp -d)
shm=$(mktemp -d /dev/shm/flagtune-bench.XXXXXX)
trap 'rm -rf "$work" "$shm"' EXIT
# Each sweep's logs go to a directory of their own, kept until the end: a sweep never deletes
# files, and on an ext4 without a journal a file made where many were deleted in the last
# minutes costs the kernel a scan of them (fs/ext4/ialloc.c, recently_deleted), about 0.7 ms a
# trial here when each round removed the last round's logs (docs/COST.md, "A log's creation").
mkdir -p "$work/logs"
want() { case ",$ONLY," in *",$1,"*) return 0 ;; esac; return 1; }

if want trial; then
  cc -O2 -o "$work/spawn" "$root/tests/bench/spawn_loop.c"
  cd "$work"
  source "$root/tests/bench/per_trial_exp.sh"
  exp p1 "$N" 1
  exp p2 "$N" 2
  ms() { # command... -> wall ms
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000)) | awk '{ printf "%.1f", $1 / 1000 }'
  }
  bash_loop() { # P: N printf spawns, P at a time
    local i
    for ((i = 0; i < N; i += $1)); do
      /usr/bin/printf "$five" > /dev/null &
      [ "$1" = 1 ] || /usr/bin/printf "$five" > /dev/null &
      wait
    done
  }
  run_on() { # DIR P [FLAGTUNE]
    rm -rf "$1/c.db"*
    FLAGTUNE_LOG_DIR=$(mktemp -d "$work/logs/r.XXXXXX") "${3:-$ft}" -q run "p$2.lua" --db "$1/c.db"
  }
  echo "## per trial: $N trials, $ROUNDS rounds (ms per trial; ratios are medians of each round's ratio)"
  echo "| parallel | flagtune (disk) | bash loop | posix_spawn loop | flagtune / bash | flagtune / posix_spawn | flagtune on tmpfs | durability a trial |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for p in 1 2; do
    : > "$work/t$p.txt"
    for r in $(seq "$ROUNDS"); do
      o=0
      [ -z "$other_ft" ] || [ $((r % 2)) = 1 ] || o=$(ms run_on "$work" "$p" "$other_ft")
      a=$(ms run_on "$work" "$p")
      [ -z "$other_ft" ] || [ $((r % 2)) = 0 ] || o=$(ms run_on "$work" "$p" "$other_ft")
      b=$(ms bash_loop "$p")
      c=$(ms "$work/spawn" "$N" "$p" /usr/bin/printf "$five")
      d=$(ms run_on "$shm" "$p")
      echo "$a $b $c $d $o" >> "$work/t$p.txt"
    done
    python3 - "$work/t$p.txt" "$N" "$p" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
n, p = int(sys.argv[2]), sys.argv[3]
med = lambda xs: statistics.median(xs)
a, b, c, d = (med([r[i] for r in rows]) / n for i in range(4))
print("| %s | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.2f (%.2fx bash, %.2fx spawn) | %.2f |" % (
    p, a, b, c, med([r[0] / r[1] for r in rows]), med([r[0] / r[2] for r in rows]), d,
    med([r[3] / r[1] for r in rows]), med([r[3] / r[2] for r in rows]),
    med([(r[0] - r[3]) / n for r in rows])))
if rows[0][4] > 0:
    import math, random
    logs = [math.log(r[0] / r[4]) for r in rows]
    rng = random.Random(1)
    boot = sorted(statistics.mean(rng.choice(logs) for _ in logs) for _ in range(2000))
    print("|   OTHER | %.2f | | | %.2fx | %.2fx | this / OTHER, paired: median %.3fx, "
          "geometric mean %.3fx [%.3f, %.3f] | |" % (
        med([r[4] for r in rows]) / n, med([r[4] / r[1] for r in rows]),
        med([r[4] / r[2] for r in rows]), med([r[0] / r[4] for r in rows]),
        math.exp(statistics.mean(logs)), math.exp(boot[50]), math.exp(boot[1949])))
PY
  done
  echo
  cd "$root"
fi

gen() { # SIZE -> the cached database's path
  local db=$CACHE/t$1.db big=$(($1 * 6 / 10))
  if [ ! -f "$db" ]; then
    nice python3 "$root/tests/bench/gen_big_db.py" "$ft" "$db.tmp" --trials "$1" --big "$big" \
      --sweeps 20 > /dev/null
    rm -f "$db.tmp-wal" "$db.tmp-shm" "$db.tmp".sweep-*.lock
    mv "$db.tmp" "$db"
  fi
  # A cached file of an older schema: a write open upgrades it (resume of a done sweep opens
  # the database for writing, then refuses), and reads must then work.
  "$ft" -q resume 1 --db "$db" > /dev/null 2>&1 || true
  "$ft" -q show 1 --db "$db" > /dev/null || { echo "bench_cost.sh: cannot read $db" >&2; exit 1; }
  echo "$db"
}

if want resume; then
  echo "## resume of sweep 1 (60 % of the trials) to 5 more trials, $ROUNDS rounds (medians)"
  echo "| trials in the file | sweep 1 | resume wall s | sqlite3 floor s | ratio | resume peak RSS MiB | sqlite3 peak RSS MiB |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for size in $SIZES; do
    db=$(gen "$size")
    n=$(sqlite3 "$db" "SELECT count(*) FROM trials WHERE sweep_id = 1")
    : > "$work/r.txt"
    for _ in $(seq "$ROUNDS"); do
      cp "$db" "$work/r.db"
      rm -f "$work/r.db-wal" "$work/r.db-shm" "$work"/r.db.*lock
      (cd "$work" && /usr/bin/time -f "%e %M" -o "$work/rt.txt" "$ft" -q resume 1 \
        --trials $((n + 5)) --db "$work/r.db" > /dev/null 2> "$work/rerr.txt") ||
        { sed 's/^/    /' "$work/rerr.txt" | tail -3; }
      /usr/bin/time -f "%e %M" -o "$work/st.txt" sqlite3 "$db" \
        "SELECT t.id, t.config, t.value, s.ms FROM trials t JOIN steps s ON s.trial_id = t.id WHERE t.sweep_id = 1 ORDER BY t.number, s.step" > /dev/null
      echo "$(tail -1 "$work/rt.txt") $(tail -1 "$work/st.txt")" >> "$work/r.txt"
    done
    python3 - "$work/r.txt" "$size" "$n" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
med = lambda i: statistics.median([r[i] for r in rows])
print("| %s | %s | %.2f | %.2f | %.1fx | %.1f | %.1f |" % (sys.argv[2], sys.argv[3], med(0), med(2),
      statistics.median([r[0] / max(r[2], 0.01) for r in rows]), med(1) / 1024, med(3) / 1024))
PY
  done
  echo
fi

if want reads; then
  for size in $SIZES; do
    db=$(gen "$size")
    cp "$db" "$work/plain.db"
    sqlite3 "$work/plain.db" "DROP TABLE IF EXISTS sqlite_stat1; DROP TABLE IF EXISTS sqlite_stat4;"
    cp "$db" "$work/stat.db"
    sqlite3 "$work/stat.db" "ANALYZE"
    echo "## reads at $size trials (sweep 1: 60 %), $ROUNDS rounds: ms, median; each command's floor sqlite3 running its main query"
    python3 - "$ft" "$work/plain.db" "$work/stat.db" "$ROUNDS" <<'PY'
import os, statistics, subprocess, sys, time
ft, plain, stat, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def ms(argv):
    t0 = time.perf_counter()
    rc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if rc != 0:  # a failing command is fast: its time is no figure
        sys.exit("bench_cost.sh: %s exited %d" % (" ".join(argv), rc))
    return (time.perf_counter() - t0) * 1e3
page = ("SELECT * FROM trial_results WHERE sweep_id = 1 AND status = 'ok' "
        "ORDER BY value, number LIMIT 50")
cases = [  # name, flagtune's arguments, the floor's query
    ("sweeps", ["sweeps"], "SELECT * FROM sweep_summary ORDER BY id"),
    ("sweeps --json", ["sweeps", "--json"], "SELECT * FROM sweep_summary ORDER BY id"),
    ("best", ["best"], "SELECT * FROM best"),
    ("show 1", ["show", "1"], page),
    ("show 1 --json", ["show", "1", "--json"], page),
    ("show 3", ["show", "3"], page.replace("sweep_id = 1", "sweep_id = 3")),
    ("export 1", ["export", "1"], "SELECT * FROM best"),
    ("report 1", ["report", "1"], page),
    ("compare 1 3", ["compare", "1", "3"], page),
    ("query count(*)", ["query", "SELECT count(*) FROM trials"], "SELECT count(*) FROM trials"),
]
print("| command | flagtune, no stats | flagtune, ANALYZE | sqlite3, no stats | sqlite3, ANALYZE | ratio no stats | ratio ANALYZE |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for name, args, q in cases:
    got = [[], [], [], []]
    for _ in range(rounds):
        for i, db in enumerate((plain, stat)):
            got[i].append(ms([ft] + args + ["--db", db]))
            got[2 + i].append(ms(["sqlite3", db, q]))
    m = [statistics.median(g) for g in got]
    print("| `%s` | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx |" %
          (name, m[0], m[1], m[2], m[3], m[0] / m[2], m[1] / m[3]))
PY
    echo
  done
fi
