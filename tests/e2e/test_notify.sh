#!/usr/bin/env bash
# The notify hook (docs/CLI.md, "run"): the experiment's on_done and --notify CMD run once
# the sweep ends, whatever the end (done, failed, interrupted by a signal or by the time
# budget), with the summary in their environment; a hook that fails or hangs is reported,
# bounded, and never changes the sweep's outcome or exit code.
# Usage: test_notify.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# exp FILE ON_DONE-LUA [COMMAND-LUA] [EXTRA]
exp() {
  local cmd=${3:-}
  [ -n "$cmd" ] || cmd="{ \"$stub\", \"steps\", \"3\", \"1\" }"
  cat > "$1" <<LUA
return experiment {
  name = "nt", model = "m", hardware = "h",
  command = $cmd,
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d", "e", "f" } },
  budget = { trials = 4 }, seed = 1,
  $2
  ${4:-}
}
LUA
}
dump='on_done = { "sh", "-c", "env | grep ^FLAGTUNE_ | sort > \"$OUT\"" },'

# ---- done: the summary in the environment
export OUT=$work/done.env
exp done.lua "$dump"
"$ft" run done.lua > out 2> err
check_eq "done: exit 0" "$?" 0
has done.env "FLAGTUNE_STATUS=done"
has done.env "FLAGTUNE_SWEEP_ID=1"
has done.env "FLAGTUNE_SWEEP_NAME=nt"
has done.env "FLAGTUNE_DB=$work/t.db"
has done.env "FLAGTUNE_LOG_DIR=$work/logs/t.db/sweep-1"
has done.env "FLAGTUNE_TRIALS_DONE=4"
has done.env "FLAGTUNE_TRIALS_PLANNED=4"
check "done: best and speedup given" grep -q "^FLAGTUNE_BEST_MS=1\.0000$" done.env
check "done: speedup given" grep -q "^FLAGTUNE_SPEEDUP=1\.0000$" done.env
has done.env "FLAGTUNE_SUMMARY=flagtune sweep 1 done: best 1.00 ms vs baseline 1.00 ms"
has done.env "FLAGTUNE_BEST_CONFIRMED=0"
has err "no confirmation: it takes 4 trials and runs only when the search keeps twice as many (budget.trials >= 13)"
has out "1.000x, a single run, not confirmed"
check "a single run is never given a 95 % CI" lacks -q "95% CI" out

# ---- --notify CMD through the shell, after the experiment's hook; a failed baseline
export OUT=$work/failed.env
exp failed.lua "$dump" '{ "/bin/sh", "-c", "echo Fatal: no device >&2; exit 2" }'
"$ft" run failed.lua --notify 'echo "cli: $FLAGTUNE_STATUS" > notify.txt' > out 2> err
check_eq "failed: exit 1 (the hook does not change it)" "$?" 1
has failed.env "FLAGTUNE_STATUS=failed"
has failed.env "FLAGTUNE_REASON=the baseline (trial 0) ended crash: Fatal: no device"
check "failed: no best" lacks -q "^FLAGTUNE_BEST_MS=" failed.env
has notify.txt "cli: failed"

# ---- a hook that fails: reported, the sweep's outcome stands
exp bad.lua 'on_done = { "sh", "-c", "exit 7" },'
"$ft" run bad.lua > out 2> err
check_eq "failing hook: exit 0" "$?" 0
has err "notify hook sh exited 7; the sweep's outcome stands"
check_eq "failing hook: sweep done" "$(val 'SELECT status FROM sweeps WHERE id = 3')" done
exp missing.lua 'on_done = { "no-such-notifier-xyz" },'
"$ft" run missing.lua > out 2> err
check_eq "missing hook program: exit 0" "$?" 0
has err "notify hook: cannot run no-such-notifier-xyz"

# ---- a hook that hangs: stopped at its limit, with what it started
exp hang.lua 'on_done = { "sh", "-c", "sleep 300 & sleep 300" },'
start=$(date +%s)
FLAGTUNE_NOTIFY_TIMEOUT=1 "$ft" run hang.lua > out 2> err
code=$?
took=$(($(date +%s) - start))
check_eq "hanging hook: exit 0" "$code" 0
check "hanging hook: bounded ($took s)" [ "$took" -lt 30 ]
has err "notify hook sh stopped after 1 s (its time limit)"
check "hanging hook: its processes are gone" none_left "REL_MARK=$$" 5

# ---- interrupted by a signal: the hook still runs
export OUT=$work/int.env
exp int.lua "$dump" "{ \"$stub\", \"steps\", \"100\", \"100\" }"
"$ft" run int.lua > out 2> err &
pid=$!
for ((i = 0; i < 100; i++)); do
  [ "$(val "SELECT count(*) FROM trials WHERE status = 'running'" 2> /dev/null)" = 1 ] && break
  sleep 0.1
done
kill -INT $pid
wait $pid
check_eq "interrupted: exit 130" "$?" 130
has int.env "FLAGTUNE_STATUS=interrupted"

# ---- the time budget: said so, and the hook told
export OUT=$work/time.env
exp time.lua "$dump" "{ \"$stub\", \"steps\", \"20\", \"100\" }" 'budget = { trials = 14, hours = 0.0005 }, software_probe = false,'
sed -i '/budget = { trials = 4 }, seed = 1,/s/budget = { trials = 4 }, //' time.lua
"$ft" run time.lua > out 2> err
has err "time budget reached"
has err "stopped by its time budget after"
has err "confirmation skipped: the time budget ran out before it; the best is a single run"
has time.env "FLAGTUNE_STATUS=interrupted"
has time.env "FLAGTUNE_REASON=time budget"

# ---- a rate sweep (metric.better = "higher"): the summary gives rates, not its costs as ms
export OUT=$work/rate.env
cat > rate.lua <<'LUA'
return experiment {
  name = "nt-rate", model = "m", hardware = "h",
  command = { "/bin/sh", "-c", "for i in 1 2 3 4; do echo \"step $i: 4 it/s\"; done" },
  metric = { pattern = "([%d.]+) it/s", better = "higher" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 }, seed = 1,
  on_done = { "sh", "-c", "env | grep ^FLAGTUNE_ | sort > \"$OUT\"" },
}
LUA
"$ft" run rate.lua > out 2> err
check_eq "rate: exit 0" "$?" 0
check "rate: the summary gives rates" grep -qE "^FLAGTUNE_SUMMARY=flagtune sweep [0-9]+ done: best 4.00/s vs baseline 4.00/s \\(1.000x\\), 2/2 trials$" rate.env
has rate.env "FLAGTUNE_BETTER=higher"
check "rate: FLAGTUNE_BEST_MS stays the stored cost (1000 / 4)" grep -q "^FLAGTUNE_BEST_MS=250\.0000$" rate.env
has done.env "FLAGTUNE_BETTER=lower"

# ---- on_done is checked like command
exp str.lua 'on_done = "mail me",'
"$ft" check str.lua > out 2> err
check_eq "on_done as a string: exit 2" "$?" 2
has err "str.lua:8: on_done must be an argv array"
finish
