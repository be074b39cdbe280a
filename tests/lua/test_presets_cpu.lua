-- Tests for xla.presets.cpu{} (lua/presets.lua) through the experiment file: its space, the
-- fast_math option, its option errors, explicit entries replacing its own, no warning. Fails by raising.

local dsl = require "dsl"
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

local function load(body)
  return dsl.load("p.lua", "return experiment {\n  command = { \"sim\" },\n"
                  .. "  metric = { json = \"ms\" },\n" .. body .. "}\n")
end

local function names(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return table.concat(out, ",")
end

local function test_space()
  local x = load("  presets = xla.presets.cpu{},\n")
  eq(names(x.flags), "xla_cpu_multi_thread_eigen,xla_cpu_prefer_vector_width,"
     .. "xla_cpu_scheduler_type,xla_cpu_use_xnnpack", "four CPU flags, no fast math")
  eq(x.flags.xla_cpu_multi_thread_eigen.kind, "bool", "eigen threads")
  eq(table.concat(x.flags.xla_cpu_prefer_vector_width.values, ","), "128,256,512", "widths")
  eq(x.flags.xla_cpu_scheduler_type.values[1], "CPU_SCHEDULER_TYPE_DEFAULT", "default first")
  eq(#x.flags.xla_cpu_scheduler_type.values, 3, "three schedulers")
  eq(#x.warnings, 0, "no warnings")
  eq(x.space:render({})[1], nil, "baseline renders nothing")
end

local function test_fast_math()
  local x = load("  presets = xla.presets.cpu{ fast_math = true },\n")
  eq(x.flags.xla_cpu_enable_fast_math.kind, "bool", "fast math with fast_math = true")
  eq(#x.warnings, 0, "no warnings")
end

local function test_errors()
  local err = raises(function() load("  presets = xla.presets.cpu{ fastmath = true },\n") end)
  assert(err:find("unknown option 'fastmath'", 1, true), err)
  assert(err:find("did you mean 'fast_math'", 1, true), err)
end

-- A fixed flag leaves the search, an explicit one replaces the preset's.
local function test_explicit_wins()
  local x = load("  presets = xla.presets.cpu{},\n"
                 .. "  flags = { xla_cpu_prefer_vector_width = choice { 256, 512 } },\n"
                 .. "  fixed_flags = { xla_cpu_use_xnnpack = true },\n")
  eq(#x.flags.xla_cpu_prefer_vector_width.values, 2, "explicit replaces")
  eq(x.flags.xla_cpu_use_xnnpack, nil, "fixed leaves the search")
end

test("space", test_space)
test("fast_math", test_fast_math)
test("errors", test_errors)
test("explicit_wins", test_explicit_wins)
