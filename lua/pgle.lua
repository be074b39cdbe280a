-- PGLE (profile-guided latency estimation): the one place that knows its flags and
-- variables. Auto PGLE (JAX_ENABLE_PGLE) profiles the first JAX_PGLE_PROFILING_RUNS steps
-- and recompiles, so those steps and the recompile are not steady state and are left out of
-- a trial's value. Manual PGLE runs each trial twice: a profile run that writes an
-- XLA profile, then the measured run that reads it through
-- xla_gpu_pgle_profile_file_or_directory_path; pgle.route picks how the profile is made
-- (pgle.ROUTES), and XLA's messages for a profile it could not use mark the trial. The
-- orchestrator (C) names no flag: each proposal arrives with its `skip` and, under manual
-- PGLE, its profile run's settings.
-- Sources: JAX's GPU performance tips (docs.jax.dev, "Profile-guided latency estimation")
-- and the JAX-Toolbox GPU performance guide's PGLE workflow.
-- Must not run processes or read the database.

local pgle = {}

-- JAX reads booleans from the environment as y/yes/t/true/on/1, any case (jax-ml/jax
-- jax/_src/config.py, bool_env); its false spellings and anything it refuses leave PGLE off.
pgle.TRUTHY = { ["1"] = true, y = true, yes = true, t = true, ["true"] = true, on = true }

