-- tpe{}'s models (search/tpe.lua): the Parzen densities over the parameters' value indices
-- (one kernel table per parameter in C, search/parzen.c) and the linear surrogate (Bayesian
-- ridge regression of log(value) on main effects, in C, search/ridge.c). Pure building blocks:
-- no observations, no ranking, no proposals; the strategy decides what goes into them.
-- Must not use math.random: every draw comes from the rng it is handed.

local M = {}

local MATRIX_MAX = 64        -- ordered params up to this many values get exact kernel tables
local SIGMA0 = 0.2           -- kernel width in the unit interval before the Scott shrink
local CAT_EPS0 = 0.2         -- mass a categorical kernel moves to the other values

-- ---- kernels: one per parameter and model, over the parameter's value indices ----

function M.is_categorical(p) return p.kind == "bool" or p.kind == "choice" end
local is_categorical = M.is_categorical

-- The kernels of one density: a C table per parameter (search/parzen.c) for scoring, and
-- for sampling K:pick on tabled kernels or a Gaussian draw on long ranges. SHRINK is the
-- Scott factor; kernels of one shrink are built once per strategy (CACHE).
local function make_kernels(params, shrink, cache, bandwidth)
  shrink = shrink * bandwidth
  local key = string.format("%.17g", shrink)
  local hit = cache[key]
  if hit then return hit end
  local specs, sigmas = {}, {}
  for k, p in ipairs(params) do
    local sigma = math.max(SIGMA0 * shrink, p.n > 1 and 0.5 / (p.n - 1) or 1)
    local eps = math.min(CAT_EPS0 * shrink, (p.n - 1) / p.n)
    specs[k] = { n = p.n, cat = is_categorical(p), sigma = sigma, eps = eps }
    sigmas[k] = sigma
  end
  local K = { c = ft.parzen_kernels(specs), sigma = sigmas, tabled = {} }
  for k, p in ipairs(params) do K.tabled[k] = is_categorical(p) or p.n <= MATRIX_MAX end
  cache.n = (cache.n or 0) + 1
  if cache.n > 16 then -- a few shrinks are live at once (one per density size)
    for k in pairs(cache) do cache[k] = nil end
    cache.n = 1
  end
  cache[key] = K
  return K
end

-- A value near J for parameter DIM, drawn from its kernel.
local function kernel_sample(K, dim, p, j, r)
  if K.tabled[dim] then return K.c:pick(dim, j, r:random()) end
  local n1, u, sigma = p.n - 1, (j - 1) / (p.n - 1), K.sigma[dim]
  for _ = 1, 8 do
    local v = u + sigma * r:normal()
    if v >= 0 and v <= 1 then return math.floor(v * n1 + 0.5) + 1 end
  end
  return j
end

-- ---- the linear surrogate: Bayesian ridge regression of log(value) on main effects ----
-- In C (search/ridge.c): features per parameter, a categorical one (or an ordered one of at
-- most 4 values) one dummy per value but the first, a longer ordered one its centred
-- position u and u^2, so a monotone effect and an interior optimum are both learnt. The
-- sufficient statistics X'X and X'y are kept as observations arrive (a repeat only moves
-- X'y), so an ask solves one p x p system (p: a few per parameter) whatever the number of
-- trials. A model of more than RIDGE_COLS columns (choices of hundreds of values) is not
-- made: the surrogate is off for that space.

local RIDGE_COLS = 2048

local Ridge = {}
Ridge.__index = Ridge

function M.ridge_new(params, lambda)
  local specs, p = {}, 1
  for dim, q in ipairs(params) do
    specs[dim] = { n = q.n, cat = is_categorical(q) }
    if is_categorical(q) or q.n <= 4 then p = p + q.n - 1 elseif q.n > 1 then p = p + 2 end
  end
  if p > RIDGE_COLS then return nil end
  local c = ft.ridge_new(specs, lambda)
  return setmetatable({ c = c, p = c:cols(), n = 0 }, Ridge)
end

-- Adds the observation at index vector X with target Y, or (OLD: its last target) moves its
-- target from OLD to Y.
function Ridge:add(x, y, old)
  if old == nil then self.n = self.n + 1 end
  self.c:add(x, y, old)
end

-- Fits the posterior; with R, keeps a Thompson draw of the weights (else the mean).
-- Returns the residual scale.
function Ridge:fit(r)
  local e
  if r then
    e = {}
    for i = 1, self.p do e[i] = r:normal() end
  end
  return self.c:fit(e)
end

function Ridge:predict(x)
  return self.c:predict(x)
end

-- ---- Parzen estimators: a weighted mixture of product kernels plus a uniform prior ----

local Parzen = {}
Parzen.__index = Parzen

-- POINTS: index vectors, WEIGHTS: parallel list; the bandwidth shrinks with Scott's factor
-- n^(-1/(d+4)) of the point count. The points are copied into a C set for scoring.
function M.parzen(params, points, weights, prior_weight, cache, bandwidth)
  local d = #params
  local shrink = math.max(#points, 1) ^ (-1 / (d + 4))
  local self = setmetatable({ params = params, points = points, weights = weights,
                              prior = prior_weight, uniform = 1,
                              K = make_kernels(params, shrink, cache, bandwidth),
                              set = ft.parzen_points(d) }, Parzen)
  for _, p in ipairs(params) do self.uniform = self.uniform / p.n end
  self.total = prior_weight
  for k, w in ipairs(weights) do
    self.total = self.total + w
    self.set:add(points[k], w)
  end
  return self
end

-- Sum over points of weight * product kernel at X (no prior, not normalised). A point
-- without a value for a parameter (a prior observation from another space) spreads
-- evenly over that parameter's values.
function Parzen:mass(x)
  return self.set:mass(self.K.c, x)
end

function Parzen:density(x)
  return (self:mass(x) + self.prior * self.uniform) / self.total
end

function Parzen:add(x, w)
  self.points[#self.points + 1] = x
  self.weights[#self.weights + 1] = w
  self.total = self.total + w
  self.set:add(x, w)
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
    x[dim] = j and kernel_sample(self.K, dim, p, j, r) or r:int(1, p.n)
  end
  return x
end

function Parzen:sample_prior(r)
  local x = {}
  for dim, p in ipairs(self.params) do x[dim] = r:int(1, p.n) end
  return x
end

return M
