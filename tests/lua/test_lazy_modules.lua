-- Modules a check need not load (docs/COST.md "Start-up"): lua/presets.lua is loaded only
-- by an experiment that reads `xla.presets` or names `presets`; one without presets never
-- loads it, and still sees `xla.presets` (read or iterated) as before. Fails by raising.

assert(not package.loaded.presets, "presets is not loaded yet")
local dsl = require "dsl"
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

local function exp(body)
  return "return experiment {\n  command = { \"sim\" },\n  metric = { json = \"ms\" },\n"
         .. body .. "}\n"
end

local function test_no_presets_no_module()
  assert(not package.loaded.presets, "dsl loads no presets")
  local x = dsl.load("x.lua", exp("  flags = { xla_gpu_autotune_level = int(0, 4) },\n"
    .. "  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 } },\n"))
  eq(x.space:size(), 10, "the space")
  assert(not package.loaded.presets, "a check without presets does not load lua/presets.lua")
  local err = raises(function() dsl.load("x.lua", exp("  flags = 7,\n")) end)
  assert(err:find("^x.lua:4: "), "a shape error still located: " .. err)
  assert(not package.loaded.presets, "nor does a failed one")
end

local function test_xla_presets_as_before()
  -- iterated before it is read: pairs(xla) still lists presets (then it is loaded)
  local x = dsl.load("x.lua", "local k0 = {}\nfor k in pairs(xla) do k0[#k0 + 1] = k end\n"
    .. "local n = 0\nfor _ in pairs(xla.presets) do n = n + 1 end\n"
    .. exp("  name = table.concat(k0, ',') .. ':' .. tostring(n > 5),\n"
    .. "  flags = { xla_gpu_autotune_level = int(0, 4) },\n"))
  eq(x.name, "presets:true", "xla's keys, and the presets it lists")
  assert(package.loaded.presets, "loaded once read")
  eq(dsl.load("x.lua", "assert(xla.nothing == nil, 'no other key')\n"
    .. exp("  flags = { xla_gpu_autotune_level = int(0, 4) },\n")).name, "x", "xla has no other key")
  local p = dsl.load("p.lua", exp("  presets = xla.presets.nccl{},\n"))
  assert(p.space:size() > 1, "a preset's space")
end

test("an experiment without presets loads no lua/presets.lua", test_no_presets_no_module)
test("xla.presets read, iterated and used as before", test_xla_presets_as_before)
