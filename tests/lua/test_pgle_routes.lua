-- Tests for manual PGLE's two routes in lua/pgle.lua. XLA reads ".pbtxt" as text and ".pb"
-- as binary (openxla/xla xla/service/gpu/gpu_hlo_schedule.cc ReadProfileFromSources) and
-- drops entries keyed by another fingerprint (FilterWithFingerprint): the nsys route
-- profiles with the scheduler off and every collective synchronous (XLA's PGLE guide), the
-- jax route (the default) with the trial's own async collectives and the scheduler on, command
-- buffers off
-- (jax-ml/jax docs/gpu_performance_tips.md, "Manual PGLE").

local pgle = require "pgle"
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

local LHS = "xla_gpu_enable_latency_hiding_scheduler"
local ASYNC_OFF = "xla_gpu_disable_async_collectives"
local PATH = "xla_gpu_pgle_profile_file_or_directory_path"
local CMD = "xla_gpu_enable_command_buffer"
local CHECKER = "xla_gpu_pgle_accuracy_checker"

local function xla(name, value) return { target = "xla", name = name, value = value } end

local function profile_of(route, settings)
  local exp = { metric = { skip = 0, pgle_extra_skip = 0 },
                pgle = { mode = "manual", route = route } }
  local p = pgle.decorate(exp, { settings = settings })
  local names, count = {}, {}
  for _, s in ipairs(p.profile.settings) do
    names[s.name] = s.value
    count[s.name] = (count[s.name] or 0) + 1
  end
  return p, names, count
end

test("nsys route: text profile, scheduler off, every collective synchronous", function()
  local p, names, count = profile_of("nsys", { xla(LHS, "true"), xla(ASYNC_OFF, "allreduce") })
  eq(p.profile.suffix, ".pgle.pbtxt", "XLA reads .pbtxt as text")
  eq(names[LHS], "false", "scheduler off")
  eq(count[LHS], 1, "one scheduler setting")
  eq(count[ASYNC_OFF], 1, "the trial's own list is replaced")
  -- DebugOptions::CollectiveOpType up to RAGGEDALLTOALL (xla/xla.proto), each named once.
  eq(names[ASYNC_OFF], "allreduce,allgather,reducescatter,collectivebroadcast,alltoall,"
     .. "collectivepermute,raggedalltoall", "every collective type")
end)

-- NVIDIA JAX-Toolbox calls the Nsight Systems workflow "no longer recommended"
-- (docs/PGLE.md:14): the JAX profiler is the default.
test("nil route is jax", function()
  local p, names = profile_of(nil, {})
  eq(p.profile.suffix, ".pgle.pb", "binary")
  eq(names[LHS], "true", "scheduler on")
  eq(names[CMD], "", "command buffers off while profiling")
end)

test("jax route: binary profile, scheduler on, the trial's async collectives kept", function()
  local p, names, count = profile_of("jax", { xla(LHS, "false"), xla(ASYNC_OFF, "alltoall"),
                                              xla(PATH, "/mine") })
  eq(p.profile.suffix, ".pgle.pb", "XLA reads .pb as binary")
  eq(names[LHS], "true", "scheduler on, as JAX's manual PGLE step 1 says")
  eq(count[LHS], 1, "one scheduler setting")
  eq(names[ASYNC_OFF], "alltoall", "the trial's own collectives: same program, same fingerprint")
  eq(names[PATH], nil, "the profile run reads no profile")
  -- jax/_src/compiler.py:570-581 (jax 0.12.0.1): auto PGLE compiles its profiled run with
  -- xla_gpu_enable_command_buffer='' because the profiler cannot see inside CUDA graphs.
  local _, on = profile_of("jax", { xla(CMD, "FUSION") })
  eq(on[CMD], "", "command buffers off in the profile run, whatever the trial says")
  local measured = {}
  for _, s in ipairs(p.settings) do measured[s.name] = s.value end
  eq(measured[PATH], pgle.PROFILE_PLACEHOLDER, "the measured run reads it")
  eq(measured[CHECKER], "PGLE_STRICTNESS_LEVEL_ERROR", "a profile missing instructions fails")
  local q = pgle.decorate({ metric = { skip = 0, pgle_extra_skip = 0 }, pgle = { mode = "manual" } },
                          { settings = { xla(CHECKER, "PGLE_STRICTNESS_LEVEL_WARN"), xla(CMD, "FUSION") } })
  local n, mine = 0, {}
  for _, s in ipairs(q.settings) do
    mine[s.name] = s.value
    if s.name == CHECKER then n = n + 1 end
  end
  eq(n, 1, "one checker setting")
  eq(mine[CHECKER], "PGLE_STRICTNESS_LEVEL_WARN", "the trial's own checker wins")
  eq(mine[CMD], "FUSION", "the measured run keeps the trial's command buffers")
end)

test("check_route", function()
  eq(pgle.check_route(nil), "jax", "default")
  eq(pgle.check_route("jax"), "jax", "jax")
  local r, why = pgle.check_route("xprof")
  eq(r, nil, "unknown")
  eq(why:find('got "xprof"', 1, true) ~= nil, true, "says what it got")
  eq(select(2, pgle.check_route(3)):find("got 3", 1, true) ~= nil, true, "a number")
end)

test("failure texts are XLA's own", function()
  -- xla/service/gpu/gpu_hlo_schedule.cc ProfileFromPath / ProfileFromConfig.
  eq(pgle.FAILURE_TEXTS[1], "Tried but failed to parse PGLE proto from", "parse")
  eq(pgle.FAILURE_TEXTS[2], "PGLE profile file does not exist: ", "missing")
  -- xla/service/profile_guided_latency_estimator.cc CheckAccuracy at PGLE_STRICTNESS_LEVEL_ERROR.
  eq(pgle.FAILURE_TEXTS[4], " missing instructions. Discarding the profile.", "checker")
  raises(function() profile_of("bogus", {}) end)
end)