local PATH_FLAG = "xla_gpu_pgle_profile_file_or_directory_path"
local LHS_FLAG = "xla_gpu_enable_latency_hiding_scheduler"
local ASYNC_OFF_FLAG = "xla_gpu_disable_async_collectives"
local CMD_BUFFER_FLAG = "xla_gpu_enable_command_buffer"
-- XLA's PGLE accuracy checker (xla/xla.proto PGLEStrictnessLevel: PGLE_STRICTNESS_LEVEL_OFF,
-- _WARN (XLA's default), _ERROR). At ERROR a profile that misses instructions of the entry
-- computation or a while body fails the compile ("Found N missing instructions. Discarding
-- the profile.", ProfileGuidedLatencyEstimator::CheckAccuracy in openxla/xla
-- xla/service/profile_guided_latency_estimator.cc) instead of a WARNING and a schedule made
-- partly without the profile; the measured run sets it unless the trial sets it itself.
local CHECKER_FLAG = "xla_gpu_pgle_accuracy_checker"
pgle.CHECKER = "PGLE_STRICTNESS_LEVEL_ERROR"
-- Every collective type of XLA's DebugOptions::CollectiveOpType before ALLCOLLECTIVES
-- (openxla/xla xla/xla.proto; the flag's parser in xla/debug_options_flags.cc takes the
-- names in any case and refuses the whole list when one is unknown, so no older spelling
-- is mixed in). RAGGEDALLTOALL is the newest; xla/service/gpu/gpu_hlo_schedule.cc
-- RunAsyncCollectivesConversionPasses reads each.
local ALL_COLLECTIVES = "allreduce,allgather,reducescatter,collectivebroadcast,alltoall,"
  .. "collectivepermute,raggedalltoall"
-- The placeholder C replaces with the trial's profile path (like {steps} in the command).
pgle.PROFILE_PLACEHOLDER = "{pgle_profile}"

-- Manual PGLE's two routes. XLA picks text or binary parsing by the file's extension
-- (xla/service/gpu/gpu_hlo_schedule.cc ReadProfileFromSources: ".pbtxt" text, ".pb"
-- binary; any other name is silently ignored), and keys profile entries by the module's
-- fingerprint taken before the scheduler runs (TagWithFingerprint; FilterWithFingerprint
-- drops entries of another fingerprint without a word), so the profile run must compile
-- the same program the measured run compiles when the profile carries fingerprints.
--   nsys: XLA's PGLE guide (openxla.org/xla, "Profile Guided Latency Estimator"): profile
--         with the scheduler off and every collective synchronous, so that no op's cost
--         hides another's; nsys plus pgo_nsys_converter.py writes a text profile.
--         NVIDIA JAX-Toolbox now calls this workflow "no longer recommended"
--         (docs/PGLE.md:14 and :39).
--   jax:  JAX's GPU performance tips (jax-ml/jax docs/gpu_performance_tips.md, "Manual
--         PGLE"): profile with async collectives and the scheduler on;
--         jax.experimental.profiler.get_profiled_instructions_proto returns the binary
--         proto, written as profile.pb. The profile run turns command buffers off, as jax's
--         own auto PGLE does for its profiled compile (jax/_src/compiler.py:570-581 at jax
--         0.12.0.1: the JAX profiler cannot see inside CUDA graphs); the measured run keeps
--         the trial's setting. The default route.
pgle.ROUTES = {
  nsys = { suffix = ".pgle.pbtxt", lhs = "false", sync = true },
  jax = { suffix = ".pgle.pb", lhs = "true", sync = false, no_cmd_buffers = true },
}
pgle.DEFAULT_ROUTE = "jax"

-- What XLA logs when the measured run could not use the profile it was given
-- (xla/service/gpu/gpu_hlo_schedule.cc ProfileFromPath and ProfileFromConfig): the trial
-- then measures the program without PGLE, so under manual PGLE it is marked invalid (the
-- experiment's invalid_patterns) instead of being taken for the configuration asked.
pgle.FAILURE_TEXTS = {
  "Tried but failed to parse PGLE proto from",
  "PGLE profile file does not exist: ",
  "Unable to parse fdo_profile: not a valid text or binary ProfiledInstructionsProto",
  " missing instructions. Discarding the profile.",
}

-- The route ROUTE names (nil: the default), or nil and why.
function pgle.check_route(route)
  if route == nil then return pgle.DEFAULT_ROUTE end
  if type(route) == "string" and pgle.ROUTES[route] then return route end
  return nil, string.format('pgle.route must be "nsys" (a text profile from Nsight Systems, '
    .. 'collectives synchronous) or "jax" (a binary profile from the JAX profiler, '
    .. 'collectives async), got %s', type(route) == "string" and ('"' .. route .. '"')
    or tostring(route))
end

local function truthy(v) return v ~= nil and pgle.TRUTHY[tostring(v):lower()] == true end

-- The default of JAX_PGLE_PROFILING_RUNS, from the flag catalog.
local function default_runs()
  return require("catindex").get().by_name.JAX_PGLE_PROFILING_RUNS.default
end

-- Steps auto PGLE adds before steady state when it is on: JAX_PGLE_PROFILING_RUNS profiled
-- runs (the fixed value, else the catalog's default) and the recompile. 0 when PGLE is
-- neither searched nor fixed on, or metric.skip_pgle is false. X is the experiment table
-- lua/dsl.lua is validating.
function pgle.extra_skip(x)
  if not x.metric.skip_pgle then return 0 end
  if x.vars.JAX_ENABLE_PGLE == nil and not truthy(x.env.JAX_ENABLE_PGLE) then return 0 end
  local runs = math.tointeger(tonumber(x.env.JAX_PGLE_PROFILING_RUNS))
  return (runs or default_runs()) + 1
end

-- The steps one trial leaves out of its value: metric.skip, plus, when its settings turn
-- auto PGLE on, the profiled runs and the recompile (JAX_PGLE_PROFILING_RUNS + 1 when the
-- trial sets it, else the experiment's extra skip).
function pgle.trial_skip(exp, settings)
  local skip = exp.metric and exp.metric.skip or 0
  local extra = exp.metric and exp.metric.pgle_extra_skip or 0
  if extra <= 0 then return skip end
  local on, runs = false, nil
  for _, s in ipairs(settings) do
    if s.target == "env" and s.name == "JAX_ENABLE_PGLE" then on = truthy(s.value) end
    if s.target == "env" and s.name == "JAX_PGLE_PROFILING_RUNS" then
      runs = math.tointeger(tonumber(s.value))
    end
  end
  if not on then return skip end
  return skip + (runs and runs >= 0 and runs + 1 or extra)
end

-- The profile run's settings for ROUTE: the trial's own, with the scheduler set as the
-- route says and, on the nsys route, every collective synchronous; on the jax route the
-- trial's own collective settings stay, so that its fingerprint is the measured run's, and
-- command buffers are off (CUDA graphs hide their kernels from the profiler; XLA converts
-- to command buffers after scheduling, so the fingerprint does not change).
local function profile_settings(settings, route)
  local r = pgle.ROUTES[route]
  local out = {}
  for _, s in ipairs(settings) do
    local ours = s.target == "xla" and (s.name == PATH_FLAG or s.name == LHS_FLAG
      or s.name == CHECKER_FLAG or (r.sync and s.name == ASYNC_OFF_FLAG)
      or (r.no_cmd_buffers and s.name == CMD_BUFFER_FLAG))
    if not ours then out[#out + 1] = s end
  end
  out[#out + 1] = { target = "xla", name = LHS_FLAG, value = r.lhs }
  if r.sync then
    out[#out + 1] = { target = "xla", name = ASYNC_OFF_FLAG, value = ALL_COLLECTIVES }
  end
  if r.no_cmd_buffers then out[#out + 1] = { target = "xla", name = CMD_BUFFER_FLAG, value = "" } end
  return out
end

-- Completes a rendered proposal P ({ json, label, steps, settings }) for experiment EXP:
-- P.skip always; under manual PGLE, P.profile = { settings, suffix } for the profile run
-- and the measured run's settings read the profile at PROFILE_PLACEHOLDER.
function pgle.decorate(exp, p)
  p.skip = pgle.trial_skip(exp, p.settings)
  if not exp.pgle then return p end
  local route = exp.pgle.route or pgle.DEFAULT_ROUTE
  p.profile = { settings = profile_settings(p.settings, route),
                suffix = pgle.ROUTES[route].suffix }
  local measured, checker = {}, false
  for _, s in ipairs(p.settings) do
    if not (s.target == "xla" and s.name == PATH_FLAG) then measured[#measured + 1] = s end
    checker = checker or (s.target == "xla" and s.name == CHECKER_FLAG)
  end
  measured[#measured + 1] =
    { target = "xla", name = PATH_FLAG, value = pgle.PROFILE_PLACEHOLDER }
  if not checker then
    measured[#measured + 1] = { target = "xla", name = CHECKER_FLAG, value = pgle.CHECKER }
  end
  p.settings = measured
  return p
end

return pgle
