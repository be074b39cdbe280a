-- halving{ base = tpe{}, eta = E, min_steps = N, max_steps = M, hyperband = false, n = K }:
-- successive halving over step budgets. A bracket draws n fresh configurations from the base
-- sampler and runs them for min_steps; when every member of a rung has finished, the best
-- 1/eta of its ok members (by the rung's measured value; failures never) run again with eta
-- times more steps, up to max_steps (a proposal { config, steps, repeat_ok = true }). The default eta makes two
-- rungs, min_steps and max_steps (5 and 45: 9 fresh, the best one at 45). Brackets
-- are opened one after another; a new one opens whenever the open ones have nothing to run
-- (so parallel slots are never idle waiting for a rung to complete). hyperband = true
-- cycles brackets through the starting rungs (Li et al.'s brackets), hedging against
-- short runs that mislead.
-- Every finished trial is told to the base sampler too (tpe weights repeats by their step
-- count, so a longer re-run of a survivor outweighs its short run). Resumable: the history
-- rebuilds the brackets in trial order (steps_budget names the rung); members that were
-- lost are left running, for the orchestrator's re-run to finish.
-- What a trial costs decides whether short rungs pay: a trial's start (process, imports,
-- compile) counts as a number of steps, measured from what tell() receives (wall_ms minus its
-- steps at step_ms, over step_ms; the median over the last 64 told) or given as
-- compile_steps = N. When a first-rung trial would cost more than FULL_RATIO of a top-rung
-- one ((start + min_steps) / (start + max_steps)), halving stops opening brackets and
-- proposes the base's configurations at max_steps (full fidelity); an open bracket stops
-- taking fresh members and promotes what it has. Until a cost is known it halves.
-- At full fidelity the rungs move into the trial: each proposal carries an in-trial rung
-- ({ steps = min_steps, value = V }: the orchestrator stops the trial, pruned, when its value
-- after min_steps step times is above V), V the best 1/eta of every trial's value at
-- min_steps so far (the best one while fewer than eta are known). A survivor goes on to
-- max_steps in the same process, so it pays no second start; a pruned trial is told to the
-- base as the short ok run it is.
-- Must not use math.random; owns the brackets, not the base sampler's model.

local kit = require("kit")

local halving = {}
local H = {}
H.__index = H

local OPTIONS = { "base", "eta", "min_steps", "max_steps", "hyperband", "n", "compile_steps" }
local FINAL = { ok = true, oom = true, invalid = true, timeout = true, crash = true,
                no_metric = true, pruned = true, wrong = true }
local MAX_OPEN = 8 -- brackets waiting at once before ask() returns nothing
-- Above this cost of a first-rung trial against a top-rung one, short rungs do not pay: on the
-- training landscapes halving reached tpe's regret with about half its steps but more trials,
-- so its wall time matched tpe's at a start of about 35 steps (5 and 45 steps: 40/80 = 0.5).
local FULL_RATIO = 0.5
local START_WINDOW = 64 -- the measured starts the median is over: the most recent ones

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end

-- The reduced value (metric.reduce) of step times FIRST..LAST of STEPS (a list), or nil.
local function reduce(steps, first, last, how)
  if type(steps) ~= "table" or last > #steps or first > last then return nil end
  local t = {}
  for i = first, last do t[#t + 1] = steps[i] end
  if how == "min" then
    local m = t[1]
    for _, v in ipairs(t) do if v < m then m = v end end
    return m
  end
  if how == "mean" then
    local sum = 0
    for _, v in ipairs(t) do sum = sum + v end
    return sum / #t
  end
  table.sort(t)
  local mid = (#t + 1) // 2
  return #t % 2 == 1 and t[mid] or (t[mid] + t[mid + 1]) / 2
end

-- The step budgets of the rungs: max_steps / eta^k down to min_steps (rounded down), so the
-- last rung is exactly max_steps and the first at least min_steps.
local function rung_steps(min_steps, max_steps, eta)
  local n = 1
  while max_steps // (eta ^ n) >= min_steps do n = n + 1 end
  local steps = {}
  for i = 1, n do steps[i] = math.max(min_steps, math.floor(max_steps / eta ^ (n - i))) end
  return steps
end

local function check_options(options)
  -- promote = "estimate" (the value shrunk toward the base's estimate) did not pay on training
  -- and carried an outdated noise prior; an experiment still naming it is told, not ignored.
  if options.promote ~= nil then
    fail("option 'promote' was removed: halving{} promotes by each rung's measured value "
         .. "(promotion by the model's estimate did not pay on training, docs/BENCHMARKS.md); "
         .. "delete it")
  end
  kit.check_options(options, "halving", OPTIONS)
  local budget = type(options.budget) == "table" and options.budget or {}
  local max_steps = kit.int(options, "max_steps", math.tointeger(budget.steps) or 0, 0)
  if max_steps < 1 then fail("max_steps is needed when budget.steps is not set") end
  -- A rung must leave step times after the metric's skip, or every short trial is no_metric.
  local metric = type(options.metric) == "table" and options.metric or {}
  -- metric.min_steps (the steps an ok trial needs) already counts the skipped ones.
  local skip = math.tointeger(metric.skip) or 0
  local floor = math.max(skip + 1, math.tointeger(metric.min_steps) or 1)
  local min_steps = kit.int(options, "min_steps", math.max(1, floor, max_steps // 9), 1)
  if min_steps > max_steps then
    fail("min_steps (%d) is above max_steps (%d)", min_steps, max_steps)
  end
  -- The default: two rungs, min_steps and max_steps, the best 1 in max_steps // min_steps
  -- (at most 9) promoted from the first to the second (5 and 45 steps, 1 in 9, for 45). On the
  -- training landscapes this beat eta = 3's rungs (5, 15, 45) at 50 and 100 trials with fewer
  -- steps (docs/BENCHMARKS.md): a short run's median is nearly as good a measurement
  -- as a long one's there (the per-process offset dominates), so the middle rung bought little.
  local eta = kit.int(options, "eta", math.min(9, math.max(2, max_steps // min_steps)), 2)
  local hyperband = kit.bool(options, "hyperband", false)
  local compile = options.compile_steps
  if compile ~= nil and (type(compile) ~= "number" or compile ~= compile or compile < 0
                         or compile == math.huge) then
    fail("compile_steps must be a number of steps >= 0 (what a trial's start costs), got %s",
         tostring(compile))
  end
  local reduce = metric.reduce or "median"
  if reduce ~= "median" and reduce ~= "mean" and reduce ~= "min" then
    fail("metric.reduce must be median, mean or min, got %s", tostring(reduce))
  end
  return { eta = eta, steps = rung_steps(min_steps, max_steps, eta),
           n = kit.int(options, "n", nil, 1), hyperband = hyperband, compile = compile,
           skip = skip, reduce = reduce }
end

-- The base sampler: tpe{} (default), a name ("random"), a strategy spec from the DSL
-- ({ name =, options =, path = }) or a plain { name =, options = }.
local function load_base(spec, budget)
  spec = spec or "tpe"
  if type(spec) == "string" then spec = { name = spec } end
  if type(spec) ~= "table" or (type(spec.name) ~= "string" and type(spec.path) ~= "string") then
    fail("base must be a strategy such as tpe{} or random{}, got %s", type(spec))
  end
  if spec.name == "halving" and not spec.path then fail("base cannot be halving itself") end
  local mod = kit.load(spec, "base strategy")
  local options = {}
  for k, v in pairs(spec.options or {}) do options[k] = v end
  options.budget = budget
  return mod, options, spec.name or spec.path
end

function halving.new(space, options, history, rng)
  options = options or {}
  local o = check_options(options)
  local mod, base_options, base_name = load_base(options.base, options.budget)
  local self = setmetatable({ space = space, o = o, rng = rng, brackets = {}, members = {},
                              opened = 0, base_name = base_name, starts = {}, full = {},
                              at_rung = {} }, H)
  local told = {} -- the history as the base is told it (a pruned trial as its short ok run)
  for i, h in ipairs(history or {}) do told[i] = self:as_told(h) end
  self.base = mod.new(space, base_options, told, rng:split())
  self.replaying = true
  for _, h in ipairs(history or {}) do
    self:note_rung(h)
    if next(h.config) ~= nil then self:replay(h) end
  end
  self.replaying = false
  for _, b in ipairs(self.brackets) do
    for rung = b.start, #self.o.steps - 1 do self:promote(b, rung) end
  end
  return self
end

-- Observations from earlier sweeps over another space go to the base sampler's model.
function H:prior(items)
  if type(self.base.prior) == "function" then self.base:prior(items) end
end

-- The rung a step budget belongs to: the highest whose steps fit in it.
function H:rung_of(steps_budget)
  local steps = self.o.steps
  if not steps_budget then return #steps end
  local r = 1
  for i = 1, #steps do if steps[i] <= steps_budget then r = i end end
  return r
end

-- Bracket k starts at rung s with n members: plain halving always at rung 1 with eta^(R-1)
-- (one survivor reaches the top); hyperband cycles s = 1..R with ceil(R/(R-s+1) eta^(R-s)).
function H:open_bracket()
  local R, eta = #self.o.steps, self.o.eta
  self.opened = self.opened + 1
  local s = self.o.hyperband and ((self.opened - 1) % R) + 1 or 1
  local n = self.o.n
  if not n then
    n = math.floor(eta ^ (R - s) + 0.5)
    if self.o.hyperband then n = math.ceil(R / (R - s + 1) * eta ^ (R - s)) end
  end
  local b = { id = self.opened, start = s, quota = n, rungs = {}, promoted = {} }
  for i = 1, R do b.rungs[i] = {} end
  self.brackets[#self.brackets + 1] = b
  return b
end

function H:add_member(b, rung, config, key, issued)
  local m = { bracket = b, rung = rung, config = config, key = key, issued = issued }
  local list = b.rungs[rung]
  list[#list + 1] = m
  self.members[key] = self.members[key] or {}
  self.members[key][rung] = m
  return m
end

function H:proposal(m)
  if m.full then
    local bar = self:rung_bar()
    return { config = m.config, steps = self.o.steps[#self.o.steps],
             rung = bar and { steps = self.o.steps[1], value = bar } or nil }
  end
  m.issued = true
  local steps = self.o.steps[m.rung]
  if m.rung == m.bracket.start then return { config = m.config, steps = steps } end
  return { config = m.config, steps = steps, repeat_ok = true }
end

-- Whether a bracket's rung has all its members and all of them finished.
function H:complete(b, rung)
  local list = b.rungs[rung]
  if rung == b.start then
    if #list < b.quota then return false end
  elseif not b.promoted[rung - 1] then
    return false -- its members are not known yet
  end
  for _, m in ipairs(list) do
    if not m.result then return false end
  end
  return true
end

-- The best floor(n / eta) ok members (at least one) move up a rung; ties go to the earlier.
-- Members already at the next rung (a resumed history's promotions, made live) count toward
-- that number, so a replay adds only what the live run had not proposed yet.
function H:promote(b, rung)
  if self.replaying then return end -- decided once the whole history is in (halving.new)
  if b.promoted[rung] or rung >= #self.o.steps or not self:complete(b, rung) then return end
  b.promoted[rung] = true
  local list, ok = b.rungs[rung], {}
  for i, m in ipairs(list) do
    if m.result.status == "ok" and m.result.value then ok[#ok + 1] = { m = m, i = i } end
  end
  local k = math.min(#ok, math.max(1, #list // self.o.eta)) - #b.rungs[rung + 1]
  if k > 0 then
    table.sort(ok, function(x, y)
      local a, b = x.m.result.value, y.m.result.value
      if a ~= b then return a < b end
      return x.i < y.i
    end)
    for _, x in ipairs(ok) do
      if k <= 0 then break end
      local m = x.m
      if not (self.members[m.key] or {})[rung + 1] then
        self:add_member(b, rung + 1, m.config, m.key, false)
        k = k - 1
      end
    end
  end
  self:promote(b, rung + 1) -- nothing promoted: the next rung is complete (empty) too
end

-- The next member to run: the oldest bracket first, promotions (higher rungs) before fresh
-- configurations, which are drawn from the base sampler as the first rung fills.
function H:next_in(b, taken)
  for rung = #self.o.steps, b.start, -1 do
    for _, m in ipairs(b.rungs[rung]) do
      if not m.issued and not taken[m.key] then return m end
    end
  end
  local first = b.rungs[b.start]
  if #first < b.quota and not b.exhausted then
    local got = self.base:ask(1)
    local c = got and got[1]
    if type(c) == "table" and type(c.config) == "table" then c = c.config end
    if c and not self.members[self.space:key(c)] then
      return self:add_member(b, b.start, c, self.space:key(c), false)
    end
    -- The base has nothing (now or ever): close the rung rather than wait on it forever.
    b.exhausted, b.quota = true, #first
    self:promote(b, b.start)
  end
  return nil
end

-- A trial's start in steps: the compile_steps option, else the median of the measured ones
-- of the last START_WINDOW trials (nil while none was measured).
function H:start_steps()
  if self.o.compile then return self.o.compile end
  return reduce(self.starts, 1, #self.starts, "median")
end

-- Whether short rungs cost too much of a full trial to pay (FULL_RATIO).
function H:full_fidelity()
  local c = self:start_steps()
  if not c then return false end
  local steps = self.o.steps
  return #steps > 1 and (c + steps[1]) / (c + steps[#steps]) > FULL_RATIO
end

-- A fresh configuration of the base's at the top rung (full fidelity), or nil.
function H:next_full(taken)
  if self:base_done() then return nil end
  local got = self.base:ask(1)
  local c = got and got[1]
  if type(c) == "table" and type(c.config) == "table" then c = c.config end
  if not c then return nil end
  local key = self.space:key(c)
  if self.members[key] or self.full[key] or taken[key] then return nil end
  self.full[key] = true
  return { full = true, config = c, key = key }
end

function H:next_member(taken)
  local full = self:full_fidelity()
  for _, b in ipairs(self.brackets) do
    if full and not b.exhausted and #b.rungs[b.start] < b.quota then
      b.exhausted, b.quota = true, #b.rungs[b.start] -- no more fresh members: finish it
      self:promote(b, b.start)
    end
    local m = self:next_in(b, taken)
    if m then return m end
  end
  if full then return self:next_full(taken) end
  if self:base_done() then return nil end
  local open = 0
  for _, b in ipairs(self.brackets) do if not self:finished(b) then open = open + 1 end end
  if open >= MAX_OPEN then return nil end
  local m = self:next_in(self:open_bracket(), taken)
  if not m then -- the base offered nothing: forget the empty bracket, keep the cycle
    self.brackets[#self.brackets] = nil
    self.opened = self.opened - 1
  end
  return m
end

function H:base_done()
  return type(self.base.done) == "function" and self.base:done()
end

function H:finished(b)
  for rung = b.start, #self.o.steps do
    if not self:complete(b, rung) then return false end
  end
  return true
end

function H:ask(n)
  local out, taken = {}, {}
  while #out < n do
    local m = self:next_member(taken)
    if not m then break end
    taken[m.key] = true
    out[#out + 1] = self:proposal(m)
  end
  return out
end

-- A finished trial: passed to the base, then recorded at the rung its step budget names.
function H:tell(config, result)
  self:measure(result)
  self:note_rung(result)
  if result.baseline or next(config) == nil then return end
  if type(self.base.tell) == "function" then self.base:tell(config, self:as_told(result)) end
  self:record(config, result)
end

-- A trial's value after the first rung's step times (nil when it has fewer, or failed),
-- kept sorted in self.at_rung for rung_bar(); the baseline counts too.
function H:note_rung(result)
  if result.status ~= "ok" and result.status ~= "pruned" then return end
  local v = reduce(result.steps, self.o.skip + 1, self.o.steps[1], self.o.reduce)
  if not (v and v > 0 and v < math.huge) then return end
  local list, i = self.at_rung, #self.at_rung + 1
  while i > 1 and list[i - 1] > v do list[i] = list[i - 1]; i = i - 1 end
  list[i] = v
end

-- The in-trial rung's bar: the best 1/eta of the values at the first rung (the best one
-- while fewer than eta are known), or nil before any. Only full-fidelity proposals ask, and
-- those exist only with two rungs or more (full_fidelity).
function H:rung_bar()
  local list = self.at_rung
  if #list == 0 then return nil end
  return list[math.max(1, #list // self.o.eta)]
end

-- RESULT as the base is told it: a pruned trial with step times past the skip as the short
-- ok run it is (its value over the steps it has, weighed by their number), else unchanged.
function H:as_told(result)
  if result.status ~= "pruned" then return result end
  local steps = result.steps
  local v = reduce(steps, self.o.skip + 1, type(steps) == "table" and #steps or 0,
                   self.o.reduce)
  if not v then return result end
  local out = {}
  for k, x in pairs(result) do out[k] = x end
  out.status, out.value = "ok", v
  return out
end

-- A trial's start in steps from what it cost (wall_ms, step_ms: src/luahost/strategy.h), kept for
-- start_steps(); trials without both are left out.
function H:measure(result)
  local wall, step = result.wall_ms, result.step_ms
  if type(wall) ~= "number" or type(step) ~= "number" or not (step > 0) then return end
  local n = type(result.steps) == "table" and #result.steps or 0
  if n == 0 then return end
  local start = (wall - n * step) / step
  if not (start == start and start < math.huge) then return end
  local s = self.starts -- the last START_WINDOW trials' (a ring)
  s.next = (s.next or 0) % START_WINDOW + 1
  s[s.next] = math.max(0, start)
end

function H:record(config, result)
  local key = self.space:key(config)
  local at = self.members[key]
  if not at or not FINAL[result.status] then return end -- a re-run of someone else's, lost
  local m = at[self:rung_of(result.steps_budget)]
  if not m or m.result then return end
  m.issued, m.result = true, { status = result.status, value = result.value }
  self:promote(m.bracket, m.rung)
end

-- One history item: the member it was (a fresh configuration joins the oldest bracket with
-- room at that starting rung, opening brackets in order as the live run did; a promotion
-- finds the member its previous rung promoted), then its result if it has one.
function H:replay(h)
  local key = self.space:key(h.config)
  local rung = self:rung_of(h.steps_budget)
  local at = self.members[key] or {}
  local m = at[rung]
  if not m and at[rung - 1] then
    m = self:add_member(at[rung - 1].bracket, rung, h.config, key, true)
  end
  if not m and rung == #self.o.steps and rung > 1 and not self.o.hyperband then
    self.full[key] = true -- a full-fidelity trial (full_fidelity()): the base learns from it
    return
  end
  if not m then
    local b
    for _, x in ipairs(self.brackets) do
      if x.start == rung and #x.rungs[rung] < x.quota then b = x; break end
    end
    for _ = 1, #self.o.steps do
      if b then break end
      local x = self:open_bracket()
      if x.start == rung then b = x end
    end
    if not b then return end -- a budget no bracket starts at: the base alone learns from it
    m = self:add_member(b, rung, h.config, key, true)
  end
  m.issued = true
  self:record(h.config, h)
end

function H:done()
  if not self:base_done() then return false end
  for _, b in ipairs(self.brackets) do
    if not self:finished(b) then return false end
    for rung = b.start, #self.o.steps do
      for _, m in ipairs(b.rungs[rung]) do if not m.issued then return false end end
    end
  end
  return true
end

-- The base sampler's model estimates (docs/STRATEGIES.md, "estimate"), for the confirmation;
-- every configuration false when the base has none.
function H:estimate(configs)
  if type(self.base.estimate) == "function" then return self.base:estimate(configs) end
  local out = {}
  for i = 1, #configs do out[i] = false end
  return out
end

-- The base sampler's public recipe (docs/STRATEGIES.md, "recipe"), or nil.
function H:recipe()
  if type(self.base.recipe) == "function" then return self.base:recipe() end
  return nil
end

halving.rung_steps = rung_steps
return halving
