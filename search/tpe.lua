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
local models = require("tpe_models") -- lua/tpe_models.lua: the densities and the ridge
local tpe_start = require("search.tpe_start")
local tpe_finish = require("search.tpe_finish")
local is_categorical, parzen, ridge_new = models.is_categorical, models.parzen, models.ridge_new

local tpe = { history = "results" } -- new() weighs a trial by its step count (n_steps), no times
local T = {}
T.__index = T

local OPTIONS = { "startup", "candidates", "gamma", "max_good", "prior_weight", "window",
                  "local_share", "local_ramp", "local_top", "bandwidth", "surrogate",
                  "ridge", "ard", "guide", "shrink", "finish" }
-- Failed outcomes feed the feasibility model with these weights: a crash may be a flaky
-- node rather than the configuration, so it counts half.
local FAILED = { oom = 1.0, invalid = 1.0, wrong = 1.0, crash = 0.5 }
-- Outcomes that ran but tell us the configuration is slow: bad, not infeasible.
local SLOW = { timeout = true, no_metric = true, pruned = true }
local VALUES_MAX = 1 << 20   -- ordered values per parameter tpe{} models (see tpe.new)
local FEASIBLE_MIN = 0.25    -- the surrogate's candidates less likely to run go last
local XCHUNK = 64            -- packed index vectors per string (T:init_store)
-- The bounds of a parameter's prior precision under relevance determination (`ard`), in
-- multiples of `ridge`: a clear effect is shrunk at most 10 times less than by the plain
-- ridge, one the data do not support at most 10 times more (on training, [1, 1000] and
-- [0.1, 1000] shrank the many small effects the regret is made of, worse still).
local ARD_LO, ARD_HI = 0.1, 10

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
             "a positive number"),
           window = kit.int(options, "window", 500, 2),
           -- The local phase (docs/STRATEGIES.md): half of the model's proposals by the end of
           -- the budget, growing from none after the start; on 32 generated training
           -- landscapes at 50 trials it lowered the median regret from 3.05 % to 1.85 %.
           local_share = kit.number(options, "local_share", 0.5,
             function(v) return v >= 0 and v <= 1 end, "a number from 0 to 1"),
           local_ramp = kit.number(options, "local_ramp", 1, function(v) return v > 0 and v <= 1 end,
             "a number above 0, at most 1"),
           local_top = kit.int(options, "local_top", 1, 1),
           bandwidth = kit.number(options, "bandwidth", 1, function(v) return v > 0 and v <= 4 end,
             "a number above 0, at most 4"),
           -- The share of the model's proposals chosen by the linear surrogate (below)
           -- instead of the Parzen ratio (and the local phase); 0 turns it off. On the
           -- training landscapes gen:1-40 (2 runs each) it lowered the median regret at 45
           -- trials from 3.37 % to 1.96 % and the worst from 19.1 % to 9.2 % (BENCHMARKS.md).
           surrogate = kit.number(options, "surrogate", 1,
             function(v) return v >= 0 and v <= 1 end, "a number from 0 to 1"),
           -- The guides' start (T:guide_point): on the training landscapes with their own
           -- noise it lowered the mean regret by 1.34 points at 20 trials and 0.47 at 45
           -- (160 runs each); 0 is the plain hypercube (docs/STRATEGIES.md).
           guide = kit.number(options, "guide", 1,
             function(v) return v == 0 or v == 1 or v == 2 end, "0, 1 or 2"),
           ridge = kit.number(options, "ridge", 0.03, function(v) return v > 0 end,
             "a positive number"),
           -- Rounds of automatic relevance determination per surrogate proposal (below); 0,
           -- the default, is the plain ridge. Off by default: on the training landscapes
           -- (docs/STRATEGIES.md) it was worse at 45 trials (mean regret +0.32 points)
           -- and not clearly better at 20 (-0.35 +- 0.19 over 320 runs).
           ard = kit.int(options, "ard", 0, 0),
           -- Rank by the model's shrunk values (T:shrunk_ranking): 1 the good/bad split,
           -- 2 the surrogate's incumbents, 3 both; 0 the raw measured means.
           shrink = kit.number(options, "shrink", 0,
             function(v) return v == 0 or v == 1 or v == 2 or v == 3 end, "0, 1, 2 or 3"),
           -- The share of a known budget's last trials that try the best's neighbours first
           -- (search/tpe_finish.lua); 0 turns it off.
           finish = kit.number(options, "finish", 0, function(v) return v >= 0 and v <= 0.5 end,
             "a number from 0 to 0.5"),
           trials = trials }
