-- What the in-process search harnesses (bench_tpe_quick.lua, bench_confirm_quick.lua) share:
-- a generated landscape's space, read from `flagtune-sim --landscape gen:SEED` (H_SIM, default
-- build/flagtune-sim), and how a configuration's values are written for it.
local space = require("space")

local M = { SIM = os.getenv("H_SIM") or "build/flagtune-sim" }

-- The output of shell command CMD.
function M.sh(cmd)
  local f = io.popen(cmd); local s = f:read("a"); f:close(); return s
end

-- The space of gen:SEED as flagtune builds it, its parameters in the simulator's order, and
-- its exact optimum.
function M.load_space(seed)
  local js = ft.json_decode(M.sh(M.SIM .. " --landscape gen:" .. seed .. " --print-space-json"))
  local flags, vars, order = {}, {}, {}
  for _, p in ipairs(js.params) do
    local v = p.values
    local spec
    if p.kind == "bool" then spec = { kind = "bool" }
    elseif p.kind == "pow2" then spec = { kind = "pow2", lo = math.tointeger(v[1]), hi = math.tointeger(v[#v]) }
    elseif p.kind == "int" then spec = { kind = "int", lo = math.tointeger(v[1]), hi = math.tointeger(v[#v]), step = #v > 1 and math.tointeger(v[2] - v[1]) or 1 }
    elseif p.kind == "float" then spec = { kind = "float", lo = v[1], hi = v[#v], step = #v > 1 and (v[2] - v[1]) or 1 }
    else local vals = {}; for i, x in ipairs(v) do vals[i] = tostring(x) end; spec = { kind = "choice", values = vals } end
    if p.env then vars[p.name] = spec else flags[p.name] = spec end
    order[#order + 1] = p
  end
  local opt = tonumber(M.sh(M.SIM .. " --landscape gen:" .. seed .. " --print-optimum"):match("^([%d%.]+)"))
  return space.new(flags, vars, {}, {}, "h.lua"), order, opt
end

-- A value as a flag or variable takes it.
function M.render(v)
  if type(v) == "boolean" then return tostring(v) end
  if math.type(v) == "float" then return string.format("%.10g", v) end
  return tostring(v)
end

-- XLA_FLAGS' tokens and the environment's NAME=VALUE pairs of CONFIG over ORDER (the
-- simulator's parameters), as flagtune writes them: a flag whose '' XLA refuses is left out
-- (space.left_out: the catalog's empty = "unset").
function M.settings(order, config)
  local xf, env = {}, {}
  for _, p in ipairs(order) do
    local v = config[p.name]
    if v ~= nil then
      local s = M.render(v)
      if p.env then env[#env + 1] = p.name .. "=" .. s
      elseif not space.left_out(p.name, s) then xf[#xf + 1] = "--" .. p.name .. "=" .. s end
    end
  end
  return xf, env
end

return M
