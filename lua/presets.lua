-- Presets: ready-made search spaces for the groups of XLA flags and variables the JAX-Toolbox
-- GPU performance guide and XLA's flag docs tune together (collectives, scheduler, memory,
-- codegen, collective matmul, pipeline, nccl, pgle, opt_level, precision), exposed to experiment
-- files as `xla.presets.NAME{ options }`. Each preset returns a Preset:
-- { flags = ParamSet, vars = ParamSet, names = { "collectives" } }; Presets and ParamSets
-- compose with `+`, and one name defined twice is an error. The presets describe jaxlib
-- 0.7.2 and newer (presets.JAXLIB) on Hopper/Blackwell; options name what changes for older
-- jaxlibs and GPUs. Values come from the catalog's candidates (lua/catalog.lua) where the
-- catalog has them, or are written here with their source; docs/PRESETS.md lists them all.
-- Must not validate experiments (lua/dsl.lua does) or know how trials run.

local catindex = require "catindex"

local presets = {}

-- The jaxlib the presets describe: from 0.7.2 the analytical speed-of-light latency estimator
-- is on by default and makes XLA run the latency hiding scheduler on Hopper/Blackwell whatever
-- xla_gpu_enable_latency_hiding_scheduler says (openxla/xla
-- xla/service/gpu/gpu_hlo_schedule.cc IsLHSEnabled, and SolLatencyEstimator::IsSupportedForModule
-- in xla/service/gpu/model/sol_latency_estimator.cc).
presets.JAXLIB = "0.7.2"

local PRESET = { __name = "flagtune.preset" }
local PARAMSET = { __name = "flagtune.paramset" }
presets.PRESET, presets.PARAMSET = PRESET, PARAMSET

-- dsl.PARAM, set by presets.bind: descriptors are made the way dsl's constructors make them.
local PARAM

local function is_preset(v) return getmetatable(v) == PRESET end
local function is_paramset(v) return getmetatable(v) == PARAMSET end
presets.is_preset, presets.is_paramset = is_preset, is_paramset

---------------------------------------------------------------------------------------
-- Composition

-- Merges plain or ParamSet tables A and B into a new ParamSet; a name in both is an error
-- raised at LEVEL (the `+` in the experiment file). WHO names the two sides for the message.
local function merge(a, b, who_a, who_b, level)
  local out = {}
  for k, v in pairs(a) do out[k] = v end
  local clash
  for k, v in pairs(b) do
    if out[k] ~= nil and (not clash or k < clash) then clash = k end
    out[k] = v
  end
  if clash then -- the first name in order, so the message does not depend on pairs()
    error(string.format("'%s' is defined by both %s and %s: remove it from one", clash, who_a,
                        who_b), level + 1)
  end
  return setmetatable(out, PARAMSET)
end

local function who(p)
  if is_preset(p) then return "preset " .. table.concat(p.names, "+") end
  return "the other table"
end

