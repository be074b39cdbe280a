-- The optional estimate() method of the strategy protocol (docs/STRATEGIES.md): tpe{}'s
-- leave-one-out ridge estimate against a brute-force refit without each configuration,
-- halving{} answering from its base, and lua/host.lua's checks of what a strategy answers.

local space = require("space")
local host = require("host")
local rng = require("rng")
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

-- 2 * 8 * 3 * 6 = 288 configurations: a bool, a long ordered one, a short one, a choice.
local function the_space()
  return space.new({ xla_gpu_a = { kind = "bool" },
                     xla_gpu_thr = { kind = "pow2", lo = 1 << 20, hi = 128 << 20 },
                     xla_gpu_lvl = { kind = "int", lo = 1, hi = 3 } },
                   { PROTO = { kind = "choice", values = { "a", "b", "c", "d", "e", "f" } } }, {},
                   {}, "exp.lua")
end

local function new_host(sp, name, options, seed)
  return host.new({ path = "exp.lua", space = sp,
                    strategy = { name = name, options = options or {}, line = 30 },
                    budget = { trials = 60, hours = 0, steps = 45 } }, seed or 1, {})
end

-- A step time with main effects and noise, from a seeded rng.
local function value_of(sp, c, r)
  local v = 100 * (c.xla_gpu_a and 0.9 or 1)
  local j
  for _, q in ipairs(sp.params) do
    if q.name == "xla_gpu_thr" then j = q:index(c.xla_gpu_thr) end
  end
  v = v * (1 + 0.02 * (j - 5) ^ 2 / 16)
  return v * (1 + 0.01 * r:normal())
end

