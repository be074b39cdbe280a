-- Tests for the catalog checks in lua/dsl.lua and the catalog routing in lua/space.lua:
-- unknown flags with "did you mean", allow_unknown_flags, deprecated/renamed warnings, values
-- outside a flag's type, `auto`, TPU flags to LIBTPU_INIT_ARGS, metric.pgle_extra_skip, the
-- catalog's own shape, its public source tokens, the entries for jax 0.11 and after, and the
-- jax release ranges with check's "absent from jax X you have installed". Fails by raising.

local dsl = require "dsl"
local space = require "space"
local catalog = require "catalog"
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

-- An experiment whose body (lines 4 on) is BODY; METRIC (optional) replaces its metric.
local function exp(body, metric)
  return "return experiment {\n  command = { \"sim\" },\n  metric = "
         .. (metric or '{ json = "ms" }') .. ",\n" .. body .. "}\n"
end

local function load(body, metric) return dsl.load("x.lua", exp(body, metric)) end

local function test_unknown_flag()
  local err = raises(function()
    load("  flags = { xla_gpu_enable_latency_hidding_scheduler = bool() },\n")
  end)
  eq(err, "x.lua:4: unknown XLA flag 'xla_gpu_enable_latency_hidding_scheduler' "
     .. "(did you mean 'xla_gpu_enable_latency_hiding_scheduler'?)", "typo")
  err = raises(function() load("  fixed_flags = { xla_zzz_qqq_www = 1 },\n  vars = { A = bool() },\n") end)
  eq(err, "x.lua:4: unknown XLA flag 'xla_zzz_qqq_www': not in flagtune's catalog (see "
     .. "`flagtune flags`); if your jaxlib has it, add allow_unknown_flags = { \"xla_zzz_qqq_www\" }",
     "unknown without hint")
  local x = load("  allow_unknown_flags = { \"xla_zzz_qqq_www\" },\n"
                 .. "  flags = { xla_zzz_qqq_www = bool() },\n")
  eq(#x.warnings, 0, "allowed unknown flag: no warning")
  err = raises(function() load("  allow_unknown_flags = { \"NOT_A_FLAG\" },\n  vars = { A = bool() },\n") end)
  eq(err, "x.lua:4: allow_unknown_flags: 'NOT_A_FLAG' is not an XLA flag name (they look like "
     .. "xla_gpu_enable_...)", "allow list names")
end

local function test_warnings()
  local x = load("  flags = { xla_gpu_enable_cudnn_fmha = bool() },\n")
  eq(x.warnings[1], "x.lua:4: warning: 'xla_gpu_enable_cudnn_fmha' is deprecated: a no-op in "
     .. "recent XLA ('Deprecated, do not use')", "deprecated text")
  x = load("  flags = { xla_gpu_enable_latency_hiding_scheduler = choice { \"yes\", \"no\" } },\n")
  eq(x.warnings[1], "x.lua:4: warning: 'xla_gpu_enable_latency_hiding_scheduler' = \"yes\" is not "
     .. "a bool (true or false): XLA ignores it (\"Couldn't interpret value\")", "bool misfit")
  x = load("  flags = { xla_gpu_enable_latency_hiding_scheduler = choice { true, \"false\", 1 } },\n")
  eq(#x.warnings, 0, "true, \"false\" and 1 are bools to XLA")
  x = load("  fixed_flags = { xla_memory_scheduler = \"kFast\" },\n  vars = { A = bool() },\n")
  eq(x.warnings[1], "x.lua:4: warning: 'xla_memory_scheduler' = \"kFast\" is not one of kDefault, "
     .. "kList, kDfs, kPostOrder, kBrkga", "enum misfit")
  x = load("  flags = { xla_gpu_enable_command_buffer = choice { \"\", \"FUSION,+CUDNN\", \"FUSON\" } },\n")
  eq(#x.warnings, 1, "one list warning")
  assert(x.warnings[1]:find("\"FUSON\" is not a comma%-separated list of FUSION"), x.warnings[1])
  x = load("  flags = { xla_gpu_all_gather_combine_threshold_bytes = choice { 1.5 } },\n")
  assert(x.warnings[1]:find("is not a whole number of bytes", 1, true), x.warnings[1])
  x = load("  vars = {\n    XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.7, 0.9, 0.1),\n"
           .. "    SOMETHING_ELSE = bool(),\n  },\n")
  eq(#x.warnings, 1, "unknown env vars are fine")
  eq(x.warnings[1], "x.lua:5: warning: 'XLA_PYTHON_CLIENT_MEM_FRACTION' is renamed "
     .. "'XLA_CLIENT_MEM_FRACTION' in newer JAX", "env rename")
  x = load("  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },\n")
  eq(#x.warnings, 0, "a live flag: no warning")
end

local function test_auto()
  local x = load("  flags = { xla_gpu_enable_command_buffer = auto },\n"
                 .. "  vars = { NCCL_PROTO = auto },\n")
  local p = x.flags.xla_gpu_enable_command_buffer
  eq(p.kind, "choice", "auto is a choice")
  eq(p.line, 4, "auto line")
  eq(#p.values, 4, "command buffer candidates")
  eq(p.values[1], "", "'' disables command buffers")
  eq(#x.vars.NCCL_PROTO.values, 2, "env auto")
  eq(x.space:size(), 8.0, "space of two autos")
  local err = raises(function() load("  flags = { xla_gpu_autotune_max_solutions = auto },\n") end)
  eq(err, "x.lua:4: 'xla_gpu_autotune_max_solutions' has no candidates in the catalog for "
     .. "`auto`: search it with bool(), choice { ... }, int(lo, hi), range(lo, hi, step) or "
     .. "pow2(lo, hi)", "auto without candidates")
  err = raises(function()
    load("  fixed_flags = { xla_gpu_autotune_level = auto },\n  vars = { A = bool() },\n")
  end)
  eq(err, "x.lua:4: 'xla_gpu_autotune_level' = auto searches the catalog's candidates: move it "
     .. "to `flags`", "auto in fixed_flags")
end

local function test_routing()
  local x = load("  fixed_flags = { xla_latency_hiding_scheduler_rerun = 5, "
                 .. "xla_tpu_enable_async_all_to_all = true },\n"
                 .. "  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },\n")
  local targets = {}
  for _, s in ipairs(x.space:render({ xla_gpu_enable_latency_hiding_scheduler = true })) do
    targets[s.name] = s.target
  end
  eq(targets.xla_latency_hiding_scheduler_rerun, "tpu", "catalog backend tpu (no xla_tpu_ prefix)")
  eq(targets.xla_tpu_enable_async_all_to_all, "tpu", "prefix and catalog agree")
  eq(targets.xla_gpu_enable_latency_hiding_scheduler, "xla", "gpu flag")
  eq(space.flag_target("xla_tpu_not_in_catalog"), "tpu", "prefix fallback")
  eq(space.flag_target("xla_memory_scheduler"), "tpu", "catalog: libtpu flag")
  eq(space.flag_target("xla_dump_to"), "xla", "backend any")
end

local function test_pgle()
  local x = load("  vars = { JAX_ENABLE_PGLE = choice { \"false\", \"true\" } },\n")
  eq(x.metric.skip_pgle, true, "skip_pgle default")
  eq(x.metric.pgle_extra_skip, 4, "catalog default 3 runs + the recompile")
  x = load("  env = { JAX_ENABLE_PGLE = \"yes\", JAX_PGLE_PROFILING_RUNS = 5 },\n  vars = { A = bool() },\n")
  eq(x.metric.pgle_extra_skip, 6, "fixed runs")
  x = load("  env = { JAX_ENABLE_PGLE = \"false\" },\n  vars = { A = bool() },\n")
  eq(x.metric.pgle_extra_skip, 0, "PGLE fixed off")
  x = load("  vars = { A = bool() },\n")
  eq(x.metric.pgle_extra_skip, 0, "no PGLE")
  x = dsl.load("x.lua", "return experiment {\n  command = { \"sim\" },\n"
               .. "  metric = { json = \"ms\", skip_pgle = false },\n"
               .. "  vars = { JAX_ENABLE_PGLE = bool() },\n}\n")
  eq(x.metric.pgle_extra_skip, 0, "skip_pgle = false")
  local err = raises(function()
    dsl.load("x.lua", "return experiment {\n  command = { \"sim\" },\n"
             .. "  metric = { json = \"ms\", skip_pgle = 1 },\n  vars = { A = bool() },\n}\n")
  end)
  eq(err, "x.lua:3: 'metric.skip_pgle' must be true or false, got 1", "skip_pgle type")
end

-- The catalog's own shape: every entry the fields the checks rely on.
local function test_catalog_shape()
  local seen, types = {}, { bool = 1, int = 1, float = 1, bytes = 1, string = 1, enum = 1,
                            list = 1, path = 1 }
  for i, e in ipairs(catalog) do
    assert(type(e.name) == "string", "entry " .. i .. " has no name")
    assert(not seen[e.name], "duplicate " .. e.name)
    seen[e.name] = true
    assert(e.kind == "flag" or e.kind == "env", e.name .. ": kind")
    assert(types[e.type], e.name .. ": type " .. tostring(e.type))
    for _, c in ipairs(e.candidates or {}) do
      assert(not dsl.misfit(e, c), e.name .. ": candidate " .. tostring(c) .. " is not its type")
    end
    if e.default ~= nil and e.type ~= "list" and e.type ~= "enum" then
      assert(not dsl.misfit(e, e.default), e.name .. ": default is not its type")
    end
  end
  assert(#catalog >= 395, "catalog size")
end

-- `source` names public documents by a fixed token (lua/catalog.lua's header), never the
-- project's private seed numbers.
local SOURCES = { ["jax-toolbox"] = 1, ["jax-gpu-tips"] = 1, ["jax-toolbox-pgle"] = 1,
                  ["xla-flags-guidance"] = 1, ["llm-first-principles"] = 1, xla = 1, jax = 1 }

local function test_sources()
  for _, e in ipairs(catalog) do
    for tok in e.source:gmatch("[^,]+") do
      assert(SOURCES[tok], e.name .. ": unknown source " .. tok)
    end
    for _, k in ipairs({ "notes", "desc", "deprecated" }) do
      local t = e[k] and e[k]:lower() or ""
      assert(not t:find("seed %d") and not t:find("field notes"), e.name .. ": " .. k .. " cites "
             .. "a private document")
    end
  end
end

local function entry(name)
  for _, e in ipairs(catalog) do
    if e.name == name then return e end
  end
  error("no catalog entry " .. name)
end

-- The XLA and jax of jax 0.11 and after (each claim's upstream place is in the entry's notes).
local function test_currency()
  -- openxla/xla PR #45836: enum pipelining modes, newer than jax 0.11.0's XLA pin.
  for _, c in ipairs({ "all_gather", "all_reduce", "reduce_scatter" }) do
    local e = entry("xla_gpu_pipeline_" .. c)
    eq(e.type, "enum", c .. " type")
    eq(table.concat(e.values, ","), "default,off,on,explicit", c .. " values")
    eq(e.jax.after, "0.11.0", c .. " newer than jax 0.11.0")
    local old = entry("xla_gpu_enable_pipelined_" .. c)
    assert(old.notes:find("xla_gpu_pipeline_" .. c, 1, true), c .. ": boolean points to the enum")
    -- gpu_compiler.cc gates the pipeliner on the flag alone, not on the LHS.
    eq(old.requires, nil, c .. ": no LHS requirement")
  end
  -- jax/_src/config.py:2208 and :2222 at jax-v0.11.0; first in jax 0.5.1.
  eq(entry("JAX_OPTIMIZATION_LEVEL").default, "UNKNOWN", "opt level default")
  eq(entry("JAX_MEMORY_FITTING_LEVEL").default, "O2", "memory fitting default")
  eq(entry("JAX_OPTIMIZATION_LEVEL").jax.first, "0.5.1", "opt level since")
  -- jaxlib/xla_client.py:195 at jax-v0.11.0: the allowed allocators.
  local alloc = table.concat(entry("XLA_PYTHON_CLIENT_ALLOCATOR").values, ",")
  eq(alloc, "default,platform,bfc,cuda_async,vmm,address", "allocators")
  -- tsl's LoggingInitializer reads TF_CPP_MAX_VLOG_LEVEL; TF_CPP_MAX_LOG_LEVEL is nothing.
  eq(entry("TF_CPP_MAX_VLOG_LEVEL").kind, "env", "vlog variable")
  eq(entry("TF_CPP_MAX_LOG_LEVEL").renamed_to, "TF_CPP_MAX_VLOG_LEVEL", "log -> vlog")
  -- DefaultDebugOptionsIgnoringFlags() still sets it: a live flag.
  eq(entry("xla_gpu_enable_highest_priority_async_stream").deprecated, nil, "highest priority live")
  -- jax/_src/cache_key.py hashes XLA_FLAGS into the compilation cache key.
  assert(entry("JAX_COMPILATION_CACHE_DIR").notes:find("cache_key.py", 1, true), "cache note")
  local x = load("  vars = { TF_CPP_MAX_LOG_LEVEL = choice { 0, 1 } },\n")
  eq(x.warnings[1], "x.lua:4: warning: 'TF_CPP_MAX_LOG_LEVEL' is deprecated: XLA's logging never "
     .. "reads it (tsl's LoggingInitializer reads TF_CPP_MIN_LOG_LEVEL, TF_CPP_VMODULE and the "
     .. "VLOG level) (use 'TF_CPP_MAX_VLOG_LEVEL')", "vlog warning")
end

-- Release ranges (docs/CATALOG.md, "Release ranges"): well-formed on every entry.
local checks = require "checks"
local RANGE_KEYS = { first = 1, after = 1, last = 1, before = 1 }

local function test_release_ranges_shape()
  local n = 0
  for _, e in ipairs(catalog) do
    if e.jax ~= nil then
      n = n + 1
      assert(type(e.jax) == "table", e.name .. ": jax must be a table")
      for k, v in pairs(e.jax) do
        assert(RANGE_KEYS[k], e.name .. ": unknown jax range key " .. tostring(k))
        assert(type(v) == "string" and v:find("^%d+%.%d+[%d.]*$"), e.name .. ": jax." .. k)
      end
      assert(not (e.jax.first and e.jax.after), e.name .. ": first and after")
      assert(not (e.jax.last and e.jax.before), e.name .. ": last and before")
      local lo, hi = e.jax.first or e.jax.after, e.jax.last or e.jax.before
      if lo and hi then
        assert(checks.compare(checks.version(lo), checks.version(hi)) <= 0, e.name .. ": range")
      end
    end
  end
  -- tools/catalog_gen.py over jax's release tags: jax_enable_pgle is in jax/_src/config.py
  -- from jax-v0.4.29 (line 1231), not at jax-v0.4.28.
  eq(entry("JAX_ENABLE_PGLE").jax.first, "0.4.29", "JAX_ENABLE_PGLE from jax 0.4.29")
  -- openxla/xla issue #44228: jaxlib 0.10.1 refuses it as an unknown flag.
  eq(entry("xla_gpu_enable_pipelined_collectives").jax.before, "0.10.1", "pipelined_collectives")
  assert(n >= 10, "ranges: " .. n)
end

local function test_versions()
  local v = checks.version
  eq(table.concat(v("0.4.36.dev20241122"), "."), "0.4.36", "dev build")
  eq(table.concat(v("0.5.0+cuda12"), "."), "0.5.0", "local build")
  eq(v("garbage"), nil, "not a version")
  eq(checks.compare(v("0.9.0.1"), v("0.9.0")), 1, "0.9.0.1 > 0.9.0")
  eq(checks.compare(v("0.10.0"), v("0.9.2")), 1, "numeric, not lexical")
  eq(checks.compare(v("0.5"), v("0.5.0")), 0, "missing parts are 0")
  local e = { jax = { first = "0.5.1", before = "0.10.1" } }
  eq(checks.absent_from(e, v("0.5.0")), "it first appears in jax 0.5.1", "before first")
  eq(checks.absent_from(e, v("0.5.1")), nil, "first is in")
  eq(checks.absent_from(e, v("0.10.0")), nil, "before before")
  eq(checks.absent_from(e, v("0.10.1")), "jax 0.10.1 no longer has it", "at before")
  e = { jax = { after = "0.11.0", last = "0.12.0" } }
  eq(checks.absent_from(e, v("0.11.0")), "it is newer than jax 0.11.0", "at after")
  eq(checks.absent_from(e, v("0.12.0")), nil, "last is in")
  eq(checks.absent_from(e, v("0.12.1")), "jax 0.12.0 is the last release with it", "past last")
  eq(checks.absent_from({}, v("0.1")), nil, "no range")
end

-- check's warning: flags against the installed jaxlib, variables against jax, at their lines.
local function test_release_warnings()
  local x = load("  fixed_flags = { xla_gpu_pipeline_all_gather = \"on\" },\n"
                 .. "  vars = { JAX_OPTIMIZATION_LEVEL = choice { \"UNKNOWN\", \"O1\" } },\n"
                 .. "  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },\n")
  eq(#x.warnings, 0, "no warning before the probe")
  eq(checks.has_ranges(x), true, "two names with ranges")
  checks.release_warnings(x, "x.lua", "0.5.0", "0.11.0")
  local probed = table.concat(require("catindex").PROBED_JAXLIB, ", ")
  eq(x.warnings[1], "x.lua:4: warning: the flag catalog was probed on jaxlib " .. probed .. "; you "
     .. "have jaxlib 0.11.0, whose flags and defaults may differ (`flagtune flags probe "
     .. "--catalog` asks it)", "another jaxlib than the catalog was probed on")
  eq(x.warnings[2], "x.lua:4: warning: 'xla_gpu_pipeline_all_gather' is absent from jaxlib "
     .. "0.11.0 you have installed (it is newer than jax 0.11.0)", "flag vs jaxlib")
  eq(x.warnings[3], "x.lua:5: warning: 'JAX_OPTIMIZATION_LEVEL' is absent from jax 0.5.0 you "
     .. "have installed (it first appears in jax 0.5.1)", "variable vs jax")
  x = load("  fixed_flags = { xla_gpu_pipeline_all_gather = \"on\" },\n"
           .. "  vars = { JAX_OPTIMIZATION_LEVEL = choice { \"UNKNOWN\", \"O1\" } },\n")
  checks.release_warnings(x, "x.lua", "0.12.0.1", "0.12.0.1")
  eq(#x.warnings, 0, "the probed jaxlib has both: nothing said")
  checks.release_warnings(x, "x.lua", nil, nil)
  eq(#x.warnings, 0, "nothing probed: nothing said")
  x = load("  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },\n")
  eq(checks.has_ranges(x), false, "no ranged name: no probe")
end

-- `auto` draws the catalog's candidates, so the catalog never offers what a preset withholds
-- for safety (docs/PRESETS.md, "The NCCL safety rule"): no protocol list with LL128 or without
-- SIMPLE, no forced NVLS, nothing NCCL reads as "unset"; and a name that trades accuracy for
-- speed is refused without metric.check, whoever searches it.
local function test_auto_is_safe()
  local by_name = require("catindex").get().by_name
  for _, v in ipairs(by_name.NCCL_PROTO.candidates) do
    assert(v:find("SIMPLE", 1, true) and not v:find("LL128", 1, true), "NCCL_PROTO " .. v)
  end
  for _, v in ipairs(by_name.NCCL_NVLS_ENABLE.candidates) do
    assert(v ~= 1, "NCCL_NVLS_ENABLE=1 forces NVLS")
  end
  assert(by_name.NCCL_NVLS_ENABLE.recommended ~= 1, "NVLS=1 is not recommended")
  eq(by_name.JAX_DEFAULT_MATMUL_PRECISION.candidates, nil, "no auto for the matmul precision")
  local err = raises(function()
    load("  flags = { xla_gpu_enable_fast_min_max = bool() },\n")
  end)
  assert(err:find("^x%.lua:4: 'xla_gpu_enable_fast_min_max' trades accuracy for speed: searching "
                  .. "it needs the correctness guard, metric%.check"), err)
  local ok = load("  flags = { xla_gpu_enable_fast_min_max = bool() },\n",
                  '{ json = "ms", check = { json = "loss" } }')
  eq(ok.flags.xla_gpu_enable_fast_min_max.kind, "bool", "with the guard")
  local fixed = load("  fixed_flags = { xla_allow_excess_precision = false },\n"
                     .. "  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },\n")
  eq(fixed.fixed_flags.xla_allow_excess_precision, false, "fixing one is not searching it")
end

test("unknown_flag", test_unknown_flag)
test("auto_is_safe", test_auto_is_safe)
test("warnings", test_warnings)
test("auto", test_auto)
test("routing", test_routing)
test("pgle", test_pgle)
test("catalog_shape", test_catalog_shape)
test("sources", test_sources)
test("currency", test_currency)
test("release_ranges_shape", test_release_ranges_shape)
test("versions", test_versions)
test("release_warnings", test_release_warnings)
