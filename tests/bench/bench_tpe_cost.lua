-- The cost of one tpe{} proposal (ask(1) then tell) against the number of finished trials
-- and the space's size: CPU milliseconds (os.clock) and Lua VM instructions (a count hook
-- every 1,000). Run through tests/bench/bench_tpe_cost.sh (luatest, the embedded runtime).
-- The history is replayed from a seeded synthetic sweep (20 % OOM, 5 % timeouts), so every
-- run measures the same states. Options (environment): BENCH_TRIALS="100,500,1000,2000,10000",
-- BENCH_PARAMS="10,20,30", BENCH_REPS=5, BENCH_STRATEGY=tpe, BENCH_OPTS="surrogate=0".
package.path = "tests/lua/?.lua;" .. package.path -- tap, for luatest's summary

local space = require("space")
local host = require("host")
local rng = require("rng")

local function list(env, default)
  local out = {}
  for v in (os.getenv(env) or default):gmatch("[^,]+") do out[#out + 1] = math.tointeger(v) end
  return out
end

-- D parameters cycling through the kinds experiments search, long ranges included.
local function make_space(d)
  local kinds = { { kind = "bool" }, { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                  { kind = "int", lo = 0, hi = 100 },
                  { kind = "choice", values = { "a", "b", "c", "d" } },
                  { kind = "float", lo = 0, hi = 1, step = 0.001 } }
  local flags = {}
  for i = 1, d do flags[string.format("xla_gpu_p%02d", i)] = kinds[i % #kinds + 1] end
  return space.new(flags, {}, {}, {}, "bench.lua")
end

local function outcome(r)
  local u = r:random()
  if u < 0.20 then return "oom" end
  if u < 0.25 then return "timeout" end
  return "ok", 100 + 50 * r:random()
end

local function history(sp, n, r)
  local out = {}
  for i = 1, n do
    local status, v = outcome(r)
    out[i] = { config = sp:sample(r), status = status, value = v, steps = {}, number = i }
  end
  return out
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local name = os.getenv("BENCH_STRATEGY") or "tpe"
local opts = {} -- BENCH_OPTS="surrogate=0,window=200": numeric options of the strategy
for k, v in (os.getenv("BENCH_OPTS") or ""):gmatch("([%w_]+)=([^,]+)") do opts[k] = tonumber(v) end
local reps = math.tointeger(tonumber(os.getenv("BENCH_REPS") or "5"))
print(string.format("%-8s %6s %8s %10s %12s %10s", "strategy", "params", "trials", "ms/ask",
  "instr/ask", "setup ms"))
for _, d in ipairs(list("BENCH_PARAMS", "10,20,30")) do
  local sp = make_space(d)
  for _, n in ipairs(list("BENCH_TRIALS", "100,500,1000,2000,10000")) do
    local r = rng.new(1000 + d)
    local hist = history(sp, n, r)
    local t0 = os.clock()
    local h = host.new({ path = "bench.lua", space = sp,
                         strategy = { name = name, options = opts, line = 1 },
                         budget = { trials = 2 * n + 100, hours = 0, steps = 50 } }, 7, hist)
    local setup = (os.clock() - t0) * 1000
    local ms, ins = {}, {}
    for k = 1, reps do
      local count = 0
      debug.sethook(function() count = count + 1 end, "", 1000)
      local c0 = os.clock()
      local p = h:ask(1)[1]
      local status, v = outcome(r)
      h:tell(p.json, { status = status, value = v, steps = {}, number = n + k })
      ms[k] = (os.clock() - c0) * 1000
      debug.sethook()
      ins[k] = count * 1000
    end
    print(string.format("%-8s %6d %8d %10.1f %11.2fM %10.0f", name, d, n, median(ms),
      median(ins) / 1e6, setup))
    io.stdout:flush()
  end
end
