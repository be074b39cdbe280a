-- Tests for lua/presets.lua through the experiment file: each preset's space, composition
-- with `+` and `presets = { ... }`, conflicts, explicit entries replacing a preset's, option
-- errors. Fails by raising.

local dsl = require "dsl"
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

local function load(body)
  return dsl.load("p.lua", "return experiment {\n  command = { \"sim\" },\n"
                  .. "  metric = { json = \"ms\" },\n" .. body .. "}\n")
end

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function test_collectives()
  local x = load("  presets = xla.presets.collectives{ layer_bytes = \"436MB\" },\n")
  eq(count(x.flags), 10, "collectives flags")
  eq(count(x.vars), 1, "collectives vars")
  local ag = x.flags.xla_gpu_all_gather_combine_threshold_bytes.values
  eq(ag[1], 268435456, "AG grid starts one power of two below the layer (256 MiB)")
  eq(ag[#ag], 8589934592, "AG grid ends at 8 GiB (seed 000)")
  eq(#ag, 6, "AG grid 256 MiB .. 8 GiB")
  local ar = x.flags.xla_gpu_all_reduce_combine_threshold_bytes.values
  eq(ar[1], 16777216, "AR from 16 MiB (seed 000)")
  eq(#ar, 10, "AR 16 MiB .. 8 GiB in steps of 2")
  eq(x.flags.xla_gpu_enable_latency_hiding_scheduler.kind, "bool", "LHS searched")
  eq(x.flags.xla_gpu_enable_latency_hiding_scheduler.line, 4, "preset params carry the call line")
  eq(#x.warnings, 0, "no warnings from a preset")
  local small = load("  presets = xla.presets.collectives{ layer_bytes = 64 * 1048576, "
                     .. "grad_bytes = \"1GiB\" },\n")
  eq(#small.flags.xla_gpu_all_gather_combine_threshold_bytes.values, 5, "64 MiB .. 1 GiB")
  eq(#small.flags.xla_gpu_all_reduce_combine_threshold_bytes.values, 7, "16 MiB .. 1 GiB")
  local err = raises(function() load("  presets = xla.presets.collectives{},\n") end)
  assert(err:find("^p%.lua:4: xla%.presets%.collectives needs layer_bytes"), err)
  err = raises(function() load("  presets = xla.presets.collectives{ layer_bytes = \"4xB\" },\n") end)
  assert(err:find("^p%.lua:4: xla%.presets%.collectives: layer_bytes: cannot read"), err)
end

local function test_each_preset()
  local x = load("  presets = { xla.presets.memory{}, xla.presets.codegen{}, xla.presets.pipeline{},\n"
                 .. "    xla.presets.nccl{}, xla.presets.pgle{ runs = true } },\n")
  eq(x.vars.XLA_CLIENT_MEM_FRACTION.values[1], 0.75, "memory fraction from 0.75")
  eq(x.vars.XLA_CLIENT_MEM_FRACTION.values[5], 0.95, "memory fraction to 0.95")
  eq(x.flags.xla_gpu_memory_limit_slop_factor.kind, "choice", "slop factor")
  eq(x.flags.xla_latency_hiding_scheduler_rerun, nil, "rerun only with tpu = true")
  eq(x.flags.xla_gpu_enable_command_buffer.values[1], "", "'' disables command buffers")
  eq(#x.flags.xla_gpu_autotune_level.values, 5, "autotune 0..4")
  eq(x.flags.xla_gpu_enable_cudnn_fmha, nil, "fmha only with fmha = true")
  eq(x.flags.xla_gpu_collective_permute_decomposer_threshold.values[2], 1024, "seed 000's 1024")
  eq(x.flags.xla_gpu_enable_pipelined_p2p.kind, "bool", "pipelined p2p")
  eq(x.vars.NCCL_PROTO.values[1], "SIMPLE,LL,LL128", "NCCL_PROTO")
  eq(x.vars.NCCL_NVLS_ENABLE.values[2], "1", "NVLS as a string")
  eq(x.vars.JAX_ENABLE_PGLE.values[2], "true", "PGLE")
  eq(#x.vars.JAX_PGLE_PROFILING_RUNS.values, 4, "PGLE runs from the catalog")
  eq(x.metric.pgle_extra_skip, 4, "pgle preset turns on the PGLE skip")
  eq(#x.warnings, 0, "no warnings")
  local t = load("  presets = { xla.presets.memory{ tpu = true, legacy_names = true }, "
                 .. "xla.presets.codegen{ fmha = true }, xla.presets.pipeline{ legacy = true } },\n")
  eq(t.space:render({})[1], nil, "baseline renders nothing")
  eq(t.flags.xla_latency_hiding_scheduler_rerun.kind, "choice", "tpu rerun")
  eq(t.space.by_name.xla_latency_hiding_scheduler_rerun.target, "tpu", "rerun goes to libtpu")
  assert(t.vars.XLA_PYTHON_CLIENT_MEM_FRACTION, "legacy name")
  eq(#t.warnings, 3, "legacy flags warn: renamed fraction, fmha, async tracker")
end

local function test_composition()
  local x = load("  flags = xla.presets.nccl{}.flags + xla.presets.codegen{}.flags\n"
                 .. "    + { xla_gpu_enable_latency_hiding_scheduler = bool() },\n")
  eq(count(x.flags), 7, "paramset +")
  x = load("  presets = xla.presets.nccl{} + xla.presets.pgle{},\n")
  eq(count(x.vars), 3, "preset +")
  local err = raises(function()
    load("  presets = xla.presets.nccl{} + xla.presets.nccl{},\n")
  end)
  eq(err, "p.lua:4: 'xla_gpu_enable_nccl_user_buffers' is defined by both preset nccl and preset "
     .. "nccl: remove it from one", "conflict through +")
  err = raises(function() load("  presets = { xla.presets.pgle{}, xla.presets.pgle{} },\n") end)
  eq(err, "p.lua:4: 'JAX_ENABLE_PGLE' is defined by both preset pgle and preset pgle: remove it "
     .. "from one", "conflict in the list")
  err = raises(function()
    load("  flags = xla.presets.nccl{}.flags + { xla_gpu_enable_nccl_user_buffers = bool() },\n")
  end)
  assert(err:find("^p%.lua:4: 'xla_gpu_enable_nccl_user_buffers' is defined by both"), err)
  err = raises(function() load("  presets = { 3 },\n") end)
  eq(err, "p.lua:4: presets item 1 is not a preset: write xla.presets.NAME{ ... }", "not a preset")
  err = raises(function() load("  presets = xla.presets.nccl{ proto = 1 },\n") end)
  eq(err, "p.lua:4: xla.presets.nccl: unknown option 'proto' (options: none)", "bad option")
end

local function test_explicit_wins()
  local x = load("  presets = xla.presets.nccl{},\n"
                 .. "  flags = { xla_gpu_nccl_collective_max_nchannels = choice { 8, 16 } },\n"
                 .. "  fixed_flags = { xla_gpu_enable_nccl_user_buffers = true },\n"
                 .. "  env = { NCCL_PROTO = \"SIMPLE\" },\n")
  eq(#x.flags.xla_gpu_nccl_collective_max_nchannels.values, 2, "explicit flags replace")
  eq(x.flags.xla_gpu_enable_nccl_user_buffers, nil, "fixed removes it from the search")
  eq(x.vars.NCCL_PROTO, nil, "env removes it from the search")
  eq(x.fixed_flags.xla_gpu_enable_nccl_user_buffers, true, "fixed kept")
  eq(count(x.vars), 1, "NVLS still searched")
end

test("collectives", test_collectives)
test("each_preset", test_each_preset)
test("composition", test_composition)
test("explicit_wins", test_explicit_wins)
