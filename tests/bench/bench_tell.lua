-- The cost of telling a strategy a finished trial (lua/host_feedback.lua's Host:tell), in
-- process: random{} over N_PARAMS searched parameters, N trials asked one at a time and told
-- with the canonical JSON C hands back; once as a sweep tells them (the configuration found
-- among those asked, Host.pending) and once with that table emptied before each tell, so that
-- every tell decodes the JSON, as the baseline, re-runs and resumed history do. Prints
-- microseconds per tell (os.clock, CPU) for both, the median of RUNS.
--   N=2000 N_PARAMS=8 RUNS=5 build/tests/luatest tests/bench/bench_tell.lua
package.path = "tests/lua/?.lua;" .. package.path
local space = require("space")
local host = require("host")
local N = tonumber(os.getenv("N") or "2000")
local N_PARAMS = tonumber(os.getenv("N_PARAMS") or "8")
local RUNS = tonumber(os.getenv("RUNS") or "5")

local flags = {}
for i = 1, N_PARAMS do
  flags["xla_gpu_p" .. i] = i % 2 == 0 and { kind = "bool" }
    or { kind = "pow2", lo = 1 << 10, hi = 1 << 40 }
end
local sp = space.new(flags, {}, {}, {}, "exp.lua")

local function one(decode)
  local h = host.new({ path = "exp.lua", space = sp,
                       strategy = { name = "random", options = {}, line = 1 },
                       budget = { trials = N, hours = 0, steps = 0 } }, 1, {})
  local result = { status = "ok", value = 10, steps = { 10, 10, 10 }, steps_budget = 0 }
  local spent, told = 0, 0
  for i = 1, N do
    local p = h:ask(1)[1]
    if not p then break end
    local json = p.json .. "" -- a string of its own, as lua_pushstring makes from C's copy
    if decode then h.pending = {} end
    result.number = i
    local t0 = os.clock()
    h:tell(json, result)
    spent, told = spent + (os.clock() - t0), told + 1
  end
  assert(told == N, "the space ran out of configurations: raise N_PARAMS")
  return spent / told * 1e6
end

local function median(f)
  local xs = {}
  for r = 1, RUNS do xs[r] = f() end
  table.sort(xs)
  return xs[(RUNS + 1) // 2]
end
print(string.format("tell, found among the asked: %.2f us", median(function() return one(false) end)))
print(string.format("tell, decoding its JSON:     %.2f us", median(function() return one(true) end)))
print(string.format("(%d tells of %d parameters, median of %d runs)", N, N_PARAMS, RUNS))
