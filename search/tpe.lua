-- tpe{}: the Bayesian-lite default, a Tree-structured Parzen Estimator over the space's
-- value indices. A space-filling (Latin hypercube) start, then each proposal is the best of
-- `candidates` samples from l(x), the density of the good configurations, scored by
--   P(feasible | x) / (gamma + (1 - gamma) g(x) / l(x))        (TPE's expected improvement)
-- where g(x) is the density of the rest (slow outcomes and trials still running included)
-- and P(feasible) compares the densities of configurations that ran and that failed (oom,
-- invalid, crash), so a region that ran out of memory is learnt, not sampled again.
-- Densities are multivariate Parzen estimators (a product kernel per observation), so
-- interactions such as "large threshold AND small memory fraction" are captured.
-- Owns its model and seen set; must not use math.random or propose a configuration twice.

local kit = require("kit")

local tpe = {}
local T = {}
T.__index = T

local OPTIONS = { "startup", "candidates", "gamma", "max_good", "prior_weight" }
-- Failed outcomes feed the feasibility model with these weights: a crash may be a flaky
-- node rather than the configuration, so it counts half.
local FAILED = { oom = 1.0, invalid = 1.0, wrong = 1.0, crash = 0.5 }
-- Outcomes that ran but tell us the configuration is slow: bad, not infeasible.
local SLOW = { timeout = true, no_metric = true, pruned = true }
local MATRIX_MAX = 64        -- ordered params up to this many values get exact kernel tables
local SIGMA0 = 0.2           -- kernel width in the unit interval before the Scott shrink
local CAT_EPS0 = 0.2         -- mass a categorical kernel moves to the other values
local SQRT2PI = math.sqrt(2 * math.pi)

local function check_options(options, n_params)
  kit.check_options(options, "tpe", OPTIONS)
  -- The default start: a sixth of a known trial budget, at least 8, but at most 2 per
  -- parameter and a third of the budget (never below 5). A longer start (2 per parameter up
  -- to a third of the budget) found no better configurations at 50 trials and spent more
  -- of them out of memory before any model existed (docs/BENCHMARKS.md).
  local trials = type(options.budget) == "table" and math.tointeger(options.budget.trials)
  if not (trials and trials > 0) then trials = nil end
  local startup = math.min(math.max(8, (trials or 0) // 6), math.max(5, 2 * n_params))
  if trials then startup = math.min(startup, math.max(5, trials // 3)) end
  return { startup = kit.int(options, "startup", startup, 0),
           candidates = kit.int(options, "candidates", 64, 1),
           max_good = kit.int(options, "max_good", 25, 1),
           gamma = kit.number(options, "gamma", 0.25, function(g) return g > 0 and g < 1 end,
             "a number between 0 and 1"),
           prior_weight = kit.number(options, "prior_weight", 1.0, function(w) return w > 0 end,
             "a positive number") }
end

-- ---- kernels: one per parameter and model, over the parameter's value indices ----

-- Standard normal CDF (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7): truncation mass of a
-- kernel near the ends of a long range.
local function phi_cdf(z)
  local x = math.abs(z) / math.sqrt(2)
  local t = 1 / (1 + 0.3275911 * x)
  local y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
    + 0.254829592) * t * math.exp(-x * x)
  return z >= 0 and 0.5 * (1 + y) or 0.5 * (1 - y)
end

local function is_categorical(p) return p.kind == "bool" or p.kind == "choice" end

local function unit(p, i)
  if p.n == 1 then return 0.5 end
  return (i - 1) / (p.n - 1)
end

-- K(i | j) as a table of rows, each normalised over i: the exact discrete kernel.
local function kernel_matrix(p, sigma, eps)
  local m = {}
  for j = 1, p.n do
    local row, z = {}, 0
    for i = 1, p.n do
      local w
      if is_categorical(p) then
        w = (i == j) and (1 - eps) or eps / math.max(1, p.n - 1)
      else
        local d = (unit(p, i) - unit(p, j)) / sigma
        w = math.exp(-0.5 * d * d)
      end
      row[i], z = w, z + w
    end
    for i = 1, p.n do row[i] = row[i] / z end
    m[j] = row
  end
  return m
end

-- A kernel for one parameter: eval(i, j) = K(i | j) and sample(j, rng) -> i.
local function make_kernel(p, shrink)
  local sigma = math.max(SIGMA0 * shrink, p.n > 1 and 0.5 / (p.n - 1) or 1)
  local eps = math.min(CAT_EPS0 * shrink, (p.n - 1) / p.n)
  if is_categorical(p) or p.n <= MATRIX_MAX then
    local m = kernel_matrix(p, sigma, eps)
    return {
      eval = function(i, j) return m[j][i] end,
      sample = function(j, r)
        local row, u = m[j], r:random()
        for i = 1, p.n - 1 do
          u = u - row[i]
          if u < 0 then return i end
        end
        return p.n
      end,
    }
  end
  -- Long ranges: a Gaussian over the grid, normalised by its truncated continuous mass.
  local n1, norm = p.n - 1, {} -- norm[j]: 1 / the kernel's mass on the grid, memoised
  return {
    eval = function(i, j)
      local uj = (j - 1) / n1
      local z = norm[j]
      if not z then
        local mass = phi_cdf((1 - uj) / sigma) - phi_cdf(-uj / sigma)
        z = 1 / (sigma * SQRT2PI * n1 * math.max(mass, 1e-12))
        norm[j] = z
      end
      local d = ((i - 1) / n1 - uj) / sigma
      return math.exp(-0.5 * d * d) * z
    end,
    sample = function(j, r)
      local u = (j - 1) / n1
      for _ = 1, 8 do
        local v = u + sigma * r:normal()
        if v >= 0 and v <= 1 then return math.floor(v * n1 + 0.5) + 1 end
      end
      return j
    end,
  }
end

-- ---- Parzen estimators: a weighted mixture of product kernels plus a uniform prior ----

local Parzen = {}
Parzen.__index = Parzen

-- POINTS: index vectors, WEIGHTS: parallel list; the bandwidth shrinks with Scott's factor
-- n^(-1/(d+4)) of the point count.
local function parzen(params, points, weights, prior_weight)
  local d = #params
  local shrink = math.max(#points, 1) ^ (-1 / (d + 4))
  local self = setmetatable({ params = params, points = points, weights = weights,
                              prior = prior_weight, kernels = {}, uniform = 1 }, Parzen)
  for k, p in ipairs(params) do
    self.kernels[k] = make_kernel(p, shrink)
    self.uniform = self.uniform / p.n
  end
  self.total = prior_weight
  for _, w in ipairs(weights) do self.total = self.total + w end
  return self
end

-- Sum over points of weight * product kernel at X (no prior, not normalised). A point
-- without a value for a parameter (a prior observation from another space) spreads
-- evenly over that parameter's values.
function Parzen:mass(x)
  local sum, kernels, params = 0, self.kernels, self.params
  for k, pt in ipairs(self.points) do
    local prod = self.weights[k]
    for dim = 1, #kernels do
      local j = pt[dim]
      prod = prod * (j and kernels[dim].eval(x[dim], j) or 1 / params[dim].n)
    end
    sum = sum + prod
  end
  return sum
end

function Parzen:density(x)
  return (self:mass(x) + self.prior * self.uniform) / self.total
end

function Parzen:add(x, w)
  self.points[#self.points + 1] = x
  self.weights[#self.weights + 1] = w
  self.total = self.total + w
end

function Parzen:sample(r)
  local u = r:random() * self.total - self.prior
  local x = {}
  if u < 0 then -- the prior: uniform
    for dim, p in ipairs(self.params) do x[dim] = r:int(1, p.n) end
    return x
  end
  local pick = #self.points
  for k, w in ipairs(self.weights) do
    u = u - w
    if u < 0 then pick = k; break end
  end
  local centre = self.points[pick]
  for dim, p in ipairs(self.params) do
    local j = centre[dim]
    x[dim] = j and self.kernels[dim].sample(j, r) or r:int(1, p.n)
  end
  return x
end

-- ---- the strategy ----

function tpe.new(space, options, history, rng)
  local o = check_options(options or {}, #space.params)
  local self = setmetatable({ space = space, params = space.params, rng = rng, o = o,
                              size = space:size(), seen = kit.seen(),
                              unseen = kit.unseen(space, rng),
                              obs = {}, obs_order = {}, pending = {}, pending_order = {},
                              cursor = 1, startup_left = o.startup }, T)
  self.design = self:latin_hypercube(o.startup)
  for _, h in ipairs(history or {}) do
    if next(h.config) ~= nil then
      if self.seen:mark(space:key(h.config)) then self.startup_left = self.startup_left - 1 end
      self:tell(h.config, h)
    end
  end
  return self
end

function T:indices(config)
  local x = {}
  for dim, p in ipairs(self.params) do x[dim] = p:index(config[p.name]) end
  return x
end

function T:config_of(x)
  local c = {}
  for dim, p in ipairs(self.params) do c[p.name] = p:value(x[dim]) end
  return c
end

-- N points, one per stratum of every parameter, strata paired at random: a start that
-- covers each parameter's range evenly however few trials it has.
function T:latin_hypercube(n)
  local design = {}
  if n == 0 or #self.params == 0 then return design end
  local perms = {}
  for dim = 1, #self.params do
    local perm = {}
    for s = 1, n do perm[s] = s end
    perms[dim] = self.rng:shuffle(perm)
  end
  for s = 1, n do
    local x = {}
    for dim, p in ipairs(self.params) do
      local cell = (perms[dim][s] - 1 + self.rng:random()) / n
      x[dim] = math.min(p.n, math.floor(cell * p.n) + 1)
    end
    design[s] = x
  end
  return design
end

-- One observation per distinct configuration: ok values averaged (weighted by the step
-- times behind each, so a longer re-run counts for more), failures and slow runs counted.
function T:tell(config, result)
  if result.baseline or next(config) == nil then return end
  local key = self.space:key(config)
  self.seen:mark(key)
  if self.pending[key] then self.pending[key] = nil end
  self:observe(key, self:indices(config), result)
end

-- Observations of earlier sweeps whose space differs from this one (warm start): partial
-- configurations, the parameters the spaces share. They join every density (a missing
-- parameter spreads evenly over its values) but are never marked seen: the configuration
-- this space would run has not run.
function T:prior(items)
  for _, item in ipairs(items) do
    local x = {}
    for dim, p in ipairs(self.params) do
      local v = item.config[p.name]
      if v ~= nil then x[dim] = p:index(v) end
    end
    self:observe("prior:" .. self.space:key(item.config), x, item)
  end
end

-- Adds RESULT to the observation KEY at index vector X.
function T:observe(key, x, result)
  local status = result.status
  if status ~= "ok" and not FAILED[status] and not SLOW[status] then return end -- lost, ...
  if status == "ok" and type(result.value) ~= "number" then return end
  local ob = self.obs[key]
  if not ob then
    ob = { x = x, sum = 0, weight = 0, fail = 0, ran = 0, slow = 0 }
    self.obs[key] = ob
    self.obs_order[#self.obs_order + 1] = key
  end
  if status == "ok" then
    local w = math.max(1, #(result.steps or {}))
    ob.sum, ob.weight, ob.ran = ob.sum + w * result.value, ob.weight + w, ob.ran + 1
  elseif FAILED[status] then
    ob.fail = ob.fail + FAILED[status]
  else
    ob.slow, ob.ran = ob.slow + 1, ob.ran + 1
  end
end

-- The models for one ask: l (good), g (bad + slow + pending), and the two densities of
-- the feasibility estimate (ran / failed).
function T:models()
  local ok, bad_x, ran_x, ran_w, fail_x, fail_w = {}, {}, {}, {}, {}, {}
  for rank, key in ipairs(self.obs_order) do
    local ob = self.obs[key]
    if ob.weight > 0 then ok[#ok + 1] = { x = ob.x, value = ob.sum / ob.weight, rank = rank }
    elseif ob.slow > 0 then bad_x[#bad_x + 1] = ob.x end
    if ob.ran > 0 then ran_x[#ran_x + 1], ran_w[#ran_w + 1] = ob.x, ob.ran end
    if ob.fail > 0 then fail_x[#fail_x + 1], fail_w[#fail_w + 1] = ob.x, ob.fail end
  end
  table.sort(ok, function(a, b)
    if a.value ~= b.value then return a.value < b.value end
    return a.rank < b.rank
  end)
  local n_good = math.min(self.o.max_good, math.max(1, math.ceil(self.o.gamma * #ok)))
  local good_x, good_w = {}, {}
  for i, item in ipairs(ok) do
    if i <= n_good then good_x[#good_x + 1], good_w[#good_w + 1] = item.x, 1
    else bad_x[#bad_x + 1] = item.x end
  end
  for _, key in ipairs(self.pending_order) do
    if self.pending[key] then bad_x[#bad_x + 1] = self.pending[key] end
  end
  local bad_w = {}
  for i = 1, #bad_x do bad_w[i] = 1 end
  local pw = self.o.prior_weight
  return { n_ok = #ok,
           l = parzen(self.params, good_x, good_w, pw), g = parzen(self.params, bad_x, bad_w, pw),
           ran = parzen(self.params, ran_x, ran_w, pw), fail = parzen(self.params, fail_x, fail_w,
             pw) }
end

-- log P(feasible | x): ran and failed masses against one pseudo-observation each, spread
-- uniformly, so an unexplored region sits at 1/2 and one next to an OOM near 0.
local function log_feasible(m, x)
  local u = m.ran.uniform
  local s, f = m.ran:mass(x), m.fail:mass(x)
  return math.log((s + u) / (s + f + 2 * u))
end

function T:score(m, x)
  local gamma = self.o.gamma
  local l, g = m.l:density(x), m.g:density(x)
  return log_feasible(m, x) - math.log(gamma + (1 - gamma) * g / l)
end

function T:fresh(key, taken)
  return not self.seen:has(key) and not taken[key]
end

-- The best-scoring unseen candidate drawn from l (from the prior while nothing ran ok).
function T:from_model(m, taken)
  local best, best_score, best_key
  for _ = 1, self.o.candidates do
    local x = (m.n_ok > 0) and m.l:sample(self.rng) or m.g:sample_prior(self.rng)
    local key = self.space:key(self:config_of(x))
    if self:fresh(key, taken) then
      local s = self:score(m, x)
      if not best or s > best_score then best, best_score, best_key = x, s, key end
    end
  end
  return best, best_key
end

function Parzen:sample_prior(r)
  local x = {}
  for dim, p in ipairs(self.params) do x[dim] = r:int(1, p.n) end
  return x
end

function T:from_design(taken)
  while self.startup_left > 0 and self.cursor <= #self.design do
    local x = self.design[self.cursor]
    self.cursor = self.cursor + 1
    local key = self.space:key(self:config_of(x))
    if self:fresh(key, taken) then
      self.startup_left = self.startup_left - 1
      return x, key
    end
  end
  return nil
end

-- Uniformly random unseen configurations when the model keeps proposing seen ones (the
-- kit's sampler: rejection sampling, then for small spaces a shuffled walk over the rest).
function T:from_random(taken)
  local c, key = self.unseen:take(function(k) return self:fresh(k, taken) end, false)
  if not c then return nil end
  return self:indices(c), key
end

function T:ask(n)
  local out, taken = {}, {}
  local m
  while #out < n and not self:done() do
    local x, key = self:from_design(taken)
    if not x and self.startup_left <= 0 then
      m = m or self:models()
      x, key = self:from_model(m, taken)
    end
    if not x then x, key = self:from_random(taken) end
    if not x then break end
    taken[key] = true
    if m then m.g:add(x, 1) end -- constant liar: a proposal in flight counts as bad
    out[#out + 1] = self:config_of(x)
  end
  for i, c in ipairs(out) do
    local key = self.space:key(c)
    self.seen:mark(key)
    self.pending[key] = self:indices(c)
    self.pending_order[#self.pending_order + 1] = key
    out[i] = c
  end
  self:compact_pending()
  return out
end

-- Drops told keys from the pending list once they dominate it (keeps the walk short).
function T:compact_pending()
  local live = {}
  for _, key in ipairs(self.pending_order) do
    if self.pending[key] then live[#live + 1] = key end
  end
  if #live * 2 < #self.pending_order then self.pending_order = live end
end

function T:done()
  return #self.params == 0 or self.seen.n >= self.size
end

return tpe
