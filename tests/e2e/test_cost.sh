#!/usr/bin/env bash
# End-to-end: what a trial costs in wall time (store/0016_cost.sql, docs/SCHEMA.md): the time
# from the measured run's start to its first step line (first_step_ms), the steady wall time
# between step lines (step_ms) and compile_ms, stored for every trial, NULL for one that
# ended before a first step; `show` prints them (COMPILE_S, the "cost:" line) and `show
# --json` carries them. The stub sleeps 0.5 s before its first step and 40 ms between steps,
# so the stored times have lower bounds that hold on any machine (no upper bound is timed;
# a step line read late shortens the next interval, so the step bound is 30 ms).
# Usage: test_cost.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > cost.lua <<LUA
return experiment {
  name = "cost", model = "m", hardware = "h",
  command = { "$stub", "sleep", "0.5", "steps", "6", "40" },
  metric = { json = "step_time_ms", skip = 1 },
  vars = { V = int(1, 3, 1) },
  budget = { trials = 3 }, seed = 1, software_probe = false,
}
LUA
"$ft" -q run cost.lua > run.out 2>&1 || die "the sweep failed: $(cat run.out)"
check_eq "schema 16" "$(sql "$FLAGTUNE_DB" 'PRAGMA user_version' | awk '$1 >= 16 { print "ok" }')" ok
"$ft" query "SELECT number, first_step_ms, step_ms, compile_ms FROM trial_results"
check_eq "every trial has its cost" \
  "$(val "SELECT count(*) FROM trial_results WHERE first_step_ms >= 500 AND step_ms >= 30
          AND compile_ms >= 0 AND compile_ms <= first_step_ms")" 3
check_eq "first_step_ms within the trial's duration" \
  "$(val "SELECT count(*) FROM trials WHERE first_step_ms <= duration_s * 1000")" 3
has run.out 'cost: '
"$ft" show 1 > show.out
has show.out 'COMPILE_S'
has show.out 'a trial costs '
check "show: a trial's compile column reads 0.5 s or more" \
  awk '$1 == "0" && $2 == "baseline" { exit !($7 >= 0.5) }' show.out
"$ft" show 1 --json > show.json
check_eq "show --json: cost.trials" \
  "$(python3 -c 'import json,sys; print(json.load(open("show.json"))["cost"]["trials"])')" 3
check "show --json: first_step_ms on each trial" python3 -c '
import json; t = json.load(open("show.json"))["trials"]
assert len(t) == 3 and all(x["first_step_ms"] >= 500 and x["step_ms"] >= 30 for x in t)'

# A trial that ends before its first step (an out-of-memory while compiling) has no cost
# columns, and the summary counts it apart.
cat > oom.lua <<LUA
return experiment {
  name = "oom", model = "m", hardware = "h",
  command = { "$stub", "oom" },
  metric = { json = "step_time_ms" },
  vars = { V = int(1, 3, 1) },
  budget = { trials = 2 }, seed = 1, software_probe = false,
}
LUA
"$ft" -q run oom.lua > /dev/null 2>&1
check_eq "no first step: NULL cost columns" \
  "$(val "SELECT count(*) > 0 AND count(*) = count(CASE WHEN status = 'oom' AND
          first_step_ms IS NULL AND step_ms IS NULL THEN 1 END) AS x FROM trials
          WHERE sweep_id = 2")" 1
"$ft" show 2 > show2.out
has show2.out 'ended before a first step'
finish
