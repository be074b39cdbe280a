#!/usr/bin/env bash
# Reliability: the orchestrator dies or is stopped at random moments of a sweep.
#  a. SIGKILL at REL_KILL_POINTS random moments (default 10; the overnight soak runs 120):
#     after each, PRAGMA integrity_check is ok, every finished trial has its value and steps,
#     `resume` finishes with the budget's number of counted trials, and no trial process of
#     that sweep is left running. Under the supervisor (flagtune __supervise), no trial process
#     outlives the dead orchestrator by more than its grace, even before `resume`.
#  b. SIGINT and SIGTERM: exit 130, trials interrupted, resumable; a second signal ends the
#     orchestrator at once even when a trial ignores SIGTERM.
# Usage: test_rel_kill.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR   (env: REL_KILL_POINTS, REL_SEED)
source "$(dirname "$0")/lib.sh"
points=${REL_KILL_POINTS:-10}
RANDOM=${REL_SEED:-$$}
budget=8

write_exp() { # file iteration
  cat > "$1" <<LUA
return experiment {
  name = "kill$2", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0.04",
              "--compile-ms", "150" },
  env = { REL_MARK = "$$", REL_ITER = "$2" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "4GiB"),
  },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = random {},
  budget = { trials = $budget, steps = 20 },
  parallel = 2, seed = $2, grace = 1,
}
LUA
}

