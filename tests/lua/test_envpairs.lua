-- Tests for lua/envpairs.lua and its use by lua/host.lua: jaxlib >= 0.4.32 raises ValueError
-- when XLA_CLIENT_MEM_FRACTION and XLA_PYTHON_CLIENT_MEM_FRACTION are both set (jax-ml/jax
-- jaxlib/xla_client.py:180-190), so a sweep that sets one keeps the other from its trials.

local envpairs = require "envpairs"
local tap = require("tap")
local test, eq = tap.test, tap.eq

local NEW, OLD = "XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION"

test("jaxlib's message, word for word", function()
  eq(envpairs.MEM_FRACTION_ERROR, "XLA_CLIENT_MEM_FRACTION is specified together with "
     .. "XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated.", "text")
end)

test("conflict", function()
  local function set_of(t) return function(n) return t[n] ~= nil end end
  eq(envpairs.conflict(set_of({ [NEW] = 1 })), nil, "one is fine")
  eq(envpairs.conflict(set_of({ [NEW] = 1, [OLD] = 1 })), NEW, "both")
  eq(select(2, envpairs.conflict(set_of({ [NEW] = 1, [OLD] = 1 }))), OLD, "the old name second")
end)

test("unset: the partner of what the sweep sets", function()
  eq(table.concat(envpairs.unset({ [NEW] = {} }, {}), ","), OLD, "searched new name")
  eq(table.concat(envpairs.unset({}, { [OLD] = "0.9" }), ","), NEW, "fixed old name")
  eq(#envpairs.unset({ NCCL_PROTO = {} }, { A = "1" }), 0, "neither: the caller's passes")
  eq(#envpairs.unset({ [NEW] = {} }, { [OLD] = "1" }), 0, "both: check refuses it first")
  eq(#envpairs.unset(nil, nil), 0, "no tables")
  eq(envpairs.partner(OLD), NEW, "partner")
  eq(envpairs.partner("NCCL_PROTO"), nil, "no partner")
end)

test("host: every proposal, the baseline too, carries the unset list", function()
  local dsl = require "dsl"
  local host = require "host"
  local exp = dsl.load("e.lua", [[
return experiment {
  name = "e", model = "m", hardware = "h", command = { "true" },
  metric = { json = "t" },
  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 } },
  strategy = grid {},
}]])
  local h = host.new(exp, 1, {})
  local base = h:render("{}")
  eq(table.concat(base.unset, ","), OLD, "the baseline")
  local list = h:ask(2)
  eq(#list, 2, "two proposals")
  for i, p in ipairs(list) do eq(table.concat(p.unset, ","), OLD, "proposal " .. i) end
end)
