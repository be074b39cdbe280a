-- The catalog loaded entry by entry (lua/catindex.lua over the split tools/embed.c makes):
-- a check loads only the entries its experiment names (plus the few the DSL itself looks
-- up), "did you mean" and the TPU routing still see every flag, and every entry loaded on
-- its own equals the whole file's (values and their integer/float types), in the same
-- order, with the same sorted flag names and TPU set. The catalog module must not be
-- loaded before the index is built here, or the index is made from it (the eager path
-- lua.test_catalog runs). Fails by raising.

assert(not package.loaded.catalog, "the catalog is not loaded yet")
local catindex = require "catindex"
local dsl = require "dsl"
local space = require "space"
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

local function exp(body)
  return "return experiment {\n  command = { \"sim\" },\n  metric = { json = \"ms\" },\n"
         .. body .. "}\n"
end

local function test_a_check_loads_what_it_names()
  local idx = catindex.get()
  assert(idx.lazy, "the index is the split one")
  eq(catindex.loaded(), 0, "nothing loaded before the first lookup")
  local x = dsl.load("x.lua", exp("  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),\n"
    .. "    xla_gpu_autotune_level = auto },\n"
    .. "  fixed_flags = { xla_latency_hiding_scheduler_rerun = 5 },\n"))
  assert(x.space, "an experiment")
  local n = catindex.loaded()
  assert(n >= 3 and n <= 12, "entries loaded by a 3-flag check: " .. n)
  assert(not package.loaded.catalog, "the whole catalog never loaded")
  -- auto: the catalog's candidates for the level, read from its lazily loaded entry
  eq(#x.space.by_name.xla_gpu_autotune_level.values > 1, true, "auto's candidates")
  local targets = {}
  for _, s in ipairs(x.space:render({ xla_gpu_enable_latency_hiding_scheduler = true,
                                      xla_gpu_autotune_level = 4 })) do
    targets[s.name] = s.target
  end
  eq(targets.xla_latency_hiding_scheduler_rerun, "tpu", "a catalog TPU flag routed")
  eq(space.flag_target("xla_memory_scheduler"), "tpu", "the TPU set needs no entry loaded")
  local err = raises(function()
    dsl.load("x.lua", exp("  flags = { xla_gpu_enable_latency_hidding_scheduler = bool() },\n"))
  end)
  eq(err, "x.lua:4: unknown XLA flag 'xla_gpu_enable_latency_hidding_scheduler' "
     .. "(did you mean 'xla_gpu_enable_latency_hiding_scheduler'?)", "did you mean, lazily")
  eq(idx.by_name.no_such_flag_anywhere, nil, "an unknown name")
  eq(idx.by_name[42], nil, "not a name")
end

local function same(a, b, where)
  eq(type(a), type(b), where .. ": type")
  eq(math.type(a), math.type(b), where .. ": number type")
  if type(a) ~= "table" then
    eq(a, b, where)
    return
  end
  for k, v in pairs(a) do same(v, b[k], where .. "." .. tostring(k)) end
  for k in pairs(b) do assert(a[k] ~= nil, where .. "." .. tostring(k) .. " missing") end
end

local function test_every_entry_equals_the_file()
  local entries = catindex.entries()
  local n = 0
  local by_name = catindex.get().by_name
  for _ in pairs(by_name) do n = n + 1 end -- pairs loads every entry
  local catalog = require "catalog"
  eq(#entries, #catalog, "as many entries")
  eq(n, #catalog, "pairs(by_name) sees every entry")
  eq(catindex.loaded(), #catalog, "each loaded once")
  local flags, tpu = {}, {}
  for i, e in ipairs(catalog) do
    same(entries[i], e, e.name)
    assert(by_name[e.name] == entries[i], e.name .. ": one table per entry")
    if e.kind == "flag" then
      flags[#flags + 1] = e.name
      if e.backend == "tpu" then tpu[e.name] = true end
    end
  end
  table.sort(flags)
  local idx = catindex.get()
  eq(table.concat(idx.flags, ","), table.concat(flags, ","), "the sorted flag names")
  same(idx.tpu, tpu, "tpu")
  -- the embedded chunks cannot be read past their file
  local ok, err = ft.load_embedded("lua/catalog.entries", 0, 1 << 30)
  eq(ok, nil, "a range past the file")
  assert(err:find("outside the embedded file"), err)
  eq(select(2, ft.load_embedded("lua/nope", 0, 1)), "no embedded file 'lua/nope'", "no file")
end

test("a check loads what it names", test_a_check_loads_what_it_names)
test("every entry equals the file's", test_every_entry_equals_the_file)
