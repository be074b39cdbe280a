-- search/tpe.lua's linear surrogate (tpe{ surrogate = share }): Bayesian ridge regression of
-- log(value) on main effects, Thompson-sampled over candidates from l and one- and
-- two-parameter moves of the best configurations, with the Parzen feasibility model kept.

local space = require("space")
local host = require("host")
local rng = require("rng")
local tap = require("tap")
local test, eq = tap.test, tap.eq

-- 12 parameters: bools, a pow2 threshold, integer and float grids, a choice.
local function the_space()
  local flags = {}
  for i = 1, 6 do flags[string.format("xla_gpu_b%02d", i)] = { kind = "bool" } end
  flags.xla_gpu_thr = { kind = "pow2", lo = 1 << 20, hi = 1 << 30 }
  flags.xla_gpu_n = { kind = "int", lo = 1, hi = 8 }
  flags.xla_gpu_frac = { kind = "float", lo = 0.5, hi = 0.95, step = 0.05 }
  flags.xla_gpu_mode = { kind = "choice", values = { "a", "b", "c", "d" } }
  flags.xla_gpu_q1 = { kind = "bool" }
  flags.xla_gpu_q2 = { kind = "int", lo = 0, hi = 3 }
  return space.new(flags, {}, {}, {}, "exp.lua")
end

local function new_host(sp, options, seed, trials)
  return host.new({ path = "exp.lua", space = sp,
                    strategy = { name = "tpe", options = options, line = 30 },
                    budget = { trials = trials, hours = 0, steps = 50 } }, seed, {})
end

-- A planted additive log landscape: b01 on costs 20 %, the threshold is best at its
-- middle, more mode is better ("d"), frac has a monotone effect, the rest nothing.
local function planted(c)
  local lv = math.log(100)
  if c.xla_gpu_b01 then lv = lv + 0.2 end
  local t = math.log(c.xla_gpu_thr, 2) - 25
  lv = lv + 0.004 * t * t
  lv = lv + ({ a = 0.12, b = 0.08, c = 0.04, d = 0 })[c.xla_gpu_mode]
  lv = lv + 0.2 * (0.95 - c.xla_gpu_frac)
  return math.exp(lv)
end

local function optimum()
  return math.exp(math.log(100))
end

-- The model recovers the planted main effects from 60 random points.
local function test_recovers_additive_effects()
  local sp = the_space()
  local h = new_host(sp, { surrogate = 1, startup = 100 }, 3, 200)
  local r = rng.new(4)
  for i = 1, 60 do
    local c = sp:sample(r)
    h:tell(sp:encode_json(c), { status = "ok", value = planted(c), steps = {}, number = i })
  end
  local s = h.strategy
  s.ridge:fit(nil)
  local function pred(c) return s.ridge:predict(s:indices(c)) end
  local base = sp:sample(rng.new(9))
  base.xla_gpu_b01, base.xla_gpu_mode, base.xla_gpu_frac = false, "a", 0.7
  local on = {}
  for k, v in pairs(base) do on[k] = v end
  on.xla_gpu_b01 = true
  local b01 = pred(on) - pred(base)
  assert(math.abs(b01 - 0.2) < 0.04, "b01's effect 0.2, learnt " .. b01)
  on.xla_gpu_b01, on.xla_gpu_mode = false, "d"
  local mode = pred(on) - pred(base)
  assert(math.abs(mode + 0.12) < 0.04, "mode d against a: -0.12, learnt " .. mode)
  on.xla_gpu_mode, on.xla_gpu_b02 = "a", not base.xla_gpu_b02
  local null = pred(on) - pred(base)
  assert(math.abs(null) < 0.04, "b02 does nothing, learnt " .. null)
end

-- With the surrogate on, a 60-trial search of the additive landscape ends within 3 % of
-- its optimum (its space has 1.6 million configurations).
local function test_finds_the_additive_optimum()
  local sp = the_space()
  local worst = 0
  for seed = 1, 3 do
    local h = new_host(sp, { surrogate = 1 }, seed, 60)
    local best = math.huge
    for i = 1, 60 do
      local p = h:ask(1)[1]
      local c = sp:decode_json(p.json)
      local v = planted(c)
      best = math.min(best, v)
      h:tell(p.json, { status = "ok", value = v, steps = {}, number = i })
    end
    worst = math.max(worst, best / optimum() - 1)
  end
  assert(worst < 0.03, string.format("worst regret of three seeds %.2f %%", worst * 100))
