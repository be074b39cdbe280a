-- The Lua side of a sweep's memory, without processes: the strategy host (lua/host.lua) and a
-- strategy asked and told TRIALS times over bench_memory.sh's 14-parameter space, each trial
-- told 5 step times as a real one is. Every EVERY trials: the Lua heap after a full
-- collection (what is live) and before it (live plus garbage not yet collected), and the
-- live bytes split by where they hang: the host's seen set, each field of the strategy
-- object. Sizes of the split are estimates from Lua 5.4's layouts (a table 56 bytes, an
-- array slot 16, a hash node 24 per power-of-two slot, a string 25 + its length), shared
-- objects counted once, at the first place found.
-- Run: build/tests/luatest tests/bench/bench_memory.lua
--      (env: BENCH_STRATEGY=random BENCH_TRIALS=10000 BENCH_EVERY=1000; BENCH_GC=gen or
--      BENCH_GC=inc,PAUSE,STEPMUL switches the collector's mode first; else flagtune's own,
--      incremental with pause 150 and step multiplier 100, src/luahost/lhost.c)
package.path = "tests/lua/?.lua;" .. package.path

local space = require("space")
local host = require("host")

local name = os.getenv("BENCH_STRATEGY") or "random"
local trials = math.tointeger(tonumber(os.getenv("BENCH_TRIALS") or "10000"))
local every = math.tointeger(tonumber(os.getenv("BENCH_EVERY") or "1000"))
local gc = os.getenv("BENCH_GC")
if gc == "" then gc = nil end
if gc == "gen" then
  collectgarbage("generational")
elseif gc then
  local pause, stepmul = gc:match("^inc,(%d+),(%d+)$")
  collectgarbage("incremental", tonumber(pause), tonumber(stepmul))
end

local flags = {}
for _, f in ipairs({ "xla_gpu_enable_latency_hiding_scheduler",
                     "xla_gpu_enable_highest_priority_async_stream",
                     "xla_gpu_enable_pipelined_all_gather", "xla_gpu_enable_pipelined_all_reduce",
                     "xla_gpu_enable_pipelined_reduce_scatter",
                     "xla_gpu_enable_while_loop_double_buffering", "xla_gpu_enable_triton_gemm",
                     "xla_gpu_enable_nccl_comm_splitting" }) do
  flags[f] = { kind = "bool" }
end
flags.xla_gpu_autotune_level = { kind = "int", lo = 0, hi = 4 }
local vars = { BENCH_CHOICE = { kind = "choice", values = { "a", "b", "c" } },
               BENCH_PERCENT = { kind = "int", lo = 50, hi = 100 },
               BENCH_A = { kind = "int", lo = 0, hi = 4096 },
               BENCH_B = { kind = "int", lo = 0, hi = 4096 },
               BENCH_C = { kind = "int", lo = 0, hi = 4096 } }
local sp = space.new(flags, vars, {}, {}, "bench.lua")
local h = host.new({ path = "bench.lua", space = sp, strategy = { name = name, options = {}, line = 1 },
                     budget = { trials = trials, hours = 0, steps = 0 } }, 1, {})

local function pow2(n)
  local p = 1
  while p < n do p = p * 2 end
  return p
end

-- Estimated bytes reachable from V not yet in SEEN.
local function size(v, seen)
  local t = type(v)
  if t == "string" then
    if seen[v] then return 0 end -- equal strings counted once (short ones are one object)
    seen[v] = true
    return 25 + #v
  end
  if t ~= "table" or seen[v] then return 0 end
  seen[v] = true
  local n_arr, n_hash, total = #v, 0, 56
  for k, x in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n_arr) then n_hash = n_hash + 1 end
    total = total + size(k, seen) + size(x, seen)
  end
  return total + 16 * n_arr + (n_hash > 0 and 24 * pow2(n_hash) or 0)
end

local function kib(b) return string.format("%.0f", b / 1024) end

local fields = {}
for k in pairs(h.strategy) do fields[#fields + 1] = k end
table.sort(fields, function(a, b) return tostring(a) < tostring(b) end)

io.write(string.format("## %s{}: Lua heap (KiB) against trials told\n\n", name))
io.write("| trials | heap before a full collection | live | host.seen |")
for _, f in ipairs(fields) do io.write(" strategy." .. tostring(f) .. " |") end
io.write("\n| ---: | ---: | ---: | ---: |" .. string.rep(" ---: |", #fields) .. "\n")

local step = { 1.5, 1.5, 1.5, 1.5, 1.5 }
local prev_live, prev_n
local peak, clock = 0, 0
for i = 1, trials do
  local c0 = os.clock()
  local p = h:ask(1)[1]
  if not p then break end
  h:tell(p.json, { status = "ok", value = 1.5 + (i % 97) / 100, steps = step, number = i })
  clock = clock + os.clock() - c0
  local now = collectgarbage("count") * 1024
  if now > peak then peak = now end
  if i % every == 0 or i == trials then
    local before = collectgarbage("count") * 1024
    collectgarbage("collect")
    local live = collectgarbage("count") * 1024
    local seen = { [h.space] = true } -- the space is fixed at the start: not per trial
    io.write(string.format("| %d | %s | %s | %s |", i, kib(before), kib(live),
      kib(size(h.seen, seen))))
    for _, f in ipairs(fields) do io.write(" " .. kib(size(h.strategy[f], seen)) .. " |") end
    io.write("\n")
    if prev_live then
      io.write(string.format("|   | live growth per trial since %d: %.0f bytes |\n", prev_n,
        (live - prev_live) / (i - prev_n)))
    end
    prev_live, prev_n = live, i
    io.stdout:flush()
  end
end
-- A strategy keeping one table per configuration in `obs`: bytes per entry by field (tpe{}
-- keeps an integer id there now, its fields in the parallel arrays of the columns above).
local entries = type(h.strategy.obs) == "table" and h.strategy.obs
if entries then
  local seen, by_field, n, keys = { [h.space] = true }, {}, 0, 0
  for key, ob in pairs(entries) do
    n = n + 1
    keys = keys + size(key, seen)
    if type(ob) == "table" then
      seen[ob] = true
      by_field["(the entry's own table)"] = (by_field["(the entry's own table)"] or 0) + size(
        setmetatable({}, { __index = ob }), {}) -- its header
      local n_hash = 0
      for k, v in pairs(ob) do
        n_hash = n_hash + 1
        by_field[k] = (by_field[k] or 0) + size(v, seen)
      end
      by_field["(the entry's own table)"] = by_field["(the entry's own table)"] + 24 * pow2(n_hash)
    end
  end
  io.write(string.format("\nstrategy.obs: %d entries; bytes per entry: key string %.0f", n, keys / n))
  local names = {}
  for k in pairs(by_field) do names[#names + 1] = k end
  table.sort(names, function(a, b) return by_field[a] > by_field[b] end)
  for _, k in ipairs(names) do io.write(string.format(", %s %.0f", k, by_field[k] / n)) end
  io.write("\n")
end
io.write(string.format("\npeak Lua heap between trials: %s KiB; ask+tell CPU: %.1f ms a trial " ..
  "(collector: %s)\n", kib(peak), clock * 1000 / trials, gc or "flagtune's: incremental, pause 150"))