-- Runs N proposals of H with values from value_of; returns the told { json, config, value }.
local function run(h, sp, n, seed)
  local r, out = rng.new(seed or 7), {}
  for _ = 1, n do
    local p = h:ask(1)[1]
    if not p then break end
    local c = sp:decode_json(p.json)
    local v = value_of(sp, c, r)
    h:tell(p.json, { status = "ok", value = v, steps = { v, v }, steps_budget = 45 })
    out[#out + 1] = { json = p.json, config = c, value = v }
  end
  return out
end

local function specs_of(sp)
  local specs = {}
  for dim, q in ipairs(sp.params) do
    specs[dim] = { n = q.n, cat = q.kind == "bool" or q.kind == "choice" }
  end
  return specs
end

local function indices(sp, c)
  local x = {}
  for dim, q in ipairs(sp.params) do x[dim] = q:index(c[q.name]) end
  return x
end

-- The brute force: a ridge refit on every told configuration but the one at I, with the
-- prior precisions PREC (tpe's relevance determination learnt them; fixed for the refits).
local function loo(sp, told, i, prec)
  local r = ft.ridge_new(specs_of(sp), 0.03)
  r:set_precisions(prec)
  for k, t in ipairs(told) do
    if k ~= i then r:add(indices(sp, t.config), math.log(t.value)) end
  end
  r:fit(nil)
  return r:predict(indices(sp, told[i].config))
end

-- With relevance determination on (ard = 3) too: the identity holds for the precisions it
-- learnt, fixed.
local function test_tpe_is_the_leave_one_out_ridge()
  for _, options in ipairs({ {}, { ard = 3 } }) do
    local sp = the_space()
    local h = new_host(sp, "tpe", options)
    local told = run(h, sp, 40)
    eq(#told, 40, "40 distinct configurations ran")
    local jsons = {}
    for i, t in ipairs(told) do jsons[i] = t.json end
    local got = h:estimate(jsons)
    eq(#got, 40, "one answer per configuration")
    local prec = h.strategy.ridge.c:precisions()
    local moved = 0
    for k = 2, #prec do if math.abs(prec[k] - 0.03) > 1e-9 then moved = moved + 1 end end
    eq(moved > 0, options.ard ~= nil, "relevance determination moved precisions")
    local ss = 0
    for i = 1, 40 do
      local want = loo(sp, told, i, prec)
      assert(got[i], "an estimate for configuration " .. i)
      assert(math.abs(got[i].mean - want) < 1e-9,
        string.format("configuration %d: leave-one-out %.12g, brute force %.12g", i, got[i].mean, want))
      ss = ss + (math.log(told[i].value) - want) ^ 2
    end
    local sd = math.sqrt(ss / 40)
    assert(math.abs(got[1].sd - sd) < 1e-9, string.format("sd %.12g, want %.12g", got[1].sd, sd))
    -- the model holds: the leave-one-out error is of the order of the 1 % noise, not of the
    -- 10 % and 2-4 % effects
    assert(sd < 0.02, "leave-one-out RMS " .. sd)
  end
end

local function test_tpe_without_a_model()
  local sp = the_space()
  local h = new_host(sp, "tpe")
  local told = run(h, sp, 5)
  local got = h:estimate({ told[1].json, "{}" })
  eq(got[1], false, "5 results: no estimate yet")
  eq(got[2], false, "the baseline: never")
  run(h, sp, 10, 8)
  got = h:estimate({ told[1].json, "{}", '{"nope":1}' })
  assert(got[1] and got[1].mean and got[1].sd > 0, "15 results: an estimate")
  eq(got[2], false, "the baseline: never")
  eq(got[3], false, "a configuration that does not fit the space: none")
  -- a configuration that never ran: the full model's prediction (nothing to leave out)
  local fresh
  local seen = {}
  for _, t in ipairs(told) do seen[t.json] = true end
  for i = 1, sp:size() do
    local j = sp:key(sp:at(i))
    if not seen[j] and next(sp:at(i)) then fresh = j; break end
  end
  assert(h:estimate({ fresh })[1], "an estimate for a configuration not run")
  local off = new_host(sp, "tpe", { surrogate = 0 })
  local t2 = run(off, sp, 20)
  eq(off:estimate({ t2[1].json })[1], false, "surrogate = 0: no model, no estimate")
end

-- estimate() changes nothing the search does next: the same proposals after it.
local function test_estimate_leaves_the_search_alone()
  local sp = the_space()
  local a, b = new_host(sp, "tpe", {}, 3), new_host(sp, "tpe", {}, 3)
  local ta = run(a, sp, 20)
  run(b, sp, 20)
  a:estimate({ ta[1].json, ta[2].json })
  local pa, pb = a:ask(3), b:ask(3)
  for i = 1, 3 do eq(pa[i].json, pb[i].json, "proposal " .. i .. " after estimate()") end
end

local function test_halving_answers_from_its_base()
  local sp = the_space()
  local hv = new_host(sp, "halving", { min_steps = 5, max_steps = 45 }, 2)
  local tp = new_host(sp, "tpe", {}, 2)
  local r = rng.new(5)
  local full = {}
  for i = 1, sp:size() do -- the same full-step results told to both
    local c = sp:at(i)
    if next(c) and #full < 30 and i % 7 == 0 then
      local json, v = sp:key(c), value_of(sp, c, r)
      local res = { status = "ok", value = v, steps = { v, v }, steps_budget = 45 }
      hv:tell(json, res)
      tp:tell(json, res)
      full[#full + 1] = json
    end
  end
  local a, b = hv:estimate(full), tp:estimate(full)
  for i = 1, #full do
    assert(a[i] and b[i] and math.abs(a[i].mean - b[i].mean) < 1e-12, "halving = its tpe base " .. i)
  end
  local rnd = new_host(sp, "halving", { base = { name = "random", options = {} } }, 2)
  eq(rnd:estimate(full)[1], false, "a base without estimate(): none")
end

-- ---- what the host checks in a user strategy's answer ----

local function write_file(text) return tap.temp_file(text, ".lua") end

local USER = [[
local M = {}
function M.new() return setmetatable({}, { __index = M }) end
function M:ask(n) return {} end
%s
return M
]]

local function user_host(method)
  local path = write_file(string.format(USER, method))
  return host.new({ path = "exp.lua", space = the_space(),
                    strategy = { name = "mine", path = path, options = {}, line = 30 },
                    budget = { trials = 10, hours = 0, steps = 45 } }, 1, {})
end

local function test_host_checks_the_answer()
  local sp = the_space()
  local c = sp:key(sp:at(3))
  local h = user_host("")
  eq(h:estimate({ c })[1], false, "no estimate() method: false")
  h = user_host("function M:estimate(cs) ESTIMATE_ARG = cs; return { { mean = 4.5, sd = 0.02 } } end")
  local got = h:estimate({ "{}", c })
  eq(got[1], false, "the baseline is not asked about")
  eq(got[2].mean, 4.5, "mean passed")
  eq(got[2].sd, 0.02, "sd passed")
  eq(#ESTIMATE_ARG, 1, "only the configurations of the space are asked about")
  eq(ESTIMATE_ARG[1].xla_gpu_thr, sp:at(3).xla_gpu_thr, "as decoded configuration tables")
  h = user_host("function M:estimate(cs) return { false } end")
  eq(h:estimate({ c })[1], false, "false: no estimate")
  h = user_host("function M:estimate(cs) return nil end")
  raises("^strategy 'mine': estimate%(%) must return a list parallel to its configurations, got nil$",
    h.estimate, h, { c })
  h = user_host("function M:estimate(cs) return { { mean = 'x', sd = 1 } } end")
  raises("^strategy 'mine': estimate%(%) item 1 must be false or { mean = number, sd = number >= 0 }, got { mean = x, sd = 1 }$",
    h.estimate, h, { c })
  h = user_host("function M:estimate(cs) return { { mean = 1, sd = -1 } } end")
  raises("item 1 must be false or", h.estimate, h, { c })
  h = user_host("function M:estimate(cs) return { { mean = 0/0, sd = 1 } } end")
  raises("item 1 must be false or", h.estimate, h, { c })
  h = user_host("function M:estimate(cs) return { 3 } end")
  raises("item 1 must be false or .*got 3$", h.estimate, h, { c })
  h = user_host("function M:estimate(cs) error('no model', 0) end")
  raises("^strategy 'mine': no model$", h.estimate, h, { c })
end

test("tpe_is_the_leave_one_out_ridge", test_tpe_is_the_leave_one_out_ridge)
test("tpe_without_a_model", test_tpe_without_a_model)
test("estimate_leaves_the_search_alone", test_estimate_leaves_the_search_alone)
test("halving_answers_from_its_base", test_halving_answers_from_its_base)
test("host_checks_the_answer", test_host_checks_the_answer)


-- The optional recipe() (docs/STRATEGIES.md): its configuration as canonical JSON, nil for
-- none or the baseline, a malformed answer the strategy's error.
local function test_host_checks_the_recipe()
  local sp = the_space()
  eq(user_host(""):recipe(), nil, "no recipe() method: none")
  eq(user_host("function M:recipe() return nil end"):recipe(), nil, "nil: none")
  eq(user_host("function M:recipe() return {} end"):recipe(), nil, "the baseline: none")
  RECIPE_CONFIG = sp:at(3)
  local h = user_host("function M:recipe() return RECIPE_CONFIG end")
  eq(h:recipe(), sp:key(sp:at(3)), "a configuration: its key")
  h = user_host("function M:recipe() return 'fast' end")
  raises("^strategy 'mine': recipe%(%) must return a configuration or nil, got string$",
    h.recipe, h)
  h = user_host("function M:recipe() return { no_such = 1 } end")
  raises("^strategy 'mine': recipe%(%) returned an invalid configuration: ", h.recipe, h)
end
test("host_checks_the_recipe", test_host_checks_the_recipe)
