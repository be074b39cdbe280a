-- Modules a check need not load (docs/COST.md "Start-up"): lua/presets.lua is loaded only
-- by an experiment that reads `xla.presets` or names `presets`; one without presets never
-- loads it, and still sees `xla.presets` (read or iterated) as before. The same for the
-- strategy and executor constructors (lua/dsl_strategy.lua) and the optional sections'
-- checks (lua/validate_sections.lua): loaded by a file that uses them, with the same
-- results and the same path:line errors. Fails by raising.

local LAZY = { "presets", "dsl_strategy", "validate_sections" }
local FT_MODELS = rawget(ft, "parzen_kernels") -- read before any case can make it
for _, m in ipairs(LAZY) do assert(not package.loaded[m], m .. " is not loaded yet") end
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
  for _, m in ipairs(LAZY) do assert(not package.loaded[m], "a plain check does not load " .. m) end
end

-- Each constructor, first called in a file of its own, loads lua/dsl_strategy.lua and still
-- reports the file's line (a tail call leaves no frame between the file and here()).
local function test_strategy_constructors_lazily()
  local x = dsl.load("s.lua", exp("  flags = { xla_gpu_autotune_level = int(0, 4) },\n"
    .. "  strategy = tpe { startup = 4, nested = { a = { 1, 2 } } },\n"))
  eq(x.strategy.desc, "tpe{nested={a={1,2}},startup=4}", "the strategy's display form")
  eq(x.strategy.line, 5, "the strategy's line")
  assert(package.loaded.dsl_strategy, "loaded once a strategy is named")
  local err = raises(function()
    dsl.load("s.lua", "local t = {}\nt.t = t\n" .. exp("  strategy = random(t),\n"))
  end)
  eq(err, "s.lua:6: random{} options: 't' holds itself (a cycle); options must be plain data",
     "an option error at the constructor's line")
  err = raises(function() dsl.load("s.lua", exp("  executor = slurm({}, 2),\n")) end)
  eq(err, "s.lua:4: slurm takes one table of options: slurm{ ... }", "slurm's error")
  err = raises(function()
    dsl.load("s.lua", "local ok, e = pcall(grid, 1, 2)\nassert(not ok)\nerror(e, 0)\n")
  end)
  eq(err, "s.lua:1: grid takes one table of options: grid{ ... }", "through pcall, the file's line")
end

-- metric.check, pgle and executor load lua/validate_sections.lua only when set.
local function test_optional_sections_lazily()
  local x = dsl.load("o.lua", exp("  flags = { xla_gpu_autotune_level = int(0, 4) },\n"
    .. "  executor = \"local\", pgle = false,\n"))
  eq(x.executor.kind, "local", "local executor")
  eq(x.pgle, nil, "no pgle")
  assert(not package.loaded.validate_sections, "nothing optional set: not loaded")
  local err = raises(function()
    dsl.load("o.lua", "return experiment {\n  command = { \"sim\" },\n"
      .. "  flags = { xla_gpu_autotune_level = int(0, 4) },\n"
      .. "  metric = { json = \"ms\",\n    check = { json = \"loss\", tolerance = 0 } },\n}\n")
  end)
  eq(err, "o.lua:5: metric.check needs a tolerance above 0 (relative) or abs above 0: no two "
     .. "runs compute bit-identical losses", "metric.check's error, at its line")
  assert(package.loaded.validate_sections, "loaded by metric.check")
  x = dsl.load("o.lua", exp("  flags = { xla_gpu_autotune_level = int(0, 4) },\n"
    .. "  executor = \"slurm\",\n  pgle = { mode = \"manual\", steps = 3 },\n"))
  eq(x.executor.kind, "slurm", "slurm executor")
  eq(x.executor.mode, "allocation", "its default mode")
  eq(x.pgle.steps, 3, "pgle steps")
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
-- tpe's C helpers are made at the first read of one (src/luahost/lhost.c), and then ft is a plain
-- table holding all three.
local function test_ft_models_lazily()
  eq(FT_MODELS, nil, "not made by a start")
  eq(ft.no_such_helper, nil, "another key is still nil")
  eq(ft[1], nil, "and a number key")
  eq(rawget(ft, "ridge_new"), nil, "still not made")
  eq(type(ft.parzen_points), "function", "made when read")
  eq(getmetatable(ft), nil, "ft is a plain table again")
  eq(type(rawget(ft, "ridge_new")), "function", "ridge_new made with it")
  eq(type(rawget(ft, "parzen_kernels")), "function", "parzen_kernels made with it")
  eq(ft.parzen_points(1):count(), 0, "and it works")
end

test("strategy and executor constructors load when first called", test_strategy_constructors_lazily)
test("metric.check, pgle and executor checks load when set", test_optional_sections_lazily)
test("ft's tpe helpers are made at the first read", test_ft_models_lazily)
