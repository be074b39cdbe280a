#!/usr/bin/env bash
# Logs keyed to their database (docs/RELIABILITY.md, "Logs"): two databases in one
# directory never share a log directory, FLAGTUNE_LOG_DIR keeps working (keyed too), each
# trial's stored log path holds that trial's own output, and a resume goes on writing where
# the sweep logged before (also a sweep logged in the older unkeyed layout).
# Reliability: the log is not the result (docs/RELIABILITY.md, "Logs that fail"). The log
# directory removed mid-sweep, replaced by a file mid-sweep, and (where a tmpfs can be
# mounted) a log disk that fills up: every trial still runs and ends ok, its record carries
# the log warning, the final summary counts them, the sweep ends `done` with exit 0 and no row
# is left `running`.
# Usage: test_logs.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # file name command...
  local file=$1 name=$2 cmd="" w
  shift 2
  for w in "$@"; do cmd="$cmd\"$w\", "; done
  cat > "$file" <<LUA
return experiment {
  name = "$name", model = "m", hardware = "h",
  command = { $cmd },
  env = { REL_MARK = "$$", REL_ITER = "$name" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d", "e", "f" } },
  budget = { trials = 6 }, parallel = 1, seed = 1,
}
LUA
}

# run_case NAME LOGDIR BREAK: runs a 6-trial sweep; once trial 1 has its log, runs BREAK.
run_case() {
  local name=$1 logs=$2 brk=$3 i
  export FLAGTUNE_DB="$work/$name.db" FLAGTUNE_LOG_DIR=$logs
  write_exp "$name.lua" "$name" "$stub" steps 3 100
  "$ft" run "$name.lua" > "$name.out" 2> "$name.err" &
  local pid=$!
  for ((i = 0; i < 200; i++)); do
    [ -e "$logs/$name.db/sweep-1/trial-0001.log" ] && break
    sleep 0.05
  done
  eval "$brk"
  wait $pid
  code=$?
  check_eq "$name: exit 0" "$code" 0
  check_eq "$name: sweep done" "$(val 'SELECT status FROM sweeps')" done
  check_eq "$name: 6 trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 6
  check_eq "$name: none left running" "$(val "SELECT count(*) FROM trials WHERE status='running'")" 0
  failed=$(val "SELECT count(*) FROM trials WHERE error LIKE 'flagtune: trial log not written: cannot open %'")
  check "$name: the later trials' records carry the log warning ($failed)" [ "$failed" -ge 3 ]
  has "$name.out" "logs: $failed trials without a complete log (see their error excerpt)"
  has "$name.err" "trial log not written: cannot open $logs/$name.db/sweep-1/trial-0005.log"
}

# ---- two databases in one directory, no FLAGTUNE_LOG_DIR: flagtune-logs/NAME/sweep-N each
mkdir -p two && cd two || exit 1
unset FLAGTUNE_LOG_DIR
for db in a b; do
  cat > $db.lua <<LUA
