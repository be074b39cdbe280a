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
  eq(ag[#ag], 8589934592, "AG grid ends at 8 GiB (JAX-Toolbox GPU guide)")
  eq(#ag, 6, "AG grid 256 MiB .. 8 GiB")
  local ar = x.flags.xla_gpu_all_reduce_combine_threshold_bytes.values
  eq(ar[1], 16777216, "AR from 16 MiB (JAX-Toolbox GPU guide)")
  eq(#ar, 10, "AR 16 MiB .. 8 GiB in steps of 2")
  -- jaxlib >= 0.7.2 on Hopper/Blackwell: the SOL estimator, on by default, runs the scheduler
  -- whatever its own flag says (openxla/xla xla/service/gpu/gpu_hlo_schedule.cc IsLHSEnabled),
  -- so the estimator is the switch that changes the program; scheduler = "lhs" for older ones.
  local sol = x.flags.xla_gpu_enable_analytical_sol_latency_estimator
  eq(sol.kind, "bool", "SOL estimator searched")
  eq(sol.line, 4, "preset params carry the call line")
  eq(x.flags.xla_gpu_enable_latency_hiding_scheduler, nil, "not the LHS flag by default")
  local old = load("  presets = xla.presets.collectives{ layer_bytes = \"436MB\", "
                   .. "scheduler = \"lhs\" },\n")
  eq(old.flags.xla_gpu_enable_latency_hiding_scheduler.kind, "bool", "lhs: LHS searched")
  eq(old.flags.xla_gpu_enable_analytical_sol_latency_estimator, nil, "lhs: no SOL")
  local err0 = raises(function()
    load("  presets = xla.presets.collectives{ layer_bytes = 1, scheduler = \"on\" },\n")
  end)
  assert(err0:find('^p%.lua:4: xla%.presets%.collectives: scheduler must be "sol"'), err0)
  eq(#x.warnings, 0, "no warnings from a preset")
  local small = load("  presets = xla.presets.collectives{ layer_bytes = 64 * 1048576, "
                     .. "grad_bytes = \"1GiB\" },\n")
  local sag = small.flags.xla_gpu_all_gather_combine_threshold_bytes.values
  eq(#sag, 6, "64 MiB .. 1 GiB, then the JAX-Toolbox guide's 8 GiB")
  eq(sag[5], 1073741824, "the grid itself ends at 1 GiB")
  eq(sag[6], 8589934592, "8 GiB appended")
  local sar = small.flags.xla_gpu_all_reduce_combine_threshold_bytes.values
  eq(#sar, 8, "16 MiB .. 1 GiB, then 8 GiB")
  eq(sar[8], 8589934592, "AR: 8 GiB appended")
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
  eq(x.flags.xla_gpu_collective_permute_decomposer_threshold.values[2], 1024, "the JAX-Toolbox GPU guide's 1024")
  eq(x.flags.xla_gpu_enable_pipelined_p2p.kind, "bool", "pipelined p2p")
  eq(table.concat(x.vars.NCCL_PROTO.values, "|"), "SIMPLE|LL,SIMPLE", "NCCL_PROTO: no LL128")
  eq(table.concat(x.vars.NCCL_NVLS_ENABLE.values, "|"), "0|2", "NVLS off or NCCL's auto (2)")
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
  eq(count(x.flags), 6, "paramset +")
  x = load("  presets = xla.presets.nccl{} + xla.presets.pgle{},\n")
  eq(count(x.vars), 4, "preset +")
  local err = raises(function()
    load("  presets = xla.presets.nccl{} + xla.presets.nccl{},\n")
  end)
  eq(err, "p.lua:4: 'xla_gpu_nccl_collective_max_nchannels' is defined by both preset nccl and "
     .. "preset nccl: remove it from one", "conflict through +")
  err = raises(function() load("  presets = { xla.presets.pgle{}, xla.presets.pgle{} },\n") end)
  eq(err, "p.lua:4: 'JAX_ENABLE_PGLE' is defined by both preset pgle and preset pgle: remove it "
     .. "from one", "conflict in the list")
  err = raises(function()
    load("  flags = xla.presets.nccl{}.flags + { xla_gpu_nccl_collective_max_nchannels = bool() },\n")
  end)
  assert(err:find("^p%.lua:4: 'xla_gpu_nccl_collective_max_nchannels' is defined by both"), err)
  err = raises(function() load("  presets = { 3 },\n") end)
  eq(err, "p.lua:4: presets item 1 is not a preset: write xla.presets.NAME{ ... }", "not a preset")
  err = raises(function() load("  presets = xla.presets.nccl{ proto = 1 },\n") end)
  eq(err, "p.lua:4: xla.presets.nccl: unknown option 'proto' (options: collective_mem_mb, ll128, "
     .. "nvls_force)", "bad option")
  err = raises(function() load("  presets = xla.presets.nccl{ ll12 = true },\n") end)
  eq(err, "p.lua:4: xla.presets.nccl: unknown option 'll12' (did you mean 'll128'? options: "
     .. "collective_mem_mb, ll128, nvls_force)", "a near miss is named")
  err = raises(function() load("  presets = xla.presets.scheduler{ x = 1 },\n") end)
  eq(err, "p.lua:4: xla.presets.scheduler: unknown option 'x' (options: none)", "no options")
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
  eq(count(x.vars), 2, "NVLS and the launch mode still searched")
end

-- NCCL safety (NVIDIA/nccl src/graph/tuning.cc: an explicit NCCL_PROTO with LL128 bypasses
-- NCCL's LL128 gating; src/transport/nvls.cc: NVLS_ENABLE defaults to 2, 1 forces it): LL128
-- and forced NVLS only on request, SIMPLE in every protocol list.
local function test_nccl_safety()
  for _, body in ipairs({ "xla.presets.nccl{}", "xla.presets.nccl{ ll128 = true }" }) do
    local x = load("  presets = " .. body .. ",\n")
    for _, v in ipairs(x.vars.NCCL_PROTO.values) do
      assert(v:find("SIMPLE", 1, true), body .. ": SIMPLE dropped in " .. v)
      if body == "xla.presets.nccl{}" then assert(not v:find("LL128", 1, true), v) end
    end
  end
  local x = load("  presets = xla.presets.nccl{ ll128 = true, nvls_force = true },\n")
  eq(x.vars.NCCL_PROTO.values[3], "LL,LL128,SIMPLE", "LL128 on request")
  eq(x.vars.NCCL_NVLS_ENABLE.values[3], "1", "forced NVLS on request")
  for _, v in ipairs(x.vars.NCCL_NVLS_ENABLE.values) do
    assert(v ~= "-2", "-2 is NCCL's unset, never a candidate")
  end
end

local function test_new_presets()
  local x = load("  presets = { xla.presets.collective_matmul{}, xla.presets.opt_level{},\n"
                 .. "    xla.presets.codegen{ dynamic_slice = true },\n"
                 .. "    xla.presets.memory{ collective_mem_mb = { 1024, 4096 } } },\n")
  eq(x.flags.xla_gpu_threshold_for_windowed_einsum_mib.values[1], 0,
     "collective matmul: the guide's 0 (every dot)")
  eq(x.flags.xla_gpu_multi_streamed_windowed_einsum.kind, "bool", "multi-streamed")
  -- XLA:GPU asks only whether the level is at least O1: O2 and O3 compile what O1 does.
  eq(table.concat(x.vars.JAX_OPTIMIZATION_LEVEL.values, ","), "UNKNOWN,O1", "unset against O1")
  eq(x.flags.xla_gpu_enable_dynamic_slice_fusion.kind, "bool", "dynamic-slice fusion")
  eq(table.concat(x.vars.XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB.values, ","), "1024,4096",
     "collective memory pool, as strings")
  eq(#x.warnings, 0, "no warnings")
  local lerr = raises(function() load("  presets = xla.presets.opt_level{ legacy = true },\n") end)
  assert(lerr:find("^p%.lua:4: xla%.presets%.opt_level: legacy is gone: "
                   .. "xla_backend_optimization_level is LLVM's"), lerr)
  local s = load("  presets = { xla.presets.scheduler{}, xla.presets.collectives{ layer_bytes = "
                 .. "1048576, scheduler = \"lhs\" } },\n")
  eq(s.flags.xla_gpu_experimental_parallel_collective_overlap_limit.values[1], 1, "overlap 1")
  eq(s.flags.xla_gpu_enable_latency_hiding_scheduler.kind, "bool", "with lhs")
  local err = raises(function()
    load("  presets = { xla.presets.scheduler{}, xla.presets.collectives{ layer_bytes = 1 } },\n")
  end)
  assert(err:find("'xla_gpu_enable_analytical_sol_latency_estimator' is defined by both", 1, true),
         err)
  local p = load("  presets = xla.presets.pipeline{},\n")
  eq(p.flags.xla_gpu_collective_permute_combine_threshold_bytes.kind, "choice", "companion")
  err = raises(function()
    load("  presets = xla.presets.memory{ collective_mem_mb = 5 },\n")
  end)
  assert(err:find("collective_mem_mb must be a list", 1, true), err)
end

-- What each dimension acts on upstream (docs/PRESETS.md names the lines): values that compile
-- the same program are searched once, switches that no longer switch are not searched.
local function test_upstream_fixes()
  local x = load("  presets = xla.presets.collectives{ layer_bytes = \"436MB\" },\n")
  for _, c in ipairs({ "all_gather", "reduce_scatter", "all_reduce" }) do
    -- after jaxlib 0.11.0 the boolean's false reads as "default", which pipelines at -O1
    eq(x.flags["xla_gpu_enable_pipelined_" .. c], nil, c .. ": no deprecated boolean")
    eq(table.concat(x.flags["xla_gpu_pipeline_" .. c].values, ","), "off,on", c .. ": the mode")
  end
  local old = load("  presets = xla.presets.collectives{ layer_bytes = 1, legacy_pipelining = true },\n")
  eq(old.flags.xla_gpu_enable_pipelined_all_gather.kind, "bool", "legacy: the boolean")
  eq(old.flags.xla_gpu_pipeline_all_gather, nil, "legacy: no mode")
  local c = load("  presets = xla.presets.codegen{},\n")
  eq(table.concat(c.flags.xla_gpu_cudnn_gemm_fusion_level.values, ","), "0,2", "0=1 and 2=3 on Hopper")
  local cb = table.concat(c.flags.xla_gpu_enable_command_buffer.values, "|")
  eq(cb, "|FUSION|FUSION,CUSTOM_CALL|FUSION,CUBLAS,CUBLASLT,CUDNN,CUSTOM_CALL", "command buffers")
  local n = load("  presets = xla.presets.nccl{},\n")
  eq(n.flags.xla_gpu_enable_nccl_user_buffers, nil, "no user buffers without their pool")
  eq(table.concat(n.vars.NCCL_LAUNCH_MODE.values, ","), "PARALLEL,GROUP", "launch mode")
  local u = load("  presets = xla.presets.nccl{ collective_mem_mb = { 1024, 4096 } },\n")
  eq(u.flags.xla_gpu_enable_nccl_user_buffers.kind, "bool", "user buffers with their pool")
  eq(table.concat(u.vars.XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB.values, ","), "1024,4096", "pool")
  local err = raises(function()
    load("  presets = xla.presets.nccl{ collective_mem_mb = { 0, 1024 } },\n")
  end)
  assert(err:find("^p%.lua:4: xla%.presets%.nccl: collective_mem_mb must be whole numbers of MiB "
                  .. "above 0"), err)
end

-- precision{} is refused without the loss guard, at the preset's line, and accepted with it.
local function test_precision()
  local err = raises(function() load("  presets = xla.presets.precision{},\n") end)
  assert(err:find("^p%.lua:4: '[%w_]+' trades accuracy for speed: searching it needs the "
                  .. "correctness guard, metric%.check"), err)
  local x = dsl.load("p.lua", "return experiment {\n  command = { \"sim\" },\n"
    .. "  metric = { json = \"ms\", check = { json = \"loss\", tolerance = 1e-5 } },\n"
    .. "  presets = xla.presets.precision{},\n}\n")
  eq(table.concat(x.vars.JAX_DEFAULT_MATMUL_PRECISION.values, ","), "bfloat16,tensorfloat32,highest",
     "matmul precision")
  eq(x.flags.xla_allow_excess_precision.kind, "bool", "excess precision")
  eq(x.flags.xla_gpu_enable_fast_min_max.kind, "bool", "fast min/max")
  eq(#x.warnings, 0, "no warnings")
end

test("collectives", test_collectives)
test("upstream_fixes", test_upstream_fixes)
test("precision", test_precision)
test("nccl_safety", test_nccl_safety)
test("new_presets", test_new_presets)
test("each_preset", test_each_preset)
test("composition", test_composition)
test("explicit_wins", test_explicit_wins)
