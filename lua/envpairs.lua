-- Environment variables that must not reach a trial together, and what a sweep therefore
-- keeps from the caller's environment. Today one pair: jaxlib >= 0.4.32 raises ValueError
-- when XLA_CLIENT_MEM_FRACTION and the deprecated XLA_PYTHON_CLIENT_MEM_FRACTION are both
-- set (jax-ml/jax jaxlib/xla_client.py:180-190, generate_pjrt_gpu_plugin_options), and
-- JAX-Toolbox's scripts still export the old name, which every trial would inherit.
-- lua/checks.lua refuses an experiment that sets both; lua/host.lua gives every proposal of
-- a sweep that sets one the other in its `unset` list, which src/trial/trialcfg.c drops from the
-- child's environment. Must not read files or run anything.

local envpairs = {}

-- jaxlib's own message (jaxlib/xla_client.py:185-188), for the docs, the tests and the sim.
envpairs.MEM_FRACTION_ERROR = "XLA_CLIENT_MEM_FRACTION is specified together with "
  .. "XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated."

-- { a, b, why }: setting both is fatal.
envpairs.PAIRS = {
  { "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "jaxlib >= 0.4.32 raises ValueError when both are set" },
}

-- The first pair both of whose names SET(name) reports set, as a, b, why; else nil.
function envpairs.conflict(set)
  for _, p in ipairs(envpairs.PAIRS) do
    if set(p[1]) and set(p[2]) then return p[1], p[2], p[3] end
  end
  return nil
end

-- The name jaxlib refuses together with NAME, and why; nil when NAME is in no pair.
function envpairs.partner(name)
  for _, p in ipairs(envpairs.PAIRS) do
    if p[1] == name then return p[2], p[3] end
    if p[2] == name then return p[1], p[3] end
  end
  return nil
end

-- The sorted names a sweep over VARS (searched) and ENV (fixed) must keep from the caller's
-- environment: for each pair, the partner of the name the experiment sets.
function envpairs.unset(vars, env)
  local out = {}
  local function set(name) return (vars and vars[name] ~= nil) or (env and env[name] ~= nil) end
  for _, p in ipairs(envpairs.PAIRS) do
    if set(p[1]) and not set(p[2]) then out[#out + 1] = p[2] end
    if set(p[2]) and not set(p[1]) then out[#out + 1] = p[1] end
  end
  table.sort(out)
  return out
end

return envpairs