PARAMSET.__add = function(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then
    error("only tables of flags or variables can be added with +", 2)
  end
  -- Not a tail call: the error level must still see the experiment file's `+`.
  local sum = merge(a, b, "the left table", "the right table", 2)
  return sum
end

local function concat_names(a, b)
  local n = {}
  for _, x in ipairs(a.names) do n[#n + 1] = x end
  for _, x in ipairs(b.names) do n[#n + 1] = x end
  return n
end

PRESET.__add = function(a, b)
  if not is_preset(a) or not is_preset(b) then
    error("a preset can only be added to another preset (xla.presets.x{} + xla.presets.y{})", 2)
  end
  return setmetatable({ flags = merge(a.flags, b.flags, who(a), who(b), 2),
                        vars = merge(a.vars, b.vars, who(a), who(b), 2),
                        names = concat_names(a, b) }, PRESET)
end

-- The sum of a list of presets (the experiment's `presets = { ... }`), or nil and why.
function presets.sum(list)
  local total
  for i, p in ipairs(list) do
    if not is_preset(p) then
      return nil, string.format("presets item %d is not a preset: write xla.presets.NAME{ ... }", i)
    end
    if total then
      local ok, res = pcall(PRESET.__add, total, p)
      if not ok then return nil, (tostring(res):gsub("^[^\n]-:%d+: ", "")) end
      total = res
    else
      total = p
    end
  end
  return total
end

---------------------------------------------------------------------------------------
-- Building blocks

local function entry(name)
  return catindex.get().by_name[name] or error("presets: '" .. name .. "' is not in the catalog", 0)
end

-- The line in the experiment file that called the preset (level 3: the preset's caller).
local function call_line()
  local info = debug.getinfo(3, "l")
  return info and math.max(info.currentline, 1) or 1
end

local function choice(line, values)
  local copy = {}
  for i, v in ipairs(values) do copy[i] = v end
  return setmetatable({ kind = "choice", values = copy, n = #copy, line = line }, PARAM)
end

local function bool(line)
  return setmetatable({ kind = "bool", values = { false, true }, n = 2, line = line }, PARAM)
end

-- The catalog's candidates of NAME; AS_STRING turns numbers into strings (for variables).
local function candidates(name, as_string)
  local c = entry(name).candidates or error("presets: '" .. name .. "' has no candidates", 0)
  local out = {}
  for i, v in ipairs(c) do out[i] = as_string and tostring(v) or v end
  return out
end

local function preset(name, flags, vars)
  return setmetatable({ flags = setmetatable(flags, PARAMSET), vars = setmetatable(vars, PARAMSET),
                        names = { name } }, PRESET)
end

-- Checks OPTS against ALLOWED (a set) and returns it (an empty table for nil).
local function options(name, opts, allowed)
  if opts == nil then return {} end
  if type(opts) ~= "table" or getmetatable(opts) then
    error(string.format("xla.presets.%s takes a table of options: xla.presets.%s{ ... }", name,
                        name), 3)
  end
  for k in pairs(opts) do
    if not allowed[k] then
      local names = {}
      for a in pairs(allowed) do names[#names + 1] = a end
      table.sort(names)
      local hint = require("util").did_you_mean(k, names)
      error(string.format("xla.presets.%s: unknown option '%s' (%soptions: %s)", name, tostring(k),
                          hint and ("did you mean '" .. hint .. "'? ") or "",
                          #names > 0 and table.concat(names, ", ") or "none"), 3)
    end
  end
  return opts
end

local function bytes_option(name, key, v)
  if math.type(v) == "integer" and v > 0 then return v end
  if type(v) == "string" then
    local n, why = ft.parse_bytes(v)
    if n and n > 0 then return n end
    error(string.format("xla.presets.%s: %s: cannot read %q as a byte size: %s", name, key, v,
                        tostring(why or "must be positive")), 3)
  end
  error(string.format('xla.presets.%s: %s must be a size like "436MB" or a number of bytes', name,
                      key), 3)
end

-- The threshold the JAX-Toolbox GPU performance guide writes for AG, RS and AR alike.
local EIGHT_GIB = 8589934592

-- Powers of two from LO (rounded down to one) up to HI (rounded up, at most 8 GiB).
local function log2_grid(lo, hi)
  local p = 1
  while p * 2 <= lo do p = p * 2 end
  local values = {}
  while p <= EIGHT_GIB do
    values[#values + 1] = p
    if p >= hi then break end
    p = p * 2
  end
  return values
end

local function flag_list(line, opts_list)
  local out = {}
  for i, v in ipairs(opts_list) do out[i] = v end
  return choice(line, out)
end

-- VALUES with the JAX-Toolbox guide's 8 GiB appended when the grid stops short of it, so the
-- published setting is always one of the candidates.
local function with_published(values)
  if values[#values] ~= EIGHT_GIB then values[#values + 1] = EIGHT_GIB end
  return values
end

-- collective_mem_mb = { ... } of preset NAME as the strings the variable takes: whole MiB of
-- at least LEAST each. Raised at the preset's caller.
local function pool_sizes(name, mb, least)
  if type(mb) ~= "table" or #mb == 0 then
    error(string.format("xla.presets.%s: collective_mem_mb must be a list like { 1024, 4096 }",
                        name), 3)
  end
  local values = {}
  for i, v in ipairs(mb) do
    if math.type(tonumber(v)) ~= "integer" or tonumber(v) < least then
      error(string.format("xla.presets.%s: collective_mem_mb must be whole numbers of MiB%s", name,
                          least > 0 and " above 0 (the pool the user buffers are registered in)"
                          or ""), 3)
    end
    values[i] = tostring(v)
  end
  return values
end

-- The scheduler switch that changes the program on the installed jaxlib. "sol" (jaxlib >=
-- presets.JAXLIB on Hopper/Blackwell): the SOL estimator decides whether the scheduler runs,
-- so a half with xla_gpu_enable_latency_hiding_scheduler=false would re-measure the default
-- program; it is the estimator that is searched. "lhs" (older jaxlibs, Ampere and earlier):
-- the scheduler flag itself.
local SCHEDULERS = { sol = "xla_gpu_enable_analytical_sol_latency_estimator",
                     lhs = "xla_gpu_enable_latency_hiding_scheduler" }

local function scheduler_flag(name, v)
  if v == nil then return SCHEDULERS.sol end
  if SCHEDULERS[v] then return SCHEDULERS[v] end
  error(string.format('xla.presets.%s: scheduler must be "sol" (jaxlib >= %s on Hopper or '
                      .. 'Blackwell) or "lhs" (older jaxlibs and GPUs), got %s', name,
                      presets.JAXLIB, tostring(v)), 3)
end

---------------------------------------------------------------------------------------
-- The presets

local api = {}

-- Collective pipelining per collective. After jaxlib 0.11.0 the modes xla_gpu_pipeline_* decide
-- (openxla/xla PR #45836) and the old booleans are read into them with false = "default",
-- which pipelines at -O1 and above: a boolean's false no longer turns pipelining off, so
-- only the modes' off and on are two programs. The booleans stay for older jaxlibs
-- (legacy_pipelining = true).
local PIPELINED = { "all_gather", "reduce_scatter", "all_reduce" }

local function pipelining(line, flags, legacy)
  for _, c in ipairs(PIPELINED) do
    if legacy then
      flags["xla_gpu_enable_pipelined_" .. c] = bool(line)
    else
      flags["xla_gpu_pipeline_" .. c] = choice(line, candidates("xla_gpu_pipeline_" .. c))
    end
  end
end

-- The JAX-Toolbox GPU performance guide, "Flags to enable optimizations for FSDP
-- communication": the scheduler (see SCHEDULERS), pipelined AG/RS/AR (see PIPELINED),
-- while-loop double buffering, combine-by-dim, and combine thresholds from one layer's
-- weights (AG/RS) and 16MB up to the gradient size in steps of 2 (AR), each grid ending at
-- the guide's 8 GiB.
function api.collectives(opts)
  local line = call_line()
  opts = options("collectives", opts, { layer_bytes = true, grad_bytes = true, scheduler = true,
                                        legacy_pipelining = true })
  if opts.layer_bytes == nil then
    error('xla.presets.collectives needs layer_bytes, the bytes of one transformer layer\'s '
          .. 'weights: collectives{ layer_bytes = "436MB" } (Llama-2-7B in bf16)', 2)
  end
  local layer = bytes_option("collectives", "layer_bytes", opts.layer_bytes)
  local grad = opts.grad_bytes and bytes_option("collectives", "grad_bytes", opts.grad_bytes)
    or EIGHT_GIB
  local ag_rs = with_published(log2_grid(layer, 16 * layer))
  local flags = {
    [scheduler_flag("collectives", opts.scheduler)] = bool(line),
    xla_gpu_enable_while_loop_double_buffering = bool(line),
    xla_gpu_enable_all_gather_combine_by_dim = bool(line),
    xla_gpu_enable_reduce_scatter_combine_by_dim = bool(line),
    xla_gpu_all_gather_combine_threshold_bytes = flag_list(line, ag_rs),
    xla_gpu_reduce_scatter_combine_threshold_bytes = flag_list(line, ag_rs),
    xla_gpu_all_reduce_combine_threshold_bytes =
      flag_list(line, with_published(log2_grid(16777216, grad))),
  }
  pipelining(line, flags, opts.legacy_pipelining == true)
  local vars = { CUDA_DEVICE_MAX_CONNECTIONS = choice(line, { "1", "8" }) }
  return preset("collectives", flags, vars)
end

-- The scheduler's own knobs (XLA's flag docs, "Latency hiding scheduler"): the SOL
-- estimator on or off and how many collectives may overlap at once
-- (xla_gpu_experimental_parallel_collective_overlap_limit, default 1). Compose with
-- collectives{ scheduler = "lhs" }, not the default "sol" (the same flag twice).
function api.scheduler(opts)
  local line = call_line()
  options("scheduler", opts, {})
  return preset("scheduler", {
    xla_gpu_enable_analytical_sol_latency_estimator = bool(line),
    xla_gpu_experimental_parallel_collective_overlap_limit = choice(line, { 1, 2, 4 }),
  }, {})
end

-- Memory fraction and slop factor (the JAX-Toolbox guide), preallocation, the newer variable
-- name (JAX's GPU memory allocation page), latency_hiding_scheduler_rerun (a libtpu flag:
-- tpu = true), and with collective_mem_mb = { ... } the pool NCCL user buffers and NVLS
-- allocate from (XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB, jax-ml/jax jaxlib/xla_client.py
-- generate_pjrt_gpu_plugin_options).
function api.memory(opts)
  local line = call_line()
  opts = options("memory", opts, { tpu = true, legacy_names = true, collective_mem_mb = true })
  local fraction = opts.legacy_names and "XLA_PYTHON_CLIENT_MEM_FRACTION"
    or "XLA_CLIENT_MEM_FRACTION"
  local vars = {
    [fraction] = choice(line, candidates("XLA_CLIENT_MEM_FRACTION")),
    XLA_PYTHON_CLIENT_PREALLOCATE = choice(line, { "true", "false" }),
  }
  if opts.collective_mem_mb ~= nil then
    vars.XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB =
      choice(line, pool_sizes("memory", opts.collective_mem_mb, 0))
  end
  local flags = {
    xla_gpu_memory_limit_slop_factor = choice(line, candidates("xla_gpu_memory_limit_slop_factor")),
  }
  if opts.tpu then
    flags.xla_latency_hiding_scheduler_rerun =
      choice(line, candidates("xla_latency_hiding_scheduler_rerun"))
  end
  return preset("memory", flags, vars)
end

-- Triton GEMM for any GEMM, command buffers ('' disables CUDA graphs; FUSION,CUSTOM_CALL is
-- JAX-Toolbox's Blackwell setting, docs/GPU_performance.md:212), cuDNN GEMM fusion (levels 0
-- and 2: XLA compares the level with 1 on Ampere/Hopper and with 0 on Blackwell,
-- xla/service/gpu/autotuning/gemm_fusion_autotuner_cuda.cc AddLibConfigs), the autotune level
-- (0-4 as XLA's help text lists them); cuDNN fused attention only with
-- fmha = true (a no-op in recent XLA); dynamic-slice fusion (the JAX-Toolbox guide: fuses
-- the dynamic slices around a GEMM or collective in scanned layers) with dynamic_slice = true.
function api.codegen(opts)
  local line = call_line()
  opts = options("codegen", opts, { fmha = true, dynamic_slice = true })
  local flags = {
    xla_gpu_triton_gemm_any = bool(line),
    xla_gpu_enable_command_buffer = choice(line, candidates("xla_gpu_enable_command_buffer")),
    xla_gpu_cudnn_gemm_fusion_level = choice(line, candidates("xla_gpu_cudnn_gemm_fusion_level")),
    xla_gpu_autotune_level = choice(line, candidates("xla_gpu_autotune_level")),
  }
  if opts.fmha then flags.xla_gpu_enable_cudnn_fmha = bool(line) end
  if opts.dynamic_slice then flags.xla_gpu_enable_dynamic_slice_fusion = bool(line) end
  return preset("codegen", flags, {})
end

-- Collective matmul (the JAX-Toolbox guide, "Collective matmul"): windowed einsums overlap a
-- tensor-parallel matmul with its all-gather or reduce-scatter once the dot is at least the
-- threshold in MiB (XLA's default of 100000 keeps it off; the guide's setting is 0, every
-- dot), on multiple streams.
function api.collective_matmul(opts)
  local line = call_line()
  options("collective_matmul", opts, {})
  return preset("collective_matmul", {
    xla_gpu_threshold_for_windowed_einsum_mib = choice(line, { 0, 64, 256, 1024 }),
    xla_gpu_multi_streamed_windowed_einsum = bool(line),
  }, {})
end

-- Pipeline parallelism (the JAX-Toolbox guide, "async collective permute"): pipelined
-- send/recv, the collective-permute decomposer threshold, XLA's pipeline-parallelism opt
-- level, and their companions: the collective-permute combine threshold and one CUDA
-- connection per device so that the stages' transfers keep their order. The LHS async
-- tracker (gone from recent XLA) only with legacy = true.
function api.pipeline(opts)
  local line = call_line()
  opts = options("pipeline", opts, { legacy = true })
  local flags = {
    xla_gpu_enable_pipelined_p2p = bool(line),
    xla_gpu_collective_permute_decomposer_threshold =
      choice(line, candidates("xla_gpu_collective_permute_decomposer_threshold")),
    xla_gpu_experimental_pipeline_parallelism_opt_level =
      choice(line, candidates("xla_gpu_experimental_pipeline_parallelism_opt_level")),
    xla_gpu_collective_permute_combine_threshold_bytes = choice(line, { 0, 134217728, EIGHT_GIB }),
  }
  if opts.legacy then flags.xla_gpu_lhs_enable_gpu_async_tracker = bool(line) end
  return preset("pipeline", flags, {})
end

-- NCCL (the JAX-Toolbox guide, "NCCL configuration" and "NCCL Optimizations"), under one
-- safety rule: nothing NCCL gates by itself is forced. An explicit NCCL_PROTO naming LL128
-- bypasses NCCL's own LL128 gating (NVIDIA/nccl src/graph/tuning.cc: LL128 defaults to 2,
-- "enabled where safe", an explicit list sets 1), and NCCL 2.18.1's release notes report data
-- corruption with LL128 on HGX H100; so LL128 is offered only with ll128 = true, and SIMPLE
-- is never dropped. NCCL_NVLS_ENABLE defaults to 2 (auto, src/transport/nvls.cc); 1 forces
-- NVLS and fails where it is not supported, so it is offered only with nvls_force = true.
-- NCCL_LAUNCH_MODE: PARALLEL (NCCL's default) or GROUP (NVIDIA/nccl src/init.cc:1651-1657),
-- JAX-Toolbox's remedy for hangs when one process drives several GPUs
-- (docs/GPU_performance.md:229). User buffers are registered in a pool of their own
-- (docs/GPU_performance.md:174; jaxlib/xla_client.py:192-214 passes
-- XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB as collective_memory_size), so they are searched
-- only together with that pool's size: collective_mem_mb = { 1024, 4096 }.
function api.nccl(opts)
  local line = call_line()
  opts = options("nccl", opts, { ll128 = true, nvls_force = true, collective_mem_mb = true })
  local flags = {
    xla_gpu_nccl_collective_max_nchannels =
      choice(line, candidates("xla_gpu_nccl_collective_max_nchannels")),
  }
  local protos = { "SIMPLE", "LL,SIMPLE" }
  if opts.ll128 == true then protos[#protos + 1] = "LL,LL128,SIMPLE" end
  local nvls = { "0", "2" }
  if opts.nvls_force == true then nvls[#nvls + 1] = "1" end
  local vars = {
    NCCL_PROTO = choice(line, protos),
    NCCL_NVLS_ENABLE = choice(line, nvls),
    NCCL_LAUNCH_MODE = choice(line, candidates("NCCL_LAUNCH_MODE")),
  }
  if opts.collective_mem_mb ~= nil then
    flags.xla_gpu_enable_nccl_user_buffers = bool(line)
    vars.XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB =
      choice(line, pool_sizes("nccl", opts.collective_mem_mb, 1))
  end
  return preset("nccl", flags, vars)
end

-- XLA's optimization level (jax-ml/jax jax/_src/config.py:2271-2282 at jax 0.12.0.1,
-- jax_optimization_level: UNKNOWN, O0..O3; JAX_OPTIMIZATION_LEVEL in the environment): O1
-- turns on the passes the JAX-Toolbox guide lists for -O1 (pipelined collectives, the
-- scheduler, the SOL estimator on Hopper/Blackwell; docs/GPU_performance.md:95-117). XLA:GPU
-- asks only whether the level is at least O1 (openxla/xla docs/gpu_optimization_levels.md,
-- "O1 or above"), so O2 and O3 compile what O1 does: the search is unset (UNKNOWN, XLA's
-- default) against O1. xla_backend_optimization_level is LLVM's level, not this bundle, so
-- there is no legacy variant: for a jaxlib before 0.5.1 search the passes themselves
-- (collectives{ legacy_pipelining = true, scheduler = "lhs" }).
function api.opt_level(opts)
  local line = call_line()
  opts = options("opt_level", opts, { legacy = true })
  if opts.legacy ~= nil then
    error("xla.presets.opt_level: legacy is gone: xla_backend_optimization_level is LLVM's "
          .. "code generation level, not XLA's -O1 bundle; for a jaxlib before 0.5.1 search the "
          .. 'passes -O1 turns on: xla.presets.collectives{ layer_bytes = ..., scheduler = "lhs", '
          .. "legacy_pipelining = true }", 2)
  end
  return preset("opt_level", {},
                { JAX_OPTIMIZATION_LEVEL = choice(line, candidates("JAX_OPTIMIZATION_LEVEL")) })
end

-- Accuracy for speed: JAX's default matmul precision for 32-bit inputs
-- (JAX_DEFAULT_MATMUL_PRECISION, jax/_src/config.py:1845-1856 at jax 0.12.0.1; unset is XLA's
-- DEFAULT), bf16 inputs for f32 dots (xla_gpu_default_to_alg_dot_bf16_bf16_f32), NaN-dropping
-- min/max (xla_gpu_enable_fast_min_max), flushed denormals (xla_gpu_ftz) and exact rounding
-- of intermediates (xla_allow_excess_precision = false). A faster program that computes
-- something else must not win, so lua/checks.lua refuses any searched name tagged
-- "precision" in the catalog unless metric.check compares the loss with the baseline's.
function api.precision(opts)
  local line = call_line()
  options("precision", opts, {})
  return preset("precision", {
    xla_gpu_default_to_alg_dot_bf16_bf16_f32 = bool(line),
    xla_gpu_enable_fast_min_max = bool(line),
    xla_gpu_ftz = bool(line),
    xla_allow_excess_precision = bool(line),
  }, { JAX_DEFAULT_MATMUL_PRECISION = choice(line, { "bfloat16", "tensorfloat32", "highest" }) })
end

-- Auto PGLE, the PGLE JAX-Toolbox now recommends (JAX's GPU performance tips, "Auto PGLE"):
-- JAX_ENABLE_PGLE, and with runs = { ... } the profiled runs too. The profiled steps and the
-- recompile are left out of the measurement (metric.skip_pgle). Manual PGLE is the
-- experiment's pgle = { mode = "manual", route = ... } key, not a preset.
function api.pgle(opts)
  local line = call_line()
  opts = options("pgle", opts, { runs = true })
  local vars = { JAX_ENABLE_PGLE = choice(line, { "false", "true" }) }
  if opts.runs ~= nil then
    local runs = opts.runs == true and candidates("JAX_PGLE_PROFILING_RUNS", true) or opts.runs
    if type(runs) ~= "table" or #runs == 0 then
      error("xla.presets.pgle: runs must be true or a list like { 1, 3 }", 2)
    end
    local values = {}
    for i, r in ipairs(runs) do
      if math.type(tonumber(r)) ~= "integer" or tonumber(r) < 1 then
        error("xla.presets.pgle: runs must be whole numbers >= 1", 2)
      end
      values[i] = tostring(r)
    end
    vars.JAX_PGLE_PROFILING_RUNS = choice(line, values)
  end
  return preset("pgle", {}, vars)
end

-- XLA's CPU backend, for a job on host devices (docs/CPU.md measured each dimension on
-- experiments/jax_cpu_fsdp.py with jaxlib 0.12.0.1; the flags' definitions are in openxla/xla
-- xla/debug_options_flags.cc): multi-threaded Eigen calls, XNNPACK for the operations it
-- supports, the preferred vector width, the HLO scheduler. Fast math only with
-- fast_math = true: it changes the numbers (pair it with metric.check).
function api.cpu(opts)
  local line = call_line()
  opts = options("cpu", opts, { fast_math = true })
  local flags = {
    xla_cpu_multi_thread_eigen = bool(line),
    xla_cpu_use_xnnpack = bool(line),
    xla_cpu_prefer_vector_width = choice(line, candidates("xla_cpu_prefer_vector_width")),
    xla_cpu_scheduler_type = choice(line, candidates("xla_cpu_scheduler_type")),
  }
  if opts.fast_math then flags.xla_cpu_enable_fast_math = bool(line) end
  return preset("cpu", flags, {})
end

presets.api = api

-- Hands presets dsl's PARAM metatable and returns the table experiment files see as
-- `xla.presets`.
function presets.bind(param_mt)
  PARAM = param_mt
  return api
end

return presets
