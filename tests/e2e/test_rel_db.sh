#!/usr/bin/env bash
# Reliability: the database under sharing and in bad places.
#  1. two sweeps write one database at once while `flagtune show` and `sqlite3 ... count(*)`
#     read it in a loop: no "database is locked" anywhere, no lost row, integrity ok
#  2. an immutable database file (chattr +i; root ignores permissions), a path under a file,
#     a missing directory, a database from a newer flagtune: a clear error, exit 2
# Usage: test_rel_db.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # name trials
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.005" },
  env = { REL_MARK = "$$", REL_ITER = "$1" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = random {}, budget = { trials = $2, steps = 30 }, parallel = 2, seed = 7,
}
LUA
}
write_exp one 24
write_exp two 24
"$ft" -q run one.lua > one.out 2> one.err &
p1=$!
"$ft" -q run two.lua > two.out 2> two.err &
p2=$!
reads=0
: > readers.err
# Readers start once both sweeps exist: a reader racing the very creation of the database
# can see it half-migrated (reported separately, see docs/RELIABILITY.md).
for ((i = 0; i < 100; i++)); do
  [ "$(sql "$FLAGTUNE_DB" 'SELECT count(*) FROM sweeps' 2>/dev/null)" = 2 ] && break
  sleep 0.05
done
while kill -0 $p1 2>/dev/null || kill -0 $p2 2>/dev/null; do
  "$ft" show 1 > /dev/null 2>> readers.err
  "$ft" sweeps --json > /dev/null 2>> readers.err
  # Like every WAL reader, the shell needs a busy timeout (lib.sh's sql gives it one): without
  # one, a read that meets a writer's checkpoint or a full set of read marks fails at once
  # (docs/SCHEMA.md).
  sql "$FLAGTUNE_DB" 'SELECT count(*) FROM trials' > /dev/null 2>> readers.err
  reads=$((reads + 3))
done
wait $p1; c1=$?
wait $p2; c2=$?
echo "     $reads reads while two sweeps wrote"
check "sweep one exit 0 (got $c1)" [ $c1 = 0 ]
check "sweep two exit 0 (got $c2)" [ $c2 = 0 ]
nolock() { lacks -qi "locked\|busy" one.err two.err readers.err; }
check "no 'database is locked' anywhere" nolock
check "readers saw no error" [ ! -s readers.err ]
[ $c1 = 0 ] && [ $c2 = 0 ] && nolock && [ ! -s readers.err ] || { echo "--- one.err"; tail -3 one.err; echo "--- two.err"; tail -3 two.err; echo "--- readers.err"; sort readers.err | uniq -c | head; }
check "no lost row: 48 trials" [ "$(val 'SELECT count(*) FROM trials')" = 48 ]
check "no lost step row" [ "$(val "SELECT count(*) FROM trials t WHERE status='ok' AND n_steps <> (SELECT count(*) FROM steps s WHERE s.trial_id=t.id)")" = 0 ]
check "both sweeps done" [ "$(val "SELECT group_concat(status) FROM sweeps")" = done,done ]
check "integrity_check ok" [ "$(sql "$FLAGTUNE_DB" 'PRAGMA integrity_check')" = ok ]

# 2. bad places. Each must exit 2 with a message naming the path, and write nothing.
expect_exit2() { # what pattern command...
  local what=$1 pat=$2; shift 2
  "$@" > bad.out 2> bad.err
  local code=$?
  check "$what: exit 2 (got $code)" [ $code = 2 ]
  check "$what: message ($(head -n1 bad.err))" grep -q -- "$pat" bad.err
}
write_exp small 3
cp "$FLAGTUNE_DB" imm.db
rm -f imm.db-wal imm.db-shm
if chattr +i imm.db 2>/dev/null; then
  expect_exit2 "immutable database" "imm.db" "$ft" -q run small.lua --db "$work/imm.db"
  check "immutable database unchanged" [ "$(sql -readonly imm.db 'SELECT count(*) FROM sweeps')" = 2 ]
  chattr -i imm.db
else
  skip "immutable database: chattr +i not supported here"
fi
touch afile
expect_exit2 "database under a file" "afile/x.db" "$ft" -q run small.lua --db "$work/afile/x.db"
expect_exit2 "missing directory" "no/such/dir" "$ft" -q run small.lua --db "$work/no/such/dir/x.db"
check "missing directory not created" [ ! -e "$work/no" ]
cp "$FLAGTUNE_DB" newer.db
sql newer.db 'PRAGMA user_version = 999'
expect_exit2 "newer database" "newer" "$ft" -q run small.lua --db "$work/newer.db"
expect_exit2 "newer database, show" "newer" "$ft" show 1 --db "$work/newer.db"
check "newer database untouched" [ "$(sql newer.db 'PRAGMA user_version')" = 999 ]
printf 'not a database at all, just text\n%.0s' {1..200} > text.db
expect_exit2 "not a database" "text.db" "$ft" -q run small.lua --db "$work/text.db"
finish
