-- search/ridge.c (ft.ridge_new), the Bayesian ridge regression behind tpe{}'s surrogate: the C
-- model against a plain Lua reference (the implementation it replaced) on random rows,
-- repeats and Thompson draws; a planted linear effect recovered; bad input refused. And
-- tpe{}'s lazy scoring of the surrogate's candidates picks what scoring them all picks.

local space = require("space")
local host = require("host")
local rng = require("rng")
local tap = require("tap")
local test, eq = tap.test, tap.eq

-- The reference: dense X'X, Cholesky, forward and back solves, in Lua.
local function ref_new(specs, lambda)
  local self = { specs = specs, lambda = lambda, off = {}, p = 1, n = 0, yy = 0, xtx = {}, xty = {} }
  for dim, q in ipairs(specs) do
    self.off[dim] = self.p
    if q.cat or q.n <= 4 then self.p = self.p + q.n - 1 elseif q.n > 1 then self.p = self.p + 2 end
  end
  for i = 1, self.p do
    self.xty[i] = 0
    self.xtx[i] = {}
    for j = 1, self.p do self.xtx[i][j] = 0 end
  end
  return self
end

local function ref_row(self, x)
  local f = {}
  for i = 1, self.p do f[i] = 0 end
  f[1] = 1
  for dim, q in ipairs(self.specs) do
    local j, o = x[dim], self.off[dim]
    if j and (q.cat or q.n <= 4) then
      if j > 1 then f[o + j - 1] = 1 end
    elseif j and q.n > 1 then
      local u = (j - 1) / (q.n - 1) - 0.5
      f[o + 1], f[o + 2] = u, u * u - 1 / 12
    end
  end
  return f
end

local function ref_add(self, x, y, old)
  local f = ref_row(self, x)
  if old == nil then
    for a = 1, self.p do for b = 1, self.p do self.xtx[a][b] = self.xtx[a][b] + f[a] * f[b] end end
    self.n, old = self.n + 1, 0
  end
  self.yy = self.yy - old * old + y * y
  for a = 1, self.p do self.xty[a] = self.xty[a] + f[a] * (y - old) end
end

local function ref_fit(self, e)
  local p, A = self.p, {}
  for i = 1, p do
    A[i] = {}
    for j = 1, p do A[i][j] = self.xtx[i][j] + (i == j and (i == 1 and 1e-6 or self.lambda) or 0) end
  end
  local L = {}
  for i = 1, p do
    L[i] = {}
    for j = 1, i do
      local s = A[i][j]
      for k = 1, j - 1 do s = s - L[i][k] * L[j][k] end
      L[i][j] = i == j and math.sqrt(math.max(s, 1e-12)) or s / L[j][j]
    end
  end
  local z, m = {}, {}
  for i = 1, p do
    local s = self.xty[i]
    for k = 1, i - 1 do s = s - L[i][k] * z[k] end
    z[i] = s / L[i][i]
  end
  for i = p, 1, -1 do
    local s = z[i]
    for k = i + 1, p do s = s - L[k][i] * m[k] end
    m[i] = s / L[i][i]
  end
  local rss = self.yy
  for i = 1, p do
    local s = 0
    for j = 1, p do s = s + self.xtx[i][j] * m[j] end
    rss = rss - 2 * m[i] * self.xty[i] + m[i] * s
  end
  local sigma = math.sqrt(math.max(rss / math.max(1, self.n), 1e-4))
  if not e then return m, sigma end
  local v, w = {}, {}
  for i = p, 1, -1 do
    local s = e[i]
    for k = i + 1, p do s = s - L[k][i] * v[k] end
    v[i] = s / L[i][i]
  end
  for i = 1, p do w[i] = m[i] + sigma * v[i] end
  return w, sigma
end

local SPECS = { { n = 2, cat = true }, { n = 4, cat = true }, { n = 3 }, { n = 34 },
                { n = 1001 }, { n = 1 }, { n = 7, cat = true }, { n = 5 } }

local function close(a, b, what)
  assert(math.abs(a - b) <= 1e-9 * math.max(1, math.abs(a), math.abs(b)),
    string.format("%s: %.17g against %.17g", what, a, b))
end

