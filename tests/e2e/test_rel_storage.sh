#!/usr/bin/env bash
# Reliability: the database changes under a running sweep (docs/RELIABILITY.md, "Storage
# faults").
#  1. Deleted: the sweep stops at its next write (not after running every trial), says so,
#     exit 1, and creates no new database at the path.
#  2. Replaced by an older copy: the sweep stops, says so, and the copy is not written to
#     (byte-identical afterwards).
#  3. Made immutable (chattr +i on the database, its -wal and -shm; skipped where chattr
#     cannot): the write fault on the mapped -shm is a message, exit 1, not a silent SIGBUS
#     (exit 135); `resume` finishes the sweep once the files are writable again.
#  4. The -wal deleted, or replaced by a copy, or the -shm deleted: the sweep stops at its next
#     write saying so and that nothing was lost, ends `interrupted`, integrity ok, and
#     `resume` finishes it. The -wal deleted and the orchestrator SIGKILLed right after
#     (REL_WAL_ROUNDS times): every trial printed `ok` is stored `ok`, integrity ok, resume ok.
#  5. Disk full (a 2 MiB tmpfs, filled while the sweep runs; skipped where tmpfs cannot be
#     mounted): the sweep stops, its row says `interrupted`, every trial printed `ok` is
#     stored `ok`, and `resume` finishes it once there is space. With the disk full before
#     `run`: exit 1 with a message, and no database file (not even an empty one) is left.
# Usage: test_rel_storage.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > slow.lua <<LUA
return experiment {
  name = "slow", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.004" },
  env = { REL_MARK = "$$", REL_ITER = "slow" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  strategy = random {}, budget = { trials = 24, steps = 9 }, seed = 2,
}
LUA
# wait_trials DB N: until N trials are recorded (or 10 s).
wait_trials() {
  local i
  for ((i = 0; i < 500; i++)); do
    [ "$(sql "$1" 'SELECT count(*) FROM trials' 2>/dev/null || echo 0)" -ge "$2" ] && return
    sleep 0.02
  done
}

# 1. Deleted.
db="$work/del.db"
t0=$(date +%s)
"$ft" run slow.lua --db "$db" > del.out 2> del.err &
pid=$!
wait_trials "$db" 3
rm -f "$db" "$db-wal" "$db-shm"
wait $pid
code=$?
secs=$(($(date +%s) - t0))
echo "     deleted: exit $code after $secs s; $(grep -c '^\[' del.err) progress lines"
check "deleted: exit 1 (got $code)" [ $code = 1 ]
has del.err "database $db was deleted while in use: stopping; nothing more is written"
check "deleted: stopped early (fewer than 10 progress lines)" [ "$(grep -c '^\[' del.err)" -lt 10 ]
check "deleted: no new database at the path" [ ! -e "$db" ]
check "no process left" none_left "REL_ITER=slow" 5

# 2. Replaced by an older copy.
db="$work/rep.db"
"$ft" run slow.lua --db "$db" > rep.out 2> rep.err &
pid=$!
wait_trials "$db" 3
sql "$db" ".backup '$work/old.db'"
sum=$(md5sum < old.db)
wait_trials "$db" 5
mv old.db "$db"
wait $pid
code=$?
check "replaced: exit 1 (got $code)" [ $code = 1 ]
has rep.err "database $db was replaced by another file while in use: stopping"
check_eq "replaced: the copy is untouched" "$(md5sum < "$db")" "$sum"
check "replaced: no -wal written beside the copy" [ ! -s "$db-wal" ]

# 3. Made immutable.
db="$work/imm.db"
"$ft" run slow.lua --db "$db" > imm.out 2> imm.err &
pid=$!
wait_trials "$db" 3
if chattr +i "$db" "$db-wal" "$db-shm" 2>/dev/null; then
  wait $pid
  code=$?
  chattr -i "$db" "$db-wal" "$db-shm"
  check "immutable: exit 1, not 135 (got $code)" [ $code = 1 ]
  has imm.err "flagtune: SIGBUS: a memory-mapped file went bad under the sweep"
  "$ft" -q resume 1 --db "$db" > imm2.out 2>&1
  code=$?
  check "immutable: resume once writable: exit 0 (got $code)" [ $code = 0 ]
  check_eq "immutable: done" "$(FLAGTUNE_DB=$db val 'SELECT status FROM sweeps')" done
else
  kill -9 $pid
  wait $pid 2>/dev/null
  skip "immutable: chattr +i not supported here"
fi

# 4. The -wal and -shm.
# printed_ok ERR: the trial numbers printed ok, sorted; stored_ok DB: those stored ok.
printed_ok() { grep -oE '\] #[0-9]+ +ok ' "$1" | grep -oE '[0-9]+' | sort -n | tr '\n' ' '; }
stored_ok() { sql "$1" "SELECT number FROM trials WHERE status = 'ok' ORDER BY number" | tr '\n' ' '; }
# not_stored PRINTED STORED: the numbers printed ok that are not stored ok. After a kill -9 the
# store may hold more than was printed (a trial committed whose line waited for its sync).
not_stored() { local t miss=""; for t in $1; do [[ " $2 " == *" $t "* ]] || miss+=" $t"; done; echo "$miss"; }
for what in wal-deleted wal-replaced shm-deleted; do
  db="$work/$what.db"
  "$ft" run slow.lua --db "$db" > "$what.out" 2> "$what.err" &
  pid=$!
  wait_trials "$db" 4
  case $what in
    wal-deleted) rm -f "$db-wal" ;;
    wal-replaced) cp "$db-wal" "$db-copy" && mv "$db-copy" "$db-wal" ;;
    shm-deleted) rm -f "$db-shm" ;;
  esac
  wait $pid
  code=$?
  side=${what%%-*}
  check "$what: exit 1 (got $code)" [ $code = 1 ]
  has "$what.err" "its -$side file was ${what#*-}"
  has "$what.err" "nothing was lost"
  check_eq "$what: sweep interrupted" "$(sql "$db" 'SELECT status FROM sweeps')" interrupted
  check_eq "$what: integrity ok" "$(sql "$db" 'PRAGMA integrity_check')" ok
  check_eq "$what: every trial printed ok is stored ok" "$(stored_ok "$db")" "$(printed_ok "$what.err")"
  "$ft" -q resume 1 --db "$db" > "$what.2.out" 2>&1
  code=$?
  check "$what: resume exit 0 (got $code)" [ $code = 0 ]
  check_eq "$what: done" "$(sql "$db" 'SELECT status FROM sweeps')" done