end

-- ---- the strategy ----

function tpe.new(space, options, history, rng)
  local o = check_options(options or {}, #space.params)
  for _, p in ipairs(space.params) do
    -- An ordered kernel's column holds one weight per value (search/parzen.c): past this many
    -- values a proposal would gather megabytes per candidate (and 2^24 is parzen's limit).
    if not is_categorical(p) and p.n > VALUES_MAX then
      error(string.format("parameter %s has %.0f values; tpe{} models at most %d per " ..
                          "parameter: give int() a step (int(lo, hi, step)), or use pow2()",
                          p.name, p.n, VALUES_MAX), 0)
    end
  end
  local self = setmetatable({ space = space, params = space.params, rng = rng, o = o,
                              size = space:size(), seen = kit.seen(),
                              unseen = kit.unseen(space, rng),
                              ranked = {}, kcache = {}, pending = {}, pending_order = {},
                              cursor = 1, startup_left = o.startup }, T)
  self:init_store()
  if o.surrogate > 0 then
    self.ridge = ridge_new(space.params, o.ridge)
    self.fridge = self.ridge and ridge_new(space.params, o.ridge) -- the failed share
  end
  self.design = self:latin_hypercube(o.startup)
  if o.guide > 0 and o.startup > 0 then
    table.insert(self.design, 1, (self:guide_point()))
    self.design[#self.design] = nil
  end
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

-- The start's Latin hypercube and the guides' configuration: search/tpe_start.lua; the
-- finish over the best's neighbours: search/tpe_finish.lua.
T.latin_hypercube, T.guide_point = tpe_start.latin_hypercube, tpe_start.guide_point
T.finishing, T.from_finish = tpe_finish.finishing, tpe_finish.from_finish
T.feasible_min = FEASIBLE_MIN

-- The public recipe (docs/STRATEGIES.md, "recipe"): the guides' configuration, the start's
-- first proposal, when at least one parameter took the guides' recommended value; nil
-- otherwise (no guide start, or nothing the guides recommend in this space). The
-- confirmation re-measures it, and the reported winner must be confirmed faster than it.
function T:recipe()
  if self.o.guide <= 0 or self.o.startup <= 0 then return nil end
  local x, recommended = self:guide_point()
  if recommended == 0 then return nil end
  return self:config_of(x)
end

-- ---- the observations: one per distinct configuration, in parallel arrays ----
-- An observation is an integer id (the order it was first seen: the ranking's tie-break),
-- found from its key (a configuration's ft.digest, or "prior:" and one) in self.obs. Its
-- numbers sit in arrays indexed by id (sum and weight of the ok values, ran: the runs that
-- ran, ok or slow) and, being rare, in sparse tables (fail, slow, is_prior); its index vector
-- is packed (one to three bytes a parameter, 0 for a parameter the configuration lacks),
-- XCHUNK vectors to a string (xs; the last, open chunk a list in xopen): 17 bytes for 14
-- parameters where a table of 14 integers is 280. The index vectors of new observations and
-- those an ask's densities use stay unpacked in self.hot, which is dropped when it passes
-- 4 * window + 64 vectors (the windows hold at most about 3 * window), so an ask unpacks next
-- to nothing: after a drop, the next ask unpacks its windows once. The live heap grows by about 300 bytes a trial, the host's seen set included,
-- where a table per observation cost about 980 (docs/COST.md, Memory). Proposals are the
-- same as with the tables, bit for bit.

function T:init_store()
  local fmt = { "<" }
  for dim, p in ipairs(self.params) do
    local bytes = 1
    while p.n >= 256 ^ bytes do bytes = bytes + 1 end -- n must fit beside 0 (absent)
    fmt[dim + 1] = "I" .. bytes
  end
  self.xfmt = table.concat(fmt)
  self.xsize = string.packsize(self.xfmt)
  self.obs, self.n_obs = {}, 0
  self.xs, self.xopen, self.sum, self.weight, self.ran = {}, {}, {}, {}, {}
  self.fail, self.slow, self.is_prior, self.rs_set = {}, {}, {}, {}
  self.reps = {} -- repeated configurations only: { n, sum of logs, sum of squared logs }
  self.hot, self.hot_n = {}, 0
end

-- The index vector of observation ID (a table; do not change it).
function T:vec(id)
  local x = self.hot[id]
  if x then return x end
  local chunk, slot = (id - 1) // XCHUNK + 1, (id - 1) % XCHUNK
  local v
  if chunk <= #self.xs then v = { string.unpack(self.xfmt, self.xs[chunk], slot * self.xsize + 1) }
  else v = { string.unpack(self.xfmt, self.xopen[slot + 1]) } end
  x = {}
  for dim = 1, #self.params do -- the order tell and prior build theirs in
    if v[dim] ~= 0 then x[dim] = v[dim] end
  end
  return x
end

function T:value(id)
  return self.sum[id] / self.weight[id]
end

-- The surrogate's current target for ID: log of its mean since its last ok result with a
-- positive value (self.rs_set keeps the odd cases: false when it has none, else the
-- number the ridge holds), nil for none.
function T:rs_of(id)
  if not self.ridge or self.is_prior[id] then return nil end
  local e = self.rs_set[id]
  if e ~= nil then return e or nil end
  if self.weight[id] > 0 then return math.log(self.sum[id] / self.weight[id]) end
  return nil
end

-- A table view of observation ID (for tests and benchmarks).
function T:observation(id)
  local w = self.weight[id]
  return { id = id, x = self:vec(id), sum = self.sum[id], weight = w,
           value = w > 0 and self.sum[id] / w or nil, ran = self.ran[id],
           fail = self.fail[id] or 0, slow = self.slow[id] or 0, rs = self:rs_of(id) }
end

-- One observation per distinct configuration: ok values averaged (weighted by the step
-- times behind each, so a longer re-run counts for more), failures and slow runs counted.
function T:tell(config, result)
  if result.baseline or next(config) == nil then return end
  local key = self.space:key(config)
  self.seen:mark(key)
  local id = ft.digest(key) -- observations and pending proposals are keyed by digest
  if self.pending[id] then self.pending[id] = nil end
  self:observe(id, self:indices(config), result)
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
    self:observe("prior:" .. ft.digest(self.space:key(item.config)), x, item)
  end
end

-- Adds RESULT to the observation KEY (a configuration's ft.digest, "prior:" and one for an
-- earlier sweep's) at index vector X. A digest, not the canonical JSON: 17 interned bytes
-- instead of ~500 a trial.
function T:observe(key, x, result)
  local status = result.status
  if status ~= "ok" and not FAILED[status] and not SLOW[status] then return end -- lost, ...
  if status == "ok" and type(result.value) ~= "number" then return end
  local id = self.obs[key]
  if not id then
    id = self.n_obs + 1
    self.n_obs, self.obs[key] = id, id
    local packed = {}
    for dim = 1, #self.params do packed[dim] = x[dim] or 0 end
    local open = self.xopen
    open[#open + 1] = string.pack(self.xfmt, table.unpack(packed))
    if #open == XCHUNK then self.xs[#self.xs + 1], self.xopen = table.concat(open), {} end
    self.sum[id], self.weight[id], self.ran[id] = 0, 0, 0
    if key:sub(1, 6) == "prior:" then self.is_prior[id] = true end
    if self.hot_n >= 4 * self.o.window + 64 then self.hot, self.hot_n = {}, 0 end
    self.hot[id], self.hot_n = x, self.hot_n + 1
  end
  local own = not self.is_prior[id]
  local fail0, ran0 = self.fail[id] or 0, self.ran[id]
  if status == "ok" then
    local rs0 = self:rs_of(id)
    local w = math.max(1, result.n_steps or #(result.steps or {}))
    local weight0 = self.weight[id]
    if weight0 > 0 and result.value > 0 and self.sum[id] > 0 then
      self:repeat_seen(id, math.log(result.value))
    end
    self.sum[id], self.weight[id], self.ran[id] = self.sum[id] + w * result.value, weight0 + w,
      ran0 + 1
    self:rerank(id, weight0 > 0)
    if self.ridge and own then
      if result.value > 0 then
        self.ridge:add(self:vec(id), math.log(self:value(id)), rs0)
        self.rs_set[id] = nil -- log of the mean again
      else -- the mean moved, the ridge's target did not
        self.rs_set[id] = rs0 or false
      end
    end
  elseif FAILED[status] then
    self.fail[id] = fail0 + FAILED[status]
  else
    self.slow[id], self.ran[id] = (self.slow[id] or 0) + 1, ran0 + 1
  end
  if self.fridge and own then -- the failed share, fail / (fail + ran): nil before any result
    local fail, ran = self.fail[id] or 0, self.ran[id]
    local old = (fail0 > 0 or ran0 > 0) and fail0 / (fail0 + ran0) or nil
    self.fridge:add(self:vec(id), fail / (fail + ran), old)
  end
end

-- A repeat of ID's ok result, log value Y (called before it is added to the mean): the
-- runs' logs, for the noise (T:noise). The first repeat starts from the mean so far, which
-- is one run's value.
function T:repeat_seen(id, y)
  local r = self.reps[id]
  if not r then
    local y0 = math.log(self.sum[id] / self.weight[id])
    r = { 1, y0, y0 * y0 }
    self.reps[id] = r
  end
  r[1], r[2], r[3] = r[1] + 1, r[2] + y, r[3] + y * y
end

-- The measurement noise's variance (of a log value) given the repeats' spread: the
-- confirmation's own rule (src/sweep/confirm.c, confirm_noise_posterior: the posterior mean under a
-- log-uniform prior on its sd from 0.05 % to 5 %; with no repeats the prior's mean, an sd of
-- about 1.65 %), cached until a repeat changes the spread.
function T:noise()
  local ss, df = 0, 0
  for _, r in pairs(self.reps) do
    ss, df = ss + math.max(0, r[3] - r[2] * r[2] / r[1]), df + r[1] - 1
  end
  if not (self.noise_at and self.noise_at[1] == ss and self.noise_at[2] == df) then
    self.noise_at = { ss, df, ft.noise_posterior(ss, df) }
  end
  return self.noise_at[3]
end

-- Keeps self.ranked (the ok observations' ids, best first by mean, the earlier first on
-- ties) sorted as ID's mean changes: a binary insertion per result, so an ask never sorts
-- the whole history. RANKED_BEFORE: a repeat, whose old place is taken out first.
function T:rerank(id, ranked_before)
  local ranked = self.ranked
  if ranked_before then
    for i = 1, #ranked do
      if ranked[i] == id then table.remove(ranked, i); break end
    end
  end
  local sum, weight = self.sum, self.weight
  local v = sum[id] / weight[id]
  local lo, hi = 1, #ranked + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    local o = ranked[mid]
    local u = sum[o] / weight[o]
    if u < v or (u == v and o < id) then lo = mid + 1 else hi = mid end
  end
  table.insert(ranked, lo, id)
end

-- The models for one ask: l (good), g (bad + slow + pending), and the two densities of
-- the feasibility estimate (ran / failed). Each density holds at most `window` points, so
-- an ask costs the same at 1,000 and 10,000 trials: g the ok results ranked just below the
-- good ones (half the window: the boundary the acquisition must resolve) and the most
-- recent other ones and slow runs (the region the search is in now), plus every proposal
-- still running; ran and failed the most recent `window` each. Below the window every
-- observation is in. The index vectors used become self.hot (see T:init_store).
function T:models()
  local sh = self.o.shrink > 0 and self:shrunk_ranking() or nil
  local W = self.o.window
  local ranked = (self.o.shrink % 2 == 1 and sh and sh.order) or self.ranked
  local n_ok = #ranked
  local n_good = math.min(self.o.max_good, math.max(1, math.ceil(self.o.gamma * n_ok)))
  local hot = self.hot
  local function take(id) -- ID's vector, unpacked and kept in the hot set
    local x = self:vec(id)
    hot[id], self.hot_n = x, self.hot_n + 1
    return x
  end
  local good_x, good_w, bad_x, ran_x, ran_w, fail_x, fail_w = {}, {}, {}, {}, {}, {}, {}
  local edge, in_edge = math.min(n_ok, n_good + W // 2), {}
  for i = 1, edge do
    local id = ranked[i]
    in_edge[id] = true
    if i <= n_good then good_x[#good_x + 1], good_w[#good_w + 1] = hot[id] or take(id), 1
    else bad_x[#bad_x + 1] = hot[id] or take(id) end
  end
  local weight, ran, fail, slow = self.weight, self.ran, self.fail, self.slow
  local recent = W - (edge - math.min(n_ok, n_good))
  local n_ran, n_fail = 0, 0
  for id = self.n_obs, 1, -1 do -- the most recent first, until every window is full
    local w, added = weight[id], false
    if recent > 0 and ((w > 0 and not in_edge[id]) or (w == 0 and (slow[id] or 0) > 0)) then
      bad_x[#bad_x + 1], recent, added = hot[id] or take(id), recent - 1, true
    end
    local r = ran[id]
    if r > 0 and n_ran < W then
      n_ran, added = n_ran + 1, true
      ran_x[n_ran], ran_w[n_ran] = hot[id] or take(id), r
    end
    local f = fail[id]
    if f and f > 0 and n_fail < W then
      n_fail, added = n_fail + 1, true
      fail_x[n_fail], fail_w[n_fail] = hot[id] or take(id), f
    end
    if added and recent <= 0 and n_ran >= W and n_fail >= W then break end
  end
  for _, key in ipairs(self.pending_order) do
    if self.pending[key] then bad_x[#bad_x + 1] = self.pending[key] end
  end
  local bad_w = {}
  for i = 1, #bad_x do bad_w[i] = 1 end
  local pw, ps, kc, bw = self.o.prior_weight, self.params, self.kcache, self.o.bandwidth
  return { n_ok = n_ok, sh = sh, l = parzen(ps, good_x, good_w, pw, kc, bw),
           g = parzen(ps, bad_x, bad_w, pw, kc, bw), ran = parzen(ps, ran_x, ran_w, pw, kc, bw),
           fail = parzen(ps, fail_x, fail_w, pw, kc, bw) }
end

-- log P(feasible | x): ran and failed masses against one pseudo-observation each, spread
-- uniformly, so an unexplored region sits at 1/2 and one next to an OOM near 0.
local function log_feasible(m, x)
  local u = m.ran.uniform
  local s, f = m.ran:mass(x), m.fail:mass(x)
  return math.log((s + u) / (s + f + 2 * u))
end

function T:log_feasible(m, x) return log_feasible(m, x) end

function T:score(m, x)
  local gamma = self.o.gamma
  local l, g = m.l:density(x), m.g:density(x)
  return log_feasible(m, x) - math.log(gamma + (1 - gamma) * g / l)
end

function T:fresh(key, taken)
  return not self.seen:has(key) and not taken[key]
end

-- The one-parameter moves of X: an ordered parameter one value up or down, a categorical
-- one to each of its other values (SMAC's local search neighbourhood).
function T:neighbours(x, out)
  for dim, p in ipairs(self.params) do
    local j = x[dim]
    if is_categorical(p) then
      for v = 1, p.n do
        if v ~= j then
          local y = table.move(x, 1, #x, 1, {})
          y[dim] = v
          out[#out + 1] = y
        end
      end
    else
      for _, v in ipairs({ j - 1, j + 1 }) do
        if v >= 1 and v <= p.n then
          local y = table.move(x, 1, #x, 1, {})
          y[dim] = v
          out[#out + 1] = y
        end
      end
    end
  end
  return out
end

-- How much of this ask goes to the incumbents' neighbourhoods: local_share of the model's
-- proposals, reached linearly from none at the end of the start to all of it at
-- local_ramp of the trial budget (without a budget, local_share from the start).
function T:local_share()
  local share = self.o.local_share
  local trials = self.o.trials
  if share <= 0 or not trials then return share end
  local done = self.seen.n - self.o.startup
  local ramp = math.max(1, self.o.local_ramp * trials - self.o.startup)
  return share * math.max(0, math.min(1, done / ramp))
end

-- The best-scoring unseen candidate: drawn from l (from the prior while nothing ran ok),
-- or, for the local share of asks, among the one-parameter moves of the local_top best
-- configurations, scored by the same acquisition (so a move into an OOM region loses).
-- Candidates are scored first and keyed best first: the configuration's canonical key is
-- the costly part, and the best one is nearly always fresh.
function T:from_model(m, taken)
  if self.ridge and self.ridge.n >= 3 and self.rng:random() < self.o.surrogate then
    local x, key = self:from_surrogate(m, taken)
    if x then return x, key end
  end
  local xs = {}
  local share = m.n_ok > 0 and self:local_share() or 0
  if share > 0 and self.rng:random() < share then
    for k = 1, math.min(self.o.local_top, #self.ranked) do
      local x = self:vec(self.ranked[k])
      -- a warm start's partial configuration has no value to move for the parameters it
      -- lacks: it has no neighbours here (it made neighbours() fail on a nil index)
      local complete = true
      for dim = 1, #self.params do complete = complete and x[dim] ~= nil end
      if complete then self:neighbours(x, xs) end
    end
  end
  if #xs == 0 then
    for i = 1, self.o.candidates do
      xs[i] = (m.n_ok > 0) and m.l:sample(self.rng) or m.g:sample_prior(self.rng)
    end
  end
  local x, key = self:best_fresh(m, xs, taken)
  if not x and #xs > self.o.candidates then -- every neighbour seen: back to l's samples
    xs = {}
    for i = 1, self.o.candidates do xs[i] = m.l:sample(self.rng) end
    x, key = self:best_fresh(m, xs, taken)
  end
  return x, key
end

-- The surrogate's order: feasible enough first, then by P(feasible) times the improvement,
-- then by log P(feasible) + improvement / sigma (ties at no improvement: the nearest).
local function ranks_before(a, b)
  if a.ok ~= b.ok then return a.ok end
  if a.s1 ~= b.s1 then return a.s1 > b.s1 end
  if a.s2 ~= b.s2 then return a.s2 > b.s2 end
  return a.i < b.i
end

-- The surrogate's candidates around TOPS (the ids of the best results, best first):
-- `candidates` samples from l, the one-parameter moves of every top, and `candidates`
-- random two-parameter moves (two one-parameter moves combined) of the best.
function T:surrogate_candidates(m, tops)
  local xs = {}
  for i = 1, self.o.candidates do xs[i] = m.l:sample(self.rng) end
  for _, id in ipairs(tops) do self:neighbours(self:vec(id), xs) end
  local best = self:vec(tops[1])
  local n1 = {}
  self:neighbours(best, n1)
  for _ = 1, #n1 > 0 and self.o.candidates or 0 do
    local a, b = n1[self.rng:int(1, #n1)], n1[self.rng:int(1, #n1)]
    local y = table.move(a, 1, #a, 1, {})
    for dim = 1, #b do if b[dim] ~= best[dim] then y[dim] = b[dim] end end
    xs[#xs + 1] = y
  end
  return xs
end

-- The surrogate's proposal: candidates from l and the one- and two-parameter moves of
-- the best configurations, each scored by P(feasible) times its improvement on the best
-- value under one Thompson draw of the weights (ties at no improvement: the nearest).
function T:from_surrogate(m, taken)
  local tops = {} -- the best of this space's own results (not a warm start's partial ones)
  local shrunk = self.o.shrink >= 2 and m.sh
  for _, id in ipairs(shrunk and shrunk.order or self.ranked) do
    if self:rs_of(id) then tops[#tops + 1] = id end
    if #tops == 3 then break end
  end
  if #tops == 0 then return nil end
  local xs = self:surrogate_candidates(m, tops)
  if self.o.ard > 0 then -- each parameter's prior precision from the data, within bounds
    local lam = self.o.ridge
    self.ridge.c:relevance(self.o.ard, lam * ARD_LO, lam * ARD_HI)
  end
  local sigma = self.ridge:fit(self.rng)
  self.fridge:fit(nil)
  local ybest = shrunk and shrunk.sv[tops[1]] or math.log(self:value(tops[1]))
  -- The Parzen feasibility (two sums over up to `window` points per candidate) is the costly
  -- part, so it is computed lazily. pf <= lin, so (lin >= FEASIBLE_MIN, lin * max(0, d),
  -- log(lin) + d / sigma) bounds a candidate's (ok, s1, s2) term by term, hence in the
  -- sort's order: candidates are scored in the order of their bounds until a bound ranks
  -- after the best fresh candidate scored; none left can rank before it. The answer is the
  -- one a full sort would give (self.score_all, for the tests, scores every candidate).
  local cands = {}
  for i, x in ipairs(xs) do
    local lin = 1 - math.max(0, math.min(0.98, self.fridge:predict(x)))
    local d = ybest - self.ridge:predict(x)
    cands[i] = { x = x, lin = lin, d = d, i = i, ub = { ok = lin >= FEASIBLE_MIN,
      s1 = lin * math.max(0, d), s2 = math.log(lin) + d / sigma, i = i } }
  end
  table.sort(cands, function(a, b) return ranks_before(a.ub, b.ub) end)
  local best, best_key
  for _, c in ipairs(cands) do
    if best and not self.score_all and ranks_before(best, c.ub) then break end
    -- feasible by both the Parzen densities (interactions) and the main effects
    local pf = math.min(math.exp(log_feasible(m, c.x)), c.lin)
    c.ok, c.s1, c.s2 = pf >= FEASIBLE_MIN, pf * math.max(0, c.d), math.log(pf) + c.d / sigma
    if not best or ranks_before(c, best) then
      local key = self.space:key(self:config_of(c.x))
      if self:fresh(key, taken) then best, best_key = c, key end
    end
  end
  if best then return best.x, best_key end
  return nil
end

-- The first of CANDS (sorted, best first; each { x = indices }) not run, pending or TAKEN.
function T:first_fresh(cands, taken)
  for _, c in ipairs(cands) do
    local key = self.space:key(self:config_of(c.x))
    if self:fresh(key, taken) then return c.x, key end
  end
  return nil
end

function T:best_fresh(m, xs, taken)
  local cands = {}
  for i, x in ipairs(xs) do cands[i] = { x = x, s = self:score(m, x), i = i } end
  table.sort(cands, function(a, b)
    if a.s ~= b.s then return a.s > b.s end
    return a.i < b.i
  end)
  return self:first_fresh(cands, taken)
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
      if self:finishing() then x, key = self:from_finish(m, taken) end
      if not x then x, key = self:from_model(m, taken) end
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
    local id = ft.digest(key)
    self.pending[id] = self:indices(c)
    self.pending_order[#self.pending_order + 1] = id
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

-- ---- estimate (docs/STRATEGIES.md, "estimate"): the model's view of configurations ----
-- For each configuration (a decoded table): mean, the log step time the surrogate's ridge
-- model predicts for it from every OTHER configuration's ok result (the leave-one-out
-- prediction, so a configuration's own, possibly lucky, measurement does not vouch for
-- itself), and sd, the root mean square of that leave-one-out error over the ok results (at
-- most EST_RMS of them, best first): an error against one measurement, noise included.
-- Ridge's leave-one-out error is exact from one fit: e / (1 - h), h = x'(X'X + lambda I)^-1 x,
-- the leverage, read from EST_COLS fits with unit draws (fit(e_j) moves the weights by sigma
-- times column j of the inverse factor). False where there is no model: surrogate off, more
-- than EST_COLS features, fewer than EST_MIN ok results. Reads self.ridge, self.ranked and
-- the observations' index vectors and targets (vec, rs_of); leaves the ridge fitted at its
-- mean.
local EST_MIN, EST_COLS, EST_RMS = 6, 160, 200

function T:estimate(configs)
  local out = {}
  for i = 1, #configs do out[i] = false end
  local r = self.ridge
  if not r or r.p > EST_COLS or r.n < EST_MIN then return out end
  local obs = {}
  for _, id in ipairs(self.ranked) do
    if #obs >= EST_RMS then break end
    if self:rs_of(id) then obs[#obs + 1] = id end
  end
  local xs, ys = {}, {}
  for i, c in ipairs(configs) do
    xs[i] = self:indices(c)
    local id = self.obs[ft.digest(self.space:key(c))]
    ys[i] = id and self:rs_of(id)
  end
  local k0 = #xs
  for j, id in ipairs(obs) do xs[k0 + j], ys[k0 + j] = self:vec(id), self:rs_of(id) end
  local sigma = r.c:fit(nil)
  local mean, lev = {}, {}
  for i, x in ipairs(xs) do mean[i], lev[i] = r:predict(x), 0 end
  local e = {}
  for j = 1, r.p do e[j] = 0 end
  for j = 1, r.p do
    e[j] = 1
    r.c:fit(e)
    for i, x in ipairs(xs) do
      local d = (r:predict(x) - mean[i]) / sigma
      lev[i] = lev[i] + d * d
    end
    e[j] = 0
  end
  r.c:fit(nil)
  -- The leave-one-out prediction at I: its fitted mean moved away from its own target.
  local function loo(i)
    if not ys[i] then return mean[i] end
    return ys[i] - (ys[i] - mean[i]) / math.max(1 - lev[i], 1e-3)
  end
  local ss = 0
  for j = 1, #obs do
    local d = ys[k0 + j] - loo(k0 + j)
    ss = ss + d * d
  end
  local sd = math.sqrt(ss / #obs)
  for i = 1, k0 do out[i] = { mean = loo(i), sd = sd } end
  return out
end

-- ---- ranking under noise (option shrink) ----
-- The best EST_RMS ok results re-ranked by the model's shrunk value: each own result's log
-- mean y of n runs pulled toward its leave-one-out prediction (the ridge fit on every other
-- configuration) by the relative variances, (n y / tau2 + loo / v) / (n / tau2 + 1 / v),
-- tau2 the noise (T:noise) and v the model's own error (the leave-one-out errors' mean
-- square less tau2, at least tau2 / 4): confirm_shrunk's rule (src/sweep/confirm.c), applied
-- during the search. A lucky single run whose neighbours in the model disagree moves down.
-- Returns { order = the ranking (self.ranked with its first EST_RMS re-sorted; a warm
-- start's result keeps its measured log), sv = the shrunk log value by id, y = the measured
-- log by id }; nil where estimate() has no model. Leaves the ridge fitted at its mean.
function T:shrunk_ranking()
  local r = self.ridge
  if not r or r.p > EST_COLS or r.n < EST_MIN then return nil end
  r.c:fit(nil)
  local ranked, top = self.ranked, math.min(#self.ranked, EST_RMS)
  local ys, loo, ss, k = {}, {}, 0, 0
  for i = 1, top do
    local id = ranked[i]
    local y = self:rs_of(id)
    if y then
      local x = self:vec(id)
      local h = r.c:leverage(x)
      local e = (y - r:predict(x)) / math.max(1 - h, 1e-3)
      ys[id], loo[id], ss, k = y, y - e, ss + e * e, k + 1
    end
  end
  if k == 0 then return nil end
  local tau2 = self:noise()
  local v = math.max(ss / k - tau2, tau2 / 4)
  local sv, key, pos, ids = {}, {}, {}, {}
  for i = 1, top do
    local id = ranked[i]
    ids[i], pos[id] = id, i
    if ys[id] then
      local rep = self.reps[id]
      local a = (rep and rep[1] or 1) / tau2
      sv[id] = (a * ys[id] + loo[id] / v) / (a + 1 / v)
      key[id] = sv[id]
    else
      local val = self:value(id)
      key[id] = val > 0 and math.log(val) or -math.huge
    end
  end
  table.sort(ids, function(a, b)
    if key[a] ~= key[b] then return key[a] < key[b] end
    return pos[a] < pos[b]
  end)
  for i = top + 1, #ranked do ids[i] = ranked[i] end
  return { order = ids, sv = sv, y = ys }
end

return tpe
