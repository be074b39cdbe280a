#!/usr/bin/env bash
# Resume's one walk over the stored trials (src/sweep/sweep_resume.c): a single read of the
# sweep's rows gives the plan, the view and the strategy's history, and the rows change (the
# trials recorded running marked lost) only after it. A probe strategy (a user file) that, given
# a history, fails in new() with what it got (each trial's number and status, the size of its
# seen set, its rng's first draw) shows what a resume hands the strategy:
#  1. every trial but the baseline's, in trial order, each with its stored status: a trial
#     recorded running is given as running (a lost, an interrupted one as stored), and the
#     resume still kills what the dead orchestrator left of it and marks it lost;
#  2. the rng moves with the history (resume_seed of its size): a history one trial shorter
#     draws another first number;
#  3. the same for a keyed history (history = "seen", the stored space digest matching): the
#     seen set holds every configuration of the history;
#  4. a resume that fails before its walk (the strategy file broken) still kills the dead
#     orchestrator's process and marks its trial lost.
# Usage: test_resume_walk.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# probe LEVEL: the probe strategy keeping LEVEL of the history ("steps", "seen").
probe() {
  cat > "probe_$1.lua" <<LUA
local kit = require("kit")
local M = { history = "$1" }
M.__index = M
function M.new(space, options, history, rng)
  local self = setmetatable({ seen = kit.seen(space, history), unseen = kit.unseen(space, rng) }, M)
  if #history > 0 or self.seen.n > 0 then
    local s = {}
    for i, h in ipairs(history) do s[i] = h.number .. "=" .. h.status end
    error(string.format("probe: history %s; seen %d; draw %d", table.concat(s, ","), self.seen.n,
      rng:int(1, 1000000000)), 0)
  end
  return self
end
function M:ask(n)
  local out = {}
  while #out < n do
    local c = self.unseen:take(function(key) return self.seen:mark(key) end)
    if not c then break end
    out[#out + 1] = c
  end
  return out
end
return M
LUA
  cat > "walk_$1.lua" <<LUA
return experiment {
  name = "walk_$1", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  strategy = strategy_file("probe_$1.lua"), budget = { trials = 12, steps = 4 }, seed = 5,
  confirm = false, software_probe = false,
}
LUA
}

# orphan NUMBER: a process that passes for trial NUMBER of sweep 1 left running by a dead
# orchestrator (its own process group, the trial's marks in its environment, not this shell's
# child); its pid in $orphan.
orphan() {
  (FLAGTUNE_SWEEP=1 FLAGTUNE_TRIAL=$1 REL_MARK=$$ \
    python3 -c 'import os; os.setsid(); os.execvp("sleep", ["sleep", "60"])' > /dev/null 2>&1 &
    echo $! > orphan.pid)
  orphan=$(cat orphan.pid)
  local i
  for ((i = 0; i < 100; i++)); do
    [ "$(awk '{print $5}' "/proc/$orphan/stat" 2>/dev/null)" = "$orphan" ] && return 0
    sleep 0.05
  done
  die "the orphan of trial $1 did not start"
}
# gone PID: PID has ended (waited for a moment: the kill is asynchronous).
gone() {
  local i
  for ((i = 0; i < 50; i++)); do
    kill -0 "$1" 2> /dev/null || return 0
    sleep 0.1
  done
  return 1
}
# stored DB: the history as stored, "number=status" in trial order.
stored() {
  sql "$1" "SELECT group_concat(number || '=' || status, ',') FROM (SELECT number, status
    FROM trials WHERE sweep_id = 1 AND role NOT IN ('baseline', 'minimize') ORDER BY number)"
}
# differ A B: two numbers, not the same.
differ() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]; }
# draw FILE: the probe's first draw from a resume's output.
draw() { sed -n 's/.*probe: .*; draw \([0-9]*\).*/\1/p' "$1" | head -1; }

for level in steps seen; do
  probe $level
  FLAGTUNE_DB=$level.db "$ft" -q run walk_$level.lua > $level.out 2>&1 || die "$level: run failed"
  check_eq "$level: the run stored its 12 trials" \
    "$(sql $level.db "SELECT count(*) FROM trials WHERE sweep_id = 1")" 12
  # As a dead orchestrator leaves it: trial 4 running (its process alive), 7 lost, 9 interrupted.
  orphan 4
  sql $level.db "UPDATE trials SET status = 'running', pid = $orphan, value = NULL WHERE number = 4;
    UPDATE trials SET status = 'lost', value = NULL WHERE number = 7;
    UPDATE trials SET status = 'interrupted', value = NULL WHERE number = 9;
    UPDATE sweeps SET status = 'interrupted'"
  want=$(stored $level.db)
  configs=$(sql $level.db "SELECT count(DISTINCT config) FROM trials
    WHERE sweep_id = 1 AND role NOT IN ('baseline', 'minimize')")
  # the same sweep with trial 9 minimize's (not in the history): one trial fewer
  sql $level.db ".backup short.db"
  sql short.db "UPDATE trials SET role = 'minimize' WHERE number = 9"
  FLAGTUNE_DB=$level.db "$ft" -v resume 1 > $level.resume 2>&1
  code=$?
  check_eq "$level: the probe ends the resume (exit 2)" $code 2
  if [ $level = steps ]; then
    has $level.resume "probe: history $want; seen $configs;"
    has $level.resume "history of 11 trials: decoded (the strategy keeps more than the seen set)"
  else
    has $level.resume "probe: history ; seen $configs;"
    has $level.resume "history of 11 trials: the stored keys, not decoded (space digest matches)"
  fi
  check "$level: the dead orchestrator's process of trial 4 is killed" gone $orphan
  check_eq "$level: trial 4 marked lost after the walk" \
    "$(sql $level.db "SELECT status FROM trials WHERE number = 4")" lost
  FLAGTUNE_DB=short.db "$ft" -v resume 1 > short.resume 2>&1
  has short.resume "history of 10 trials:"
  a=$(draw $level.resume) b=$(draw short.resume)
  check "$level: the rng moves with the history (first draws $a, $b)" differ "$a" "$b"
done

# 4. A resume that fails before its walk (its strategy file broken since: no strategy made)
#    still ends the orphan.
sql steps.db "UPDATE trials SET status = 'running', pid = 0 WHERE number = 4"
orphan 6
sql steps.db "UPDATE trials SET status = 'running', pid = $orphan, value = NULL WHERE number = 6"
echo 'return {' > probe_steps.lua
FLAGTUNE_DB=steps.db "$ft" -q resume 1 > early.resume 2>&1
check_eq "a resume with a broken strategy file fails (exit 2)" $? 2
has early.resume "probe_steps.lua"
check "the failed resume killed the dead orchestrator's process of trial 6" gone $orphan
check_eq "the failed resume marked trials 4 and 6 lost" \
  "$(sql steps.db "SELECT group_concat(status) FROM trials WHERE number IN (4, 6)")" lost,lost

finish