done
rounds=${REL_WAL_ROUNDS:-4}
lost=0
for ((r = 0; r < rounds; r++)); do
  db="$work/walkill$r.db"
  "$ft" run slow.lua --db "$db" > walkill.out 2> walkill.err &
  pid=$!
  wait_trials "$db" $((3 + r % 4))
  rm -f "$db-wal"
  kill -9 $pid
  wait $pid 2>/dev/null
  printed=$(printed_ok walkill.err)
  stored=$(stored_ok "$db")
  [ -z "$(not_stored "$printed" "$stored")" ] || { lost=$((lost + 1)); echo "     round $r: printed ok: $printed; stored ok: $stored"; }
  check_eq "wal deleted, then kill -9 ($r): integrity ok" "$(sql "$db" 'PRAGMA integrity_check')" ok
  "$ft" -q resume 1 --db "$db" > walkill.2.out 2>&1
  code=$?
  check "wal deleted, then kill -9 ($r): resume exit 0 (got $code)" [ $code = 0 ]
done
check_eq "wal deleted, then kill -9: rounds where a trial printed ok is not stored" $lost 0

# 5. Disk full.
mkdir -p small
if ! mount -t tmpfs -o size=2m tmpfs small 2>/dev/null; then
  skip "disk full: cannot mount a tmpfs here"
  finish
  exit $?
fi
trap 'umount "$work/small" 2>/dev/null; lib_cleanup' EXIT
db="$work/small/full.db"
"$ft" run slow.lua --db "$db" > full.out 2> full.err &
pid=$!
wait_trials "$db" 3
# Leave almost nothing free.
dd if=/dev/zero of=small/filler bs=4k 2>/dev/null
wait $pid
code=$?
echo "     disk full: exit $code; $(grep -cE '\] #[0-9]+ +ok ' full.err) printed ok, $(FLAGTUNE_DB=$db val "SELECT count(*) FROM trials WHERE status='ok'") stored ok"
check "disk full: the sweep stopped (exit $code, not 0)" [ $code != 0 ]
check_eq "disk full: sweep interrupted" "$(FLAGTUNE_DB=$db val 'SELECT status FROM sweeps')" interrupted
check_eq "disk full: every trial printed ok is stored ok" \
  "$(grep -cE '\] #[0-9]+ +ok ' full.err)" "$(FLAGTUNE_DB=$db val "SELECT count(*) FROM trials WHERE status='ok'")"
has full.err "full"
rm -f small/filler
"$ft" -q resume 1 --db "$db" > full2.out 2> full2.err
code=$?
check "disk full: resume with space again: exit 0 (got $code)" [ $code = 0 ]
check_eq "disk full: done" "$(FLAGTUNE_DB=$db val 'SELECT status FROM sweeps')" done
check_eq "disk full: the budget's 24 trials counted" \
  "$(FLAGTUNE_DB=$db val "SELECT count(*) FROM trials WHERE status NOT IN ('lost', 'interrupted', 'running')")" 24
check_eq "disk full: integrity ok" "$(sql "$db" 'PRAGMA integrity_check')" ok
# Full before the run: nothing is left behind, not even an empty file.
dd if=/dev/zero of=small/filler bs=4k 2>/dev/null
"$ft" run slow.lua --db small/new.db > new.out 2> new.err
code=$?
check "disk full before run: exit 1 (got $code)" [ $code = 1 ]
has new.err "cannot create database small/new.db: the disk is full"
check "disk full before run: no database left" [ ! -e small/new.db ]
check "disk full before run: no -wal left" [ ! -e small/new.db-wal ]
check "disk full before run: no -shm left" [ ! -e small/new.db-shm ]
rm -f small/filler
finish
