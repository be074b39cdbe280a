-- search/tpe.lua's model machinery: the C Parzen sums (search/parzen.c) against a Lua
-- reference, the bounded window (an ask's densities hold at most `window` points however
-- long the sweep), the ranking kept sorted under repeats, the cost of an ask at 2,000
-- trials over 30 parameters, and the local phase (one-parameter moves of the incumbent).

local space = require("space")
local host = require("host")
local rng = require("rng")
local tap = require("tap")
local test, eq = tap.test, tap.eq

local function big_space(d)
  local kinds = { { kind = "bool" }, { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                  { kind = "int", lo = 0, hi = 100 }, { kind = "choice", values = { "a", "b", "c" } },
                  { kind = "float", lo = 0, hi = 1, step = 0.001 } }
  local flags = {}
  for i = 1, d do flags[string.format("xla_gpu_p%02d", i)] = kinds[i % #kinds + 1] end
  return space.new(flags, {}, {}, {}, "exp.lua")
end

local function new_host(sp, options, seed, history, trials)
  return host.new({ path = "exp.lua", space = sp,
                    strategy = { name = "tpe", options = options or {}, line = 30 },
                    budget = { trials = trials or 100, hours = 0, steps = 50 } }, seed or 1,
    history or {})
end

local function history(sp, n, r)
  local out = {}
  for i = 1, n do
    local u = r:random()
    local status = u < 0.2 and "oom" or (u < 0.25 and "timeout" or "ok")
    out[i] = { config = sp:sample(r), status = status, steps = {}, number = i,
               value = status == "ok" and 100 + 50 * r:random() or nil }
  end
  return out
end

-- The reference: sum over points of w * prod K(x | p), K an exact table (categorical:
-- 1 - eps on the value; ordered: a normalised Gaussian row) or a Gaussian normalised by
-- its continuous mass on a long range, missing values 1/n.
local function ref_kernel(spec, i, j)
  local n = spec.n
  if spec.cat then return i == j and 1 - spec.eps or spec.eps / math.max(1, n - 1) end
  if n == 1 then return 1 end
  local function g(a, b) local d = ((a - b) / (n - 1)) / spec.sigma; return math.exp(-0.5 * d * d) end
  if n <= 64 then
    local z = 0
    for a = 1, n do z = z + g(a, j) end
    return g(i, j) / z
  end
  return g(i, j) -- long range: the norm is compared as a ratio below
end

local function test_c_sums_match_lua()
  local r = rng.new(5)
  local specs = { { n = 2, cat = true, eps = 0.1 }, { n = 14, cat = false, sigma = 0.15 },
                  { n = 3, cat = true, eps = 0.3 }, { n = 40, cat = false, sigma = 0.05 },
                  { n = 1, cat = false, sigma = 1 } }
  local K = ft.parzen_kernels(specs)
  local P = ft.parzen_points(#specs)
  local pts, ws = {}, {}
  for k = 1, 37 do -- not a multiple of 4: the C loop's tail runs too
    local x = {}
    for d, s in ipairs(specs) do x[d] = (r:random() < 0.1) and nil or r:int(1, s.n) end
    pts[k], ws[k] = x, 0.5 + r:random()
    P:add(x, ws[k])
  end
  eq(P:count(), 37, "points")
  for _ = 1, 20 do
    local x = {}
    for d, s in ipairs(specs) do x[d] = r:int(1, s.n) end
    local want = 0
    for k, p in ipairs(pts) do
      local prod = ws[k]
      for d, s in ipairs(specs) do
        prod = prod * (p[d] and ref_kernel(s, x[d], p[d]) or 1 / s.n)
      end
      want = want + prod
    end
    local got = P:mass(K, x)
    assert(math.abs(got - want) <= 1e-12 * math.max(1, want), string.format("mass %g vs %g", got, want))
  end
  -- a tabled kernel's pick follows its row: the centre value is the most likely
  local counts = {}
  for _ = 1, 2000 do
    local i = K:pick(2, 7, r:random())
    counts[i] = (counts[i] or 0) + 1
  end
  for i, c in pairs(counts) do assert(c <= counts[7], "pick peaks at the centre, not " .. i) end
  tap.raises("index out of range", function() P:mass(K, { 3, 1, 1, 1, 1 }) end)
  tap.raises("index out of range", function() P:add({ -1 }) end)
end

-- Long ranges (more than 64 values): the C column (a recurrence, not an exp per value)
-- against exp directly, relative to the centre.
local function test_long_range_column()
  local n, sigma = 1001, 0.07
  local K = ft.parzen_kernels({ { n = n, cat = false, sigma = sigma } })
  for _, x in ipairs({ 1, 300, 1001 }) do
    for _, j in ipairs({ 1, 2, 299, 500, 777, 1001 }) do
      local P = ft.parzen_points(1)
      P:add({ j })
      local ratio = P:mass(K, { x }) / K:eval(1, j, j)
      local want = ref_kernel({ n = n, sigma = sigma }, x, j)
      assert(math.abs(ratio - want) <= 1e-9 * math.max(want, 1e-300) + 1e-300,
        string.format("K(%d|%d): %g vs %g", x, j, ratio, want))
    end
  end
end

-- However long the sweep, an ask's densities hold at most `window` points (plus proposals
-- still running in g); below the window, every observation.
local function test_window_bounds_the_model()
  local sp = big_space(12)
  local h = new_host(sp, { window = 40 }, 3, history(sp, 600, rng.new(9)), 2000)
  local m = h.strategy:models()
  assert(m.l.set:count() <= 25, "l holds the good ones")
  assert(m.g.set:count() <= 40, "g bounded: " .. m.g.set:count())
  assert(m.ran.set:count() <= 40 and m.fail.set:count() <= 40, "feasibility bounded")
  eq(m.ran.set:count(), 40, "ran full")
  -- the boundary half of g: the ok results ranked just below the good ones
  local ranked = h.strategy.ranked
  local n_good = m.l.set:count()
  local inside = {}
  for _, x in ipairs(m.g.points) do inside[x] = true end
  for i = n_good + 1, n_good + 20 do
    assert(inside[h.strategy:vec(ranked[i])], "boundary rank " .. i .. " in g")
  end
  local small = new_host(sp, { window = 1000 }, 3, history(sp, 60, rng.new(9)), 200)
  local sm = small.strategy:models()
  eq(sm.ran.set:count() + 0, #(function() local t = {}
    for _, id in pairs(small.strategy.obs) do
      if small.strategy:observation(id).ran > 0 then t[#t + 1] = 1 end
    end
    return t end)(), "below the window every run counts")
end

-- The ranking is the full sort of the ok means at every point, repeats included.
local function test_ranking_stays_sorted()
  local sp = big_space(6)
  local h = new_host(sp, {}, 4, {}, 300)
  local r = rng.new(11)
  local configs = {}
  for i = 1, 120 do
    local c = (i > 20 and r:random() < 0.3) and configs[r:int(1, #configs)] or sp:sample(r)
    configs[#configs + 1] = c
    h:tell(sp:key(c), { status = "ok", value = r:random() * 10, steps = {}, number = i })
  end
  local ranked = h.strategy.ranked
  local n_ok = 0
  for _, id in pairs(h.strategy.obs) do
    if h.strategy:observation(id).weight > 0 then n_ok = n_ok + 1 end
  end
  eq(#ranked, n_ok, "every ok observation ranked once")
  for i = 2, #ranked do
    local a, b = h.strategy:observation(ranked[i - 1]), h.strategy:observation(ranked[i])
    assert(a.value < b.value or (a.value == b.value and a.id < b.id), "sorted at " .. i)
    assert(a.value == a.sum / a.weight, "value is the mean")
  end
end

-- 2,000 finished trials over 30 parameters: an ask stays far below the 50M budget (the
-- VM instructions; the kernel sums run in C).
local function test_cost_at_2000()
  local sp = big_space(30)
  local h = new_host(sp, {}, 1, history(sp, 2000, rng.new(3)), 5000)
  local count = 0
  debug.sethook(function() count = count + 1 end, "", 1000)
  local p = h:ask(1)[1]
  debug.sethook()
  assert(p, "a proposal")
  assert(count * 1000 < 5e6, "one ask at 2,000 trials took " .. count * 1000 .. " instructions")
  print(string.format("tpe: one ask at 2,000 trials x 30 parameters: %.2fM instructions",
    count / 1000))
end

-- With local_share = 1 and the ramp done, every model proposal is a one-parameter move of
-- the incumbent (or of the next best once its neighbourhood is used up), never a repeat.
local function test_local_phase_moves_the_incumbent()
  local sp = big_space(8)
  local h = new_host(sp, { startup = 5, local_share = 1, local_ramp = 0.05, surrogate = 0 }, 2, {}, 200)
  local r, seen = rng.new(8), {}
  local moves = 0
  for i = 1, 60 do
    local p = h:ask(1)[1]
    assert(p and not seen[p.json], "fresh proposal " .. i)
    seen[p.json] = true
    local s = h.strategy
    if i > 16 then
      local best = s:vec(s.ranked[1])
      local x = s:indices(sp:decode_json(p.json))
      local diff = 0
      for d = 1, #x do if x[d] ~= best[d] then diff = diff + 1 end end
      if diff == 1 then moves = moves + 1 end
    end
    h:tell(p.json, { status = "ok", value = r:random() * 100, steps = {}, number = i })
  end
  assert(moves >= 40, "local moves of the incumbent: " .. moves .. " of 44")
  local plain = new_host(sp, { startup = 5 }, 2, {}, 200)
  tap.raises("local_share must be a number from 0 to 1", function()
    new_host(sp, { local_share = 2 }, 2, {}, 200)
  end)
  assert(plain.strategy.o.local_share >= 0)
end

-- The local phase and a small window replay exactly under one seed, and differ under another.
local function test_deterministic_with_local_phase()
  local sp = big_space(10)
  local function trace(seed)
    local h = new_host(sp, { startup = 5, local_share = 0.7, local_ramp = 0.2, window = 12, surrogate = 0 },
      seed, {}, 80)
    local r, out = rng.new(99), {}
    for i = 1, 40 do
      local got = h:ask(2)
      for _, p in ipairs(got) do
        out[#out + 1] = p.json
        local oom = r:random() < 0.15
        h:tell(p.json, { status = oom and "oom" or "ok", value = not oom and r:random() or nil,
                         steps = {}, number = i })
      end
    end
    return table.concat(out, "\n")
  end
  local a, b, c = trace(5), trace(5), trace(6)
  eq(a, b, "same seed, same proposals")
  assert(a ~= c, "another seed, other proposals")
  local seen = {}
  for line in a:gmatch("[^\n]+") do
    assert(not seen[line], "proposed twice: " .. line)
    seen[line] = true
  end
end

test("C Parzen sums match the Lua reference", test_c_sums_match_lua)
test("deterministic with the local phase and a window", test_deterministic_with_local_phase)
test("long-range kernel columns", test_long_range_column)
test("the window bounds the model", test_window_bounds_the_model)
test("the ranking stays sorted under repeats", test_ranking_stays_sorted)
test("cost of an ask at 2,000 trials x 30 parameters", test_cost_at_2000)
test("the local phase moves the incumbent", test_local_phase_moves_the_incumbent)