end

-- A planted OOM region (b03 on) that the value model alone would favour (it is 10 %
-- faster): the feasibility model keeps the surrogate's proposals out of it.
local function test_avoids_planted_oom()
  local sp = the_space()
  local h = new_host(sp, { surrogate = 1 }, 7, 80)
  local late_oom = 0
  for i = 1, 80 do
    local p = h:ask(1)[1]
    local c = sp:decode_json(p.json)
    if c.xla_gpu_b03 then
      if i > 30 then late_oom = late_oom + 1 end
      h:tell(p.json, { status = "oom", steps = {}, number = i })
    else
      h:tell(p.json, { status = "ok", value = planted(c), steps = {}, number = i })
    end
  end
  assert(late_oom <= 5, "proposals into the OOM region after trial 30: " .. late_oom .. " of 50")
end

-- Proposals replay under one seed, differ under another, and never repeat.
local function test_deterministic_never_twice()
  local sp = the_space()
  local function trace(seed)
    local h = new_host(sp, { surrogate = 0.7, startup = 6 }, seed, 80)
    local r, out = rng.new(99), {}
    for i = 1, 35 do
      for _, p in ipairs(h:ask(2)) do
        out[#out + 1] = p.json
        local oom = r:random() < 0.15
        h:tell(p.json, { status = oom and "oom" or "ok",
                         value = not oom and planted(sp:decode_json(p.json)) or nil,
                         steps = {}, number = i })
      end
    end
    return table.concat(out, "\n")
  end
  local a, b, c = trace(5), trace(5), trace(6)
  eq(a, b, "same seed, same proposals")
  assert(a ~= c, "another seed, other proposals")
  local seen, n = {}, 0
  for line in a:gmatch("[^\n]+") do
    assert(not seen[line], "proposed twice: " .. line)
    seen[line], n = true, n + 1
  end
  eq(n, 70, "70 proposals")
end

-- A repeat of a configuration moves its target, not its row: the model equals one built
-- from the means.
local function test_repeats_move_the_target()
  local sp = the_space()
  local r = rng.new(12)
  local cs = {}
  for i = 1, 20 do cs[i] = sp:sample(r) end
  local a = new_host(sp, { surrogate = 1, startup = 100 }, 1, 200)
  local b = new_host(sp, { surrogate = 1, startup = 100 }, 1, 200)
  for i, c in ipairs(cs) do
    a:tell(sp:encode_json(c), { status = "ok", value = 100, steps = {}, number = i })
    a:tell(sp:encode_json(c), { status = "ok", value = planted(c) ^ 2 / 100, steps = {}, number = i })
    b:tell(sp:encode_json(c), { status = "ok", value = (100 + planted(c) ^ 2 / 100) / 2, steps = {},
                        number = i })
  end
  eq(a.strategy.ridge.n, 20, "one row per configuration")
  a.strategy.ridge:fit(nil)
  b.strategy.ridge:fit(nil)
  local wa, wb = a.strategy.ridge.c:weights(), b.strategy.ridge.c:weights()
  for k = 1, #wa do
    assert(math.abs(wa[k] - wb[k]) < 1e-9, "weight " .. k .. ": " .. wa[k] .. " vs " .. wb[k])
  end
end

local function test_options_and_cost()
  local sp = the_space()
  tap.raises("surrogate must be a number from 0 to 1", function()
    new_host(sp, { surrogate = 2 }, 1, 50)
  end)
  tap.raises("ridge must be a positive number", function()
    new_host(sp, { surrogate = 1, ridge = 0 }, 1, 50)
  end)
  -- one ask at 1,000 finished trials over 30 parameters
  local flags = {}
  local kinds = { { kind = "bool" }, { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                  { kind = "int", lo = 0, hi = 100 }, { kind = "choice", values = { "a", "b", "c" } },
                  { kind = "float", lo = 0, hi = 1, step = 0.001 } }
  for i = 1, 30 do flags[string.format("xla_gpu_p%02d", i)] = kinds[i % #kinds + 1] end
  local big = space.new(flags, {}, {}, {}, "exp.lua")
  local r, hist = rng.new(3), {}
  for i = 1, 1000 do
    local oom = r:random() < 0.2
    hist[i] = { config = big:sample(r), status = oom and "oom" or "ok", steps = {}, number = i,
                value = not oom and 100 + 50 * r:random() or nil }
  end
  local h = host.new({ path = "exp.lua", space = big,
                       strategy = { name = "tpe", options = { surrogate = 1 }, line = 30 },
                       budget = { trials = 5000, hours = 0, steps = 50 } }, 1, hist)
  local count = 0
  debug.sethook(function() count = count + 1 end, "", 1000)
  local p = h:ask(1)[1]
  debug.sethook()
  assert(p, "a proposal")
  assert(count * 1000 < 1e6, "one ask at 1,000 trials took " .. count * 1000 .. " instructions")
  print(string.format("tpe surrogate: one ask at 1,000 trials x 30 parameters: %.2fM instructions",
    count / 1000))
end

-- Relevance determination (ard = 3; off by default): after 40 trials on the planted landscape
-- the strong boolean (b01, 20 %) has a lower prior precision than the five no-op booleans, the
-- precisions stay within [ridge / 10, 10 ridge]; the default leaves the plain ridge's.
local function test_relevance_in_the_surrogate()
  local sp = the_space()
  local function precisions(options)
    local h = new_host(sp, options, 7, 40)
    for i = 1, 40 do
      local p = h:ask(1)[1]
      local c = sp:decode_json(p.json)
      h:tell(p.json, { status = "ok", value = planted(c), steps = {}, number = i })
    end
    local s, col, by = h.strategy, 2, {}
    local lam = s.ridge.c:precisions()
    for _, q in ipairs(s.params) do -- the columns of each parameter (search/ridge.c's layout)
      by[q.name] = lam[col]
      col = col + ((q.kind == "bool" or q.kind == "choice" or q.n <= 4) and q.n - 1 or 2)
    end
    eq(col - 1, #lam, "every column accounted for")
    return by, lam
  end
  local by, lam = precisions({ ard = 3 })
  for k = 2, #lam do
    assert(lam[k] >= 0.003 - 1e-12 and lam[k] <= 0.3 + 1e-12, "precision out of bounds " .. lam[k])
  end
  local noop = 0
  for i = 2, 6 do noop = noop + by[string.format("xla_gpu_b%02d", i)] / 5 end
  assert(by.xla_gpu_b01 < noop, string.format("strong %.4g, no-ops %.4g", by.xla_gpu_b01, noop))
  local _, plain = precisions({})
  for k = 2, #plain do eq(plain[k], 0.03, "the default: the plain ridge") end
  tap.raises("ard must be", function() new_host(sp, { ard = -1 }, 1, 50) end)
end

-- An integer range of a billion values: refused when the strategy is made (`check` exits 2
-- at the strategy's line), not at the first model ask after the start-up trials; with a step
-- that leaves at most 2^20 values it runs.
local function test_long_ranges_refused_early()
  local function with(hi, step)
    return space.new({ xla_gpu_all_reduce_combine_threshold_bytes =
                         { kind = "int", lo = 1024, hi = hi, step = step } }, {}, {}, {}, "exp.lua")
  end
  tap.raises("parameter xla_gpu_all_reduce_combine_threshold_bytes has 1073740801 values; " ..
             "tpe{} models at most 1048576", function() new_host(with(1073741824, 1), {}, 1, 30) end)
  local sp = with(1073741824, 1024)
  local h = new_host(sp, {}, 1, 30)
  for i = 1, 12 do -- past the start-up trials: the model's asks run
    local p = h:ask(1)[1]
    local v = sp:decode_json(p.json).xla_gpu_all_reduce_combine_threshold_bytes
    h:tell(p.json, { status = "ok", value = 1 + v / 1e9, steps = {}, number = i })
  end
end

test("the surrogate recovers planted additive effects", test_recovers_additive_effects)
test("the surrogate finds an additive optimum", test_finds_the_additive_optimum)
test("the feasibility model avoids a planted OOM region", test_avoids_planted_oom)
test("deterministic under a seed, never a configuration twice", test_deterministic_never_twice)
test("a repeat moves the target, not the row", test_repeats_move_the_target)
test("options checked; the cost of an ask at 1,000 trials", test_options_and_cost)
test("relevance determination in the surrogate", test_relevance_in_the_surrogate)
test("a range too long to model is refused when the strategy is made", test_long_ranges_refused_early)