kills=0 integrity=0 consistent=0 resumed=0 budget_met=0 no_orphans=0 early_orphans=0 early_checked=0
for ((i = 1; i <= points; i++)); do
  db="$work/k$i.db"
  write_exp "k$i.lua" "$i"
  FLAGTUNE_DB=$db "$ft" -q run "k$i.lua" > /dev/null 2>&1 &
  pid=$!
  # A random moment: from the first milliseconds (schema creation) to near the end.
  ms=$((RANDOM % 2200)); sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  kill -9 $pid 2>/dev/null && kills=$((kills + 1))
  wait $pid 2>/dev/null
  early_checked=$((early_checked + 1))
  none_left "REL_ITER=$i" 3 && early_orphans=$((early_orphans + 1))
  # No file, or a file whose schema was never committed (killed before the first commit;
  # migrations are one transaction): nothing was recorded, nothing to resume.
  [ -f "$db" ] && [ "$(sql "$db" 'PRAGMA user_version')" != 0 ] || { integrity=$((integrity + 1)); consistent=$((consistent + 1));
                    resumed=$((resumed + 1)); budget_met=$((budget_met + 1));
                    none_left "REL_ITER=$i" 5 && no_orphans=$((no_orphans + 1)); continue; }
  [ "$(sql "$db" 'PRAGMA integrity_check')" = ok ] && integrity=$((integrity + 1))
  bad_rows=$(FLAGTUNE_DB=$db val "SELECT count(*) FROM trials t WHERE (status='ok' AND (value IS NULL
    OR n_steps <> (SELECT count(*) FROM steps s WHERE s.trial_id=t.id) OR n_steps < 3))
    OR (status NOT IN ('ok','running') AND finished_at IS NULL)" 2>/dev/null)
  [ "$bad_rows" = 0 ] && consistent=$((consistent + 1))
  sid=$(FLAGTUNE_DB=$db val "SELECT id FROM sweeps" 2>/dev/null | tail -n1)
  if [ -z "$sid" ]; then # killed before the sweep row was written: nothing to resume
    resumed=$((resumed + 1)) budget_met=$((budget_met + 1))
  else
    status=$(FLAGTUNE_DB=$db val "SELECT status FROM sweeps WHERE id=$sid")
    if [ "$status" = done ]; then
      resumed=$((resumed + 1))
    else
      FLAGTUNE_DB=$db "$ft" -q resume "$sid" > /dev/null 2> "r$i.err" && resumed=$((resumed + 1)) \
        || { echo "  resume $i failed:"; cat "r$i.err"; }
    fi
    counted=$(FLAGTUNE_DB=$db val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status NOT IN ('interrupted','lost','running')")
    [ "$counted" = $budget ] && budget_met=$((budget_met + 1)) || echo "  point $i: $counted counted trials"
    [ "$(sql "$db" 'PRAGMA integrity_check')" = ok ] || integrity=$((integrity - 1))
  fi
  none_left "REL_ITER=$i" 5 && no_orphans=$((no_orphans + 1))
done
echo "kill points: $points (SIGKILL delivered $kills times); no trial process 3 s after the kill, before resume: $early_orphans/$early_checked"
check "integrity_check ok after every kill ($integrity/$points)" [ $integrity = $points ]
check "finished trials complete after every kill ($consistent/$points)" [ $consistent = $points ]
check "resume succeeded every time ($resumed/$points)" [ $resumed = $points ]
check "budget of $budget counted trials met every time ($budget_met/$points)" [ $budget_met = $points ]
check "no trial process left after resume ($no_orphans/$points)" [ $no_orphans = $points ]
check "no trial process outlives a SIGKILLed orchestrator ($early_orphans/$early_checked)" \
  [ $early_orphans = $early_checked ]

# A silent trial (a long compile: nothing written, so no SIGPIPE ends it) that also ignores
# SIGTERM: only the supervisor's death signal, TERM then KILL after grace = 1 s, ends it.
cat > silent.lua <<LUA
return experiment {
  name = "silent", model = "m", hardware = "h",
  command = { "$stub", "ignore-term", "30" },
  env = { REL_MARK = "$$", REL_ITER = "silent" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 }, grace = 1, seed = 1,
}
LUA
FLAGTUNE_DB="$work/silent.db" "$ft" -q run silent.lua > /dev/null 2>&1 &
pid=$!
sleep 0.7
kill -9 $pid
wait $pid 2>/dev/null
check "silent trial ignoring SIGTERM dies within grace + 1 s of the orchestrator" \
  none_left "REL_ITER=silent" 2

# b. graceful signals, then a second signal, then resume.
# Waits (up to 30 s) until a trial of the current database runs: the signals must land while
# trials run, not while `run` starts up (the python3 probe; slower under ASan on a loaded host).
wait_running() {
  for _ in $(seq 300); do
    n=$(val "SELECT count(*) FROM trials WHERE status = 'running'" 2> /dev/null)
    [ "${n:-0}" -ge 1 ] 2> /dev/null && return 0
    sleep 0.1
  done
  return 1
}
cat > slow.lua <<LUA
return experiment {
  name = "slow", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.02" },
  env = { REL_MARK = "$$", REL_ITER = "slow" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "4GiB") },
  strategy = random {}, budget = { trials = 6, steps = 12 }, parallel = 2, seed = 3,
}
LUA
for sig in INT TERM; do
  export FLAGTUNE_DB="$work/sig-$sig.db"
  "$ft" -q run slow.lua > /dev/null 2> "sig-$sig.err" &
  pid=$!
  wait_running
  sleep 0.3
  kill -$sig $pid
  wait $pid
  code=$?
  check "SIG$sig: exit 130 (got $code)" [ $code = 130 ]
  check "SIG$sig: sweep interrupted" [ "$(val 'SELECT status FROM sweeps')" = interrupted ]
  check "SIG$sig: running trials recorded interrupted" \
    [ "$(val "SELECT count(*) FROM trials WHERE status='interrupted'")" -ge 1 ]
  check "SIG$sig: none left running" [ "$(val "SELECT count(*) FROM trials WHERE status='running'")" = 0 ]
  check "SIG$sig: no trial process left" none_left "REL_ITER=slow" 3
  "$ft" -q resume 1 > /dev/null 2>&1
  check "SIG$sig: resume completes" [ $? = 0 ]
  check "SIG$sig: 6 counted trials" \
    [ "$(val "SELECT count(*) FROM trials WHERE status NOT IN ('interrupted','lost')")" = 6 ]
done

# A trial that ignores SIGTERM with a long grace: the first signal waits, the second kills.
export FLAGTUNE_DB="$work/double.db"
cat > stubborn.lua <<LUA
return experiment {
  name = "stubborn", model = "m", hardware = "h",
  command = { "$stub", "steps", "3", "10", "ignore-term", "60" },
  env = { REL_MARK = "$$", REL_ITER = "stubborn" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c" } },
  budget = { trials = 3 }, parallel = 1, grace = "60s", seed = 1,
}
LUA
"$ft" -q run stubborn.lua > /dev/null 2> double.err &
pid=$!
wait_running
sleep 0.3
kill -INT $pid
sleep 0.5
check "first SIGINT: still waiting for the stubborn trial" kill -0 $pid
t0=$(date +%s%N)
kill -INT $pid
wait $pid
code=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "second SIGINT: exit 130 (got $code)" [ $code = 130 ]
check "second SIGINT: ends within 2 s (${ms} ms)" [ $ms -lt 2000 ]
check "second SIGINT: trial killed, none left" none_left "REL_ITER=stubborn" 3
check "second SIGINT: trial recorded interrupted" \
  [ "$(val "SELECT status FROM trials WHERE number=0")" = interrupted ]
finish
