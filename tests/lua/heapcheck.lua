-- Shared by the memory tests (test_seen, test_tpe): a 14-parameter space named as long as
-- real XLA flags, so that each configuration's canonical JSON is about 500 bytes, and the
-- live Lua heap a trial costs a host that asks and tells.
local space = require("space")

local M = {}

function M.long_space()
  local flags = {}
  for i = 1, 9 do flags[string.format("xla_gpu_enable_a_rather_long_flag_name_%02d", i)] = { kind = "bool" } end
  local vars = { BENCH_A = { kind = "int", lo = 0, hi = 4096 }, BENCH_B = { kind = "int", lo = 0, hi = 4096 },
                 BENCH_C = { kind = "int", lo = 0, hi = 4096 }, BENCH_D = { kind = "int", lo = 50, hi = 100 },
                 BENCH_E = { kind = "choice", values = { "a", "b", "c" } } }
  return space.new(flags, vars, {}, {}, "exp.lua")
end

-- Asks and tells H trials 1..WARM, then WARM+1..TO (trial I gets VALUE(I) and STEPS); the live
-- heap's growth per trial over the second stretch, after full collections. SETTLE (optional)
-- runs before each collection: it drops a bounded cache (tpe{}'s unpacked vectors), whose
-- fill at either end would otherwise count as growth.
function M.bytes_per_trial(h, warm, to, value, steps, settle)
  local function run(from, upto)
    for i = from, upto do
      local p = h:ask(1)[1]
      h:tell(p.json, { status = "ok", value = value(i), steps = steps, number = i })
    end
    if settle then settle() end
    collectgarbage("collect")
    return collectgarbage("count") * 1024
  end
  local at_warm = run(1, warm)
  return (run(warm + 1, to) - at_warm) / (to - warm)
end

return M
