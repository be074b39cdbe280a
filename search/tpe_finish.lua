-- tpe{}'s finish (search/tpe.lua, option `finish`): over the last trials of a known budget,
-- the best configuration's one-parameter neighbours and its structured variants, best
-- predicted first, before the model's other proposals. The structured variants are where the
-- guides give structure: the collective combine thresholds (..._combine_threshold_bytes)
-- tied to one size, every threshold set to the value one of them has in the best
-- configuration. Methods of a tpe{} object, installed by search/tpe.lua. Must not use
-- math.random.
local models = require("tpe_models")

local M = {}

-- The trials the default confirmation takes from budget.trials (the baseline, three
-- candidates and the recipe, once each: docs/EXPERIMENTS.md), when the budget has room for it.
local CONFIRM_TRIALS, CONFIRM_MIN_BUDGET = 5, 15
local THRESHOLD = "_combine_threshold_bytes$"

-- Whether the search is in its last `finish` share of the trial budget (at least two trials).
function M.finishing(self)
  local trials, share = self.o.trials, self.o.finish
  if not trials or share <= 0 then return false end
  local search = trials - (trials >= CONFIRM_MIN_BUDGET and CONFIRM_TRIALS or 0)
  local last = math.max(2, math.floor(share * trials + 0.5))
  return self.seen.n >= search - last
end

-- The best configuration's structured variants: for each distinct combine threshold value in
-- X, every threshold set to it where it has that value (nothing with fewer than two).
local function tied_thresholds(params, x, out)
  local dims = {}
  for dim, p in ipairs(params) do
    if p.name:find(THRESHOLD) and not models.is_categorical(p) then dims[#dims + 1] = dim end
  end
  if #dims < 2 then return out end
  local done = {}
  for _, from in ipairs(dims) do
    local v = params[from]:value(x[from])
    if not done[v] then
      done[v] = true
      local y, moved = table.move(x, 1, #x, 1, {}), false
      for _, dim in ipairs(dims) do
        local i = params[dim]:index(v)
        if i and i ~= y[dim] then y[dim], moved = i, true end
      end
      if moved then out[#out + 1] = y end
    end
  end
  return out
end

-- The finish's proposal: the fresh candidate (neighbour or structured variant of the best
-- measured configuration) the surrogate's mean predicts fastest among those the feasibility
-- model lets run; the Parzen acquisition orders them without a surrogate. nil when every
-- candidate has run.
function M.from_finish(self, m, taken)
  local best = self.ranked[1]
  if not best or not self:rs_of(best) then return nil end
  local x = self:vec(best)
  local xs = tied_thresholds(self.params, x, self:neighbours(x, {}))
  local cands = {}
  local fit = self.ridge and self.ridge.n >= 3
  if fit then
    self.ridge:fit(nil)
    self.fridge:fit(nil)
  end
  for i, y in ipairs(xs) do
    local c = { x = y, i = i }
    if fit then
      local lin = 1 - math.max(0, math.min(0.98, self.fridge:predict(y)))
      c.ok, c.s = math.min(math.exp(self:log_feasible(m, y)), lin) >= self.feasible_min,
        -self.ridge:predict(y)
    else
      c.ok, c.s = true, self:score(m, y)
    end
    cands[i] = c
  end
  table.sort(cands, function(a, b)
    if a.ok ~= b.ok then return a.ok end
    if a.s ~= b.s then return a.s > b.s end
    return a.i < b.i
  end)
  return self:first_fresh(cands, taken)
end

M.tied_thresholds = tied_thresholds
return M
