#!/usr/bin/env bash
# Reliability: a strategy's ask() stuck in C (a Lua pattern that backtracks for hours, which
# no instruction budget can stop) in the middle of a sweep. The first SIGINT reaches the
# sweep's handler (which can only act once the call returns); the second must end the
# process at once, by SIGINT (exit 130), taking the running trials with it. A case folder
# cannot send signals, hence this script.
# Usage: test_rel_lua.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
cat > s.lua <<'LUA'
local M = {}
function M.new(space, options, history, rng) return setmetatable({ n = 0 }, { __index = M }) end
function M:ask(n)
  self.n = self.n + 1
  if self.n == 1 then return { { V = "a" } } end
  return { string.find(string.rep("a", 60), string.rep("a*", 60) .. "b") }
end
function M:tell() end
return M
LUA
cat > stuck.lua <<LUA
return experiment {
  name = "stuck", model = "m", hardware = "h",
  command = { "$sim", "--steps", "5", "--time-scale", "0" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d" } },
  strategy = strategy_file("s.lua"),
}
LUA
# A background job of a script starts with SIGINT ignored; undo that as a terminal would.
env --default-signal=INT,TERM "$ft" -q run stuck.lua > run.out 2>&1 &
pid=$!
# Wait for the second ask (after the baseline and trial 1 have been recorded).
for ((i = 0; i < 100; i++)); do
  [ "$(val "SELECT count(*) FROM trials WHERE status = 'ok'" 2> /dev/null)" = 2 ] && break
  sleep 0.1
done
sleep 0.5
kill -INT "$pid"
sleep 0.5
check "first SIGINT: still running (the sweep acts when the call returns)" kill -0 "$pid"
kill -INT "$pid"
start=$(date +%s%N)
for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2> /dev/null; then
  fail "second SIGINT: process still alive after 5 s"
  kill -KILL "$pid"
fi
wait "$pid"
code=$?
echo "     second SIGINT: exit $code after $((($(date +%s%N) - start) / 1000000)) ms"
check "second SIGINT: ended by SIGINT (exit 130)" [ "$code" = 130 ]
check "no trial process left" none_left "REL_MARK=$$" 3

# Quadratic string building: few instructions, each a long copy. The bytes a call allocates
# in all (4 times the memory cap) and its wall time ($FLAGTUNE_LUA_SECONDS) stop it, with
# the file's line, in an experiment file and in a strategy file's new().
cat > concat.lua <<'LUA'
local s = ""
for i = 1, 1e7 do s = s .. "x" end
return experiment {
  command = { "sh", "-c", "true" }, metric = { json = "t" }, vars = { A = choice { "1", "2" } },
}
LUA
start=$(date +%s%N)
FLAGTUNE_LUA_MEMORY_MB=64 "$ft" check concat.lua > /dev/null 2> concat.err
check_eq "s = s .. 'x' 1e7 times: exit 2" "$?" 2
echo "     stopped after $((($(date +%s%N) - start) / 1000000)) ms"
has concat.err "concat.lua:2: the call allocated more than 256 MiB in all (a string built piece by piece with \`..\` is copied each time"
cat > slow.lua <<'LUA'
local t = {}
for i = 1, 300 do t[i] = ("y"):rep(1 << 20) end
local s = table.concat(t)
for i = 1, 1e6 do local u = s:sub(2) end
return experiment {
  command = { "sh", "-c", "true" }, metric = { json = "t" }, vars = { A = choice { "1", "2" } },
}
LUA
FLAGTUNE_LUA_SECONDS=1 "$ft" check slow.lua > /dev/null 2> slow.err
check_eq "a call past FLAGTUNE_LUA_SECONDS: exit 2" "$?" 2
has slow.err "the call ran past its time limit of 1 s"
finish