local function test_matches_reference()
  local r = rng.new(11)
  local c, ref = ft.ridge_new(SPECS, 0.03), ref_new(SPECS, 0.03)
  eq(c:cols(), ref.p, "feature columns")
  local xs, ys = {}, {}
  for k = 1, 200 do
    local x = {}
    for dim, q in ipairs(SPECS) do x[dim] = r:int(1, q.n) end
    local y = 3 + 0.5 * (x[1] - 1) - 0.2 * (x[4] / 34) ^ 2 + 0.05 * r:normal()
    xs[k], ys[k] = x, y
    c:add(x, y)
    ref_add(ref, x, y)
    if k % 7 == 0 then -- a repeat moves the target of an earlier row
      local j = r:int(1, k)
      local y2 = ys[j] + 0.01 * r:normal()
      c:add(xs[j], y2, ys[j])
      ref_add(ref, xs[j], y2, ys[j])
      ys[j] = y2
    end
    if k % 50 == 0 then
      local e = {}
      for i = 1, ref.p do e[i] = r:normal() end
      for _, draw in ipairs({ false, true }) do
        local sc = c:fit(draw and e or nil)
        local w, sr = ref_fit(ref, draw and e or nil)
        close(sc, sr, "sigma at " .. k)
        local wc = c:weights()
        for i = 1, ref.p do close(wc[i], w[i], "weight " .. i .. " at " .. k) end
        for t = 1, 5 do
          local x = xs[r:int(1, k)]
          local f, s = ref_row(ref, x), 0
          for i = 1, ref.p do s = s + w[i] * f[i] end
          close(c:predict(x), s, "prediction")
        end
      end
    end
  end
  eq(c:count(), 200, "one row per distinct observation")
end

local function test_recovers_planted_effect()
  local specs = { { n = 2, cat = true }, { n = 64 } }
  local c = ft.ridge_new(specs, 0.03)
  local r = rng.new(5)
  for _ = 1, 300 do
    local x = { r:int(1, 2), r:int(1, 64) }
    local u = (x[2] - 1) / 63 - 0.5
    c:add(x, 1 + 0.3 * (x[1] - 1) + 0.4 * u + 0.001 * r:normal())
  end
  c:fit()
  local w = c:weights()
  close(math.floor(w[2] * 100 + 0.5) / 100, 0.3, "the boolean's effect")
  close(math.floor(w[3] * 100 + 0.5) / 100, 0.4, "the slope")
  assert(math.abs(w[4]) < 0.01, "no curvature planted, learnt " .. w[4])
  -- a missing index (a partial configuration) adds no feature
  close(c:predict({ 2 }), w[1] + w[2], "missing parameter")
end

