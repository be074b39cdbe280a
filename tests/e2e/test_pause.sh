#!/usr/bin/env bash
# Reliability: the orchestrator is paused (SIGSTOP, as Ctrl-Z or a frozen container would) for
# longer than a trial's timeout while its trials finish (docs/RELIABILITY.md, "Trial time").
# The trials run on (they are in sessions of their own), finish in 1 s and are recorded `ok`
# with their own duration, not `timeout` with the pause in it; the sweep ends `done`.
# Usage: test_pause.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > pause.lua <<LUA
return experiment {
  name = "pause", model = "m", hardware = "h",
  command = { "$stub", "steps", "10", "100" },
  env = { REL_MARK = "$$", REL_ITER = "pause" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d" } },
  budget = { trials = 4 }, parallel = 2, timeout = "3s", grace = 1, seed = 1,
}
LUA
"$ft" -q run pause.lua > pause.out 2> pause.err &
pid=$!
# Pause once both first trials run (their logs exist), for 4.5 s: past the 3 s timeout.
for ((i = 0; i < 100; i++)); do
  [ -e "$work/logs/t.db/sweep-1/trial-0001.log" ] && [ -e "$work/logs/t.db/sweep-1/trial-0000.log" ] && break
  sleep 0.05
done
check "both first trials started before the pause" [ -e "$work/logs/t.db/sweep-1/trial-0001.log" ]
kill -STOP $pid
sleep 4.5
kill -CONT $pid
wait $pid
code=$?
check_eq "exit 0" "$code" 0
check_eq "sweep done" "$(val 'SELECT status FROM sweeps')" done
check_eq "no trial recorded timeout" "$(val "SELECT count(*) FROM trials WHERE status='timeout'")" 0
check_eq "all 4 trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 4
longest=$(val "SELECT max(duration_s) FROM trials")
check "recorded durations are the trials' own, not the pause (longest ${longest} s)" \
  awk -v d="$longest" 'BEGIN { exit !(d < 2.5) }'
check "no trial process left" none_left "REL_ITER=pause" 2
finish
