#!/usr/bin/env bash
# Reliability: one owner per sweep (docs/RELIABILITY.md, "One owner per sweep").
#  1. Two `resume`s at once: one runs, the other exits 2 naming the holder (pid, host, since);
#     a third while the winner runs exits 2 as well and kills nothing; the sweep ends done
#     with its budget, no trial crashed, no UNIQUE constraint error anywhere.
#  2. A reused pid: the row names a live unrelated process (another start time): resume runs.
#  3. A live process with the recorded pid and start time but no lock (its lock file gone, or
#     a flagtune from before schema 6): exit 2; `--force` takes the sweep over.
#  4. A row running on another host: exit 2 naming it and `--force`; `--force` takes it over.
# Usage: test_rel_owner.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > own.lua <<LUA
return experiment {
  name = "own", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.004" },
  env = { REL_MARK = "$$", REL_ITER = "own" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  strategy = random {}, budget = { trials = 12, steps = 9 }, parallel = 2, seed = 4,
}
LUA
# interrupted: runs sweep 1 of own.lua and stops it with SIGINT after a few trials.
interrupted() {
  "$ft" -q run own.lua > run.out 2>&1 &
  local pid=$! i
  for ((i = 0; i < 200; i++)); do
    [ "$(sql "$FLAGTUNE_DB" 'SELECT count(*) FROM trials' 2>/dev/null || echo 0)" -ge 3 ] && break
    sleep 0.02
  done
  kill -INT $pid
  wait $pid
}
status() { val "SELECT status FROM sweeps WHERE id=1"; }
counted() {
  val "SELECT count(*) FROM trials WHERE status NOT IN ('lost', 'interrupted', 'running')"
}

# 1. Two resumes at once, then a third.
interrupted
check_eq "interrupted before the race" "$(status)" interrupted
"$ft" -q resume 1 > r1.out 2> r1.err &
p1=$!
"$ft" -q resume 1 > r2.out 2> r2.err &
p2=$!
# The third one, while the winner runs.
for ((i = 0; i < 100; i++)); do
  [ "$(status)" = running ] && break
  sleep 0.02
done
"$ft" -q resume 1 > r3.out 2> r3.err
c3=$?
wait $p1; c1=$?
wait $p2; c2=$?
echo "     resume exits: $c1 $c2 (third: $c3)"
if [ $c1 = 0 ]; then win=$p1 loser=r2.err lc=$c2; else win=$p2 loser=r1.err lc=$c1; fi
check "one resume ran (exit 0), the other exit 2 (got $c1, $c2)" \
  [ "$(echo $c1 $c2 | tr ' ' '\n' | sort | tr '\n' ' ')" = "0 2 " ]
check "the loser names the holder: pid $win" grep -q "held by another flagtune (pid $win on $(hostname)" "$loser"
check "third resume while it ran: exit 2 (got $c3)" [ $c3 = 2 ]
check "third resume names the holder" grep -q "held by another flagtune (pid $win" r3.err
check "no UNIQUE constraint error" lacks -q UNIQUE r1.err r2.err r3.err
check_eq "sweep done" "$(status)" done
check_eq "the budget's 12 trials counted" "$(counted)" 12
check_eq "no trial killed by a second resume" "$(val "SELECT count(*) FROM trials WHERE status = 'crash'")" 0
check "no process left" none_left "REL_ITER=own" 5

# 2. A reused pid: a live process that is not the orchestrator (another start time).
rm -f "$FLAGTUNE_DB"*
interrupted
sleep 60 &
other=$!
sql "$FLAGTUNE_DB" "UPDATE sweeps SET status = 'running', pid = $other WHERE id = 1"
"$ft" -q resume 1 > reuse.out 2> reuse.err
code=$?
check "reused pid: resume runs (exit $code)" [ $code = 0 ]
check_eq "reused pid: sweep done" "$(status)" done
check "reused pid: the unrelated process lives" kill -0 $other

# 3. The recorded pid and start time are a live process's, but it holds no lock.
rm -f "$FLAGTUNE_DB"*
interrupted
start=$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/$other/stat)
sql "$FLAGTUNE_DB" "UPDATE sweeps SET status = 'running', pid = $other, pid_start = $start WHERE id = 1"
"$ft" -q resume 1 > nolock.out 2> nolock.err
code=$?
check "no lock, live owner: exit 2 (got $code)" [ $code = 2 ]
has nolock.err "still running (pid $other"
has nolock.err "--force"
check_eq "no lock, live owner: row untouched" "$(val "SELECT status || pid FROM sweeps WHERE id=1")" "running$other"
"$ft" -q resume 1 --force > force.out 2> force.err
code=$?
check "--force takes it over (exit $code)" [ $code = 0 ]
check_eq "--force: done" "$(status)" done
kill $other 2>/dev/null

# 4. Running on another host: the lock there cannot be seen.
rm -f "$FLAGTUNE_DB"*
interrupted
sql "$FLAGTUNE_DB" "UPDATE sweeps SET status = 'running', host = 'far-away-host', pid = 4242 WHERE id = 1"
"$ft" -q resume 1 > host.out 2> host.err
code=$?
check "another host: exit 2 (got $code)" [ $code = 2 ]
has host.err "running on host far-away-host (pid 4242"
has host.err "flagtune resume 1 --force"
"$ft" -q resume 1 --force > hforce.out 2> hforce.err
code=$?
check "another host, --force: exit 0 (got $code)" [ $code = 0 ]
check_eq "another host, --force: done on this host" \
  "$(val "SELECT status || ',' || host FROM sweeps WHERE id=1")" "done,$(hostname)"
finish