-- Automatic relevance determination (R:relevance): with fewer rows than a model of 12
-- parameters has columns to spare, a planted strong parameter keeps its weight and the
-- lowest precision, the ten planted no-ops are shrunk toward 0 far more than the plain
-- ridge shrinks them, and the precisions stay within [lo, hi].
local function test_relevance_shrinks_no_ops()
  local specs = { { n = 2, cat = true }, { n = 16 } }
  for k = 3, 12 do specs[k] = { n = k % 2 == 0 and 2 or 8, cat = k % 2 == 0 } end
  local plain, ard = ft.ridge_new(specs, 0.03), ft.ridge_new(specs, 0.03)
  local r = rng.new(11)
  for _ = 1, 14 do
    local x = {}
    for k, q in ipairs(specs) do x[k] = r:int(1, q.n) end
    local u = (x[2] - 1) / 15 - 0.5
    local y = 1 + 0.4 * (x[1] - 1) + 0.05 * u + 0.01 * r:normal()
    plain:add(x, y)
    ard:add(x, y)
  end
  plain:fit()
  local s2 = ard:relevance(10, 0.03, 30)
  assert(s2 > 0 and s2 < 0.01, "noise variance " .. s2)
  ard:fit()
  local wp, wa, lam = plain:weights(), ard:weights(), ard:precisions()
  eq(#lam, ard:cols(), "one precision per column")
  close(lam[1], 1e-6, "the intercept stays free")
  close(math.floor(wa[2] * 10 + 0.5) / 10, 0.4, "the strong boolean keeps its effect")
  local noop_p, noop_a = 0, 0
  for i = 5, ard:cols() do -- columns of parameters 3-12, the no-ops
    noop_p, noop_a = noop_p + math.abs(wp[i]), noop_a + math.abs(wa[i])
    assert(lam[i] >= 0.03 and lam[i] <= 30, "precision out of range " .. lam[i])
    assert(lam[i] > lam[2], "a no-op shrunk less than the strong parameter")
  end
  assert(noop_a < 0.5 * noop_p, string.format("no-ops' weights %.4f against %.4f", noop_a, noop_p))
  -- zero iterations change nothing; the next fit must follow relevance (no stale weights)
  local before = ard:precisions()
  ard:relevance(0, 0.03, 30)
  tap.raises("no fit yet", function() ard:predict({ 1 }) end)
  ard:fit()
  for i, v in ipairs(ard:precisions()) do close(v, before[i], "unchanged precision " .. i) end
end

-- R:leverage: the leave-one-out identity y - (y - mu) / (1 - h) gives what a model fit
-- without the row predicts for it (a repeat's row counts once, at its last target).
local function test_leverage_leave_one_out()
  local r = rng.new(5)
  local xs, ys = {}, {}
  for k = 1, 30 do
    local x = {}
    for dim, q in ipairs(SPECS) do x[dim] = r:int(1, q.n) end
    xs[k], ys[k] = x, 1 + 0.3 * (x[2] - 1) - 0.1 * x[8] + 0.05 * r:normal()
  end
  local all = ft.ridge_new(SPECS, 0.03)
  for k = 1, 30 do all:add(xs[k], ys[k]) end
  all:add(xs[3], ys[3] + 0.02, ys[3]) -- a repeat moves row 3's target
  ys[3] = ys[3] + 0.02
  tap.raises("no fit yet", function() ft.ridge_new(SPECS, 1):leverage(xs[1]) end)
  all:fit(nil)
  for _, j in ipairs({ 1, 3, 17, 30 }) do
    local h = all:leverage(xs[j])
    assert(h > 0 and h < 1, "leverage in (0, 1): " .. h)
    local loo = ys[j] - (ys[j] - all:predict(xs[j])) / (1 - h)
    local without = ft.ridge_new(SPECS, 0.03)
    for k = 1, 30 do if k ~= j then without:add(xs[k], ys[k]) end end
    without:fit(nil)
    close(loo, without:predict(xs[j]), "leave-one-out prediction of row " .. j)
  end
end

local function test_bad_input()
  tap.raises("lambda must be a positive number", function() ft.ridge_new({}, 0) end)
  tap.raises("spec 1: n must be an integer", function() ft.ridge_new({ { n = 0 } }, 1) end)
  tap.raises("spec 1 is not a table", function() ft.ridge_new({ 3 }, 1) end)
  tap.raises("feature columns", function() ft.ridge_new({ { n = 5000, cat = true } }, 1) end)
  local c = ft.ridge_new({ { n = 3, cat = true } }, 1)
  tap.raises("no fit yet", function() c:predict({ 1 }) end)
  tap.raises("index out of range 1..3", function() c:add({ 4 }, 1) end)
  tap.raises("fewer normals than columns", function() c:fit({}) end)
  tap.raises("iterations must be from 0 to 1000", function() c:relevance(-1, 1, 2) end)
  tap.raises("lo must be a positive number", function() c:relevance(1, 0, 2) end)
  tap.raises("hi must be a number at least lo", function() c:relevance(1, 3, 2) end)
  tap.raises("one precision per column", function() c:set_precisions({ 1, 1 }) end)
  tap.raises("precision 2 is not a positive number", function() c:set_precisions({ 1, 0, 1 }) end)
  c:set_precisions({ 1e-6, 2, 3 })
  eq(c:precisions()[3], 3, "set_precisions sets")
end

-- The surrogate's lazy scoring (bounds, then the Parzen feasibility only where it can
-- change the answer) proposes exactly what scoring every candidate proposes.
local function test_lazy_scoring_is_exact()
  local flags = {}
  for i = 1, 12 do
    flags[string.format("xla_gpu_p%02d", i)] = i % 3 == 0 and { kind = "bool" } or
      { kind = "pow2", lo = 1 << 10, hi = 1 << 30 }
  end
  local sp = space.new(flags, {}, {}, {}, "exp.lua")
  local function value(c)
    if c.xla_gpu_p01 > (1 << 18) and c.xla_gpu_p02 > (1 << 18) then return nil end -- OOM
    local v = 100
    for i = 1, 12 do
      local x = c[string.format("xla_gpu_p%02d", i)]
      v = v + (type(x) == "boolean" and (x and -i or 0) or 0.5 * i * math.abs(math.log(x, 2) - 20))
    end
    return v
  end
  local function run(all, seed)
    local h = host.new({ path = "exp.lua", space = sp, strategy = { name = "tpe", options = {}, line = 1 },
                         budget = { trials = 80, hours = 0, steps = 50 } }, seed, {})
    h.strategy.score_all = all
    local out = {}
    for i = 1, 80 do
      local p = h:ask(1)[1]
      local v = value(sp:decode_json(p.json))
      out[i] = p.json
      h:tell(p.json, { status = v and "ok" or "oom", value = v, steps = {}, number = i })
    end
    return out
  end
  for seed = 1, 4 do
    local lazy, full = run(false, seed), run(true, seed)
    for i = 1, 80 do eq(lazy[i], full[i], "seed " .. seed .. ", proposal " .. i) end
  end
end

test("C ridge matches the Lua reference", test_matches_reference)
test("recovers a planted effect", test_recovers_planted_effect)
test("relevance shrinks planted no-ops", test_relevance_shrinks_no_ops)
test("leverage gives the leave-one-out prediction", test_leverage_leave_one_out)
test("bad input is refused", test_bad_input)
test("lazy scoring is exact", test_lazy_scoring_is_exact)

