-- Tests for lua/pgle.lua: JAX's reading of a boolean variable, each trial's skip under auto
-- PGLE, and the manual profile run's settings.

local pgle = require "pgle"
local tap = require("tap")
local test, eq = tap.test, tap.eq

local EXP = { metric = { skip = 2, pgle_extra_skip = 4 } }

local function env(name, value) return { target = "env", name = name, value = value } end

local function test_truthiness()
  -- jax-ml/jax jax/_src/config.py:42-60 (bool_env, at cec06d116c): lower-cased,
  -- 'y', 'yes', 't', 'true', 'on', '1' are true; 'n', 'no', 'f', 'false', 'off', '0' false
  -- (anything else raises ValueError in JAX, so no trial runs with PGLE on).
  for _, v in ipairs({ "1", "y", "YES", "t", "True", "on", "ON" }) do
    eq(pgle.trial_skip(EXP, { env("JAX_ENABLE_PGLE", v) }), 2 + 4, v .. " turns PGLE on")
  end
  for _, v in ipairs({ "0", "n", "No", "f", "false", "off", "bogus" }) do
    eq(pgle.trial_skip(EXP, { env("JAX_ENABLE_PGLE", v) }), 2, "'" .. v .. "' leaves it off")
  end
end

local function test_trial_skip()
  eq(pgle.trial_skip(EXP, {}), 2, "no PGLE setting")
  eq(pgle.trial_skip(EXP, { env("JAX_ENABLE_PGLE", "true"), env("JAX_PGLE_PROFILING_RUNS", "7") }),
     2 + 7 + 1, "the trial's own runs and the recompile")
  eq(pgle.trial_skip({ metric = { skip = 2, pgle_extra_skip = 0 } },
                     { env("JAX_ENABLE_PGLE", "true") }), 2, "skip_pgle = false")
  eq(pgle.trial_skip(EXP, { { target = "xla", name = "JAX_ENABLE_PGLE", value = "true" } }), 2,
     "only an environment variable turns it on")
end

local function test_decorate()
  local p = pgle.decorate(EXP, { settings = { env("A", "1") } })
  eq(p.skip, 2, "skip always set")
  eq(p.profile, nil, "no profile run without manual PGLE")
  local manual = { metric = EXP.metric, pgle = { mode = "manual", route = "nsys" } }
  local user_path = { target = "xla", name = "xla_gpu_pgle_profile_file_or_directory_path",
                      value = "/mine" }
  p = pgle.decorate(manual, { settings = { env("A", "1"), user_path } })
  eq(#p.settings, 3, "the measured run keeps A, reads one profile path and checks it")
  eq(p.settings[2].value, pgle.PROFILE_PLACEHOLDER, "the trial's own profile")
  eq(p.settings[3].value, "PGLE_STRICTNESS_LEVEL_ERROR", "XLA's PGLE accuracy checker")
  eq(p.profile.suffix, ".pgle.pbtxt", "profile file suffix")
  local names = {}
  for _, s in ipairs(p.profile.settings) do names[s.name] = s.value end
  eq(names.A, "1", "the profile run keeps the trial's settings")
  eq(names.xla_gpu_pgle_profile_file_or_directory_path, nil, "the profile run reads no profile")
  eq(names.xla_gpu_enable_latency_hiding_scheduler, "false", "scheduler off while profiling")
end

test("truthiness", test_truthiness)
test("trial_skip", test_trial_skip)
test("decorate", test_decorate)