return experiment {
  name = "$db", model = "m", hardware = "h",
  command = { "/bin/sh", "-c", "echo database-$db; exec $stub steps 3 1" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c" } },
  budget = { trials = 3 }, seed = 1,
}
LUA
  "$ft" run $db.lua --db $db.db > $db.out 2> $db.err
  check_eq "database $db: exit 0" "$?" 0
done
check "a.db's logs under flagtune-logs/a.db/sweep-1" [ -s flagtune-logs/a.db/sweep-1/trial-0002.log ]
check "b.db's logs under flagtune-logs/b.db/sweep-1" [ -s flagtune-logs/b.db/sweep-1/trial-0002.log ]
check "no shared unkeyed directory" [ ! -e flagtune-logs/sweep-1 ]
for db in a b; do
  mismatched=0
  while read -r path; do
    grep -q "^database-$db\$" "$path" || mismatched=$((mismatched + 1))
  done < <(FLAGTUNE_DB=$db.db val "SELECT log_path FROM trials")
  check_eq "every log path stored in $db.db holds $db's own output" "$mismatched" 0
done
cd "$work" || exit 1

# ---- FLAGTUNE_LOG_DIR: keyed by the database's name beneath it
export FLAGTUNE_LOG_DIR=$work/shared-logs FLAGTUNE_DB=$work/c.db
cp two/a.lua c.lua
"$ft" run c.lua > c.out 2> c.err
check "FLAGTUNE_LOG_DIR/NAME/sweep-N" [ -s "$work/shared-logs/c.db/sweep-1/trial-0000.log" ]

# ---- resume goes on in the sweep's log directory, the older unkeyed layout included
cat > slow.lua <<LUA
return experiment {
  name = "slow", model = "m", hardware = "h",
  command = { "$stub", "steps", "20", "50" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d", "e", "f" } },
  budget = { trials = 6 }, seed = 1,
}
LUA
for layout in keyed legacy; do
  export FLAGTUNE_DB=$work/$layout.db FLAGTUNE_LOG_DIR=$work/$layout-logs
  "$ft" run slow.lua > $layout.out 2> $layout.err &
  pid=$!
  for ((i = 0; i < 200; i++)); do
    [ -e "$FLAGTUNE_LOG_DIR/$layout.db/sweep-1/trial-0001.log" ] && break
    sleep 0.05
  done
  kill -INT $pid
  wait $pid
  dir=$FLAGTUNE_LOG_DIR/$layout.db/sweep-1
  if [ $layout = legacy ]; then # as an older flagtune left it: no database name
    mv "$dir" "$FLAGTUNE_LOG_DIR/sweep-1" && rmdir "$FLAGTUNE_LOG_DIR/$layout.db"
    dir=$FLAGTUNE_LOG_DIR/sweep-1
  fi
  "$ft" resume 1 > $layout-r.out 2> $layout-r.err
  check_eq "$layout: resume exit 0" "$?" 0
  check "$layout: the resumed trials' logs beside the first ones" [ -s "$dir/trial-0005.log" ]
  check_eq "$layout: one log directory" "$(ls "$FLAGTUNE_LOG_DIR" | wc -l)" 1
done

# ---- a new sweep never takes an unkeyed directory (it may be another database's)
export FLAGTUNE_DB=$work/fresh.db FLAGTUNE_LOG_DIR=$work/legacy-logs
"$ft" run c.lua > fresh.out 2> fresh.err
check "a new sweep logs under its database's name" [ -s "$work/legacy-logs/fresh.db/sweep-1/trial-0000.log" ]

run_case removed "$work/logs-a" 'rm -rf "$work/logs-a"'
run_case file "$work/logs-b" 'rm -rf "$work/logs-b"; echo x > "$work/logs-b"'

# A full log disk: a 64 KiB tmpfs, trials that each print ~40 KiB before their steps.
mkdir -p "$work/tiny"
if mount -t tmpfs -o size=64k tmpfs "$work/tiny" 2> /dev/null; then
  export FLAGTUNE_DB="$work/full.db" FLAGTUNE_LOG_DIR="$work/tiny"
  write_exp full.lua full /bin/sh -c "$stub text 4000; exec $stub steps 3 10"
  "$ft" run full.lua > full.out 2> full.err
  code=$?
  check_eq "full disk: exit 0" "$code" 0
  check_eq "full disk: sweep done" "$(val 'SELECT status FROM sweeps')" done
  check_eq "full disk: 6 trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 6
  short=$(val "SELECT count(*) FROM trials WHERE error LIKE 'flagtune: trial log incomplete: writing %: No space left on device%'
               OR error LIKE 'flagtune: trial log not written: cannot open %: No space left on device%'")
  check "full disk: the records say which logs were cut short ($short)" [ "$short" -ge 4 ]
  has full.out "logs: $short trials without a complete log"
  umount "$work/tiny"
else
  skip "full disk: cannot mount a tmpfs here (not root, or no mount namespace rights)"
fi
finish
