-- hill_climb{ startup = 5 }: the example user strategy of docs/STRATEGIES.md, shipped and tested.
-- Random for a few trials, then one parameter of the best configuration so far moved one
-- step (or re-drawn, for a choice). Copy it next to an experiment as a starting point for
-- your own: strategy = strategy_file("hill.lua", { startup = 5 }). It builds on the
-- strategy kit (lua/kit.lua, docs/STRATEGIES.md): the seen set and the option checks.
local kit = require("kit")

local M = { history = "results" } -- new() reads configs, statuses and values
M.__index = M

function M.new(space, options, history, rng)
  -- Bad options raise without a location: the host reports them at the strategy line.
  kit.check_options(options, "hill_climb", { "startup" })
  local self = setmetatable({ space = space, rng = rng, seen = kit.seen(space, history),
                              startup = kit.int(options, "startup", 5, 0) }, M)
  for _, h in ipairs(history) do self:tell(h.config, h) end
  return self
end

-- The best configuration with one parameter moved one step (or re-drawn for a choice).
function M:neighbour()
  local c = {}
  for k, v in pairs(self.best.config) do c[k] = v end
  local p = self.rng:choice(self.space.params)
  local i = p:index(c[p.name])
  if p.kind == "choice" or p.kind == "bool" then
    i = self.rng:int(1, p.n)
  else
    i = math.min(p.n, math.max(1, i + (self.rng:random() < 0.5 and -1 or 1)))
  end
  c[p.name] = p:value(i)
  return c
end

-- Bounded: a crowded neighbourhood falls back to random, then to fewer proposals.
function M:ask(n)
  local out = {}
  for _ = 1, 50 * n do
    if #out == n then break end
    local near = self.best and self.startup <= 0 and self.rng:random() < 0.9
    local c = near and self:neighbour() or self.space:sample(self.rng)
    if self.seen:mark(self.space:key(c)) then
      self.startup = self.startup - 1
      out[#out + 1] = c
    end
  end
  return out
end

function M:tell(config, result)
  self.seen:mark(self.space:key(config))
  if result.baseline or result.status ~= "ok" or not result.value then return end
  if not self.best or result.value < self.best.value then
    self.best = { config = config, value = result.value }
  end
end

function M:done()
  return #self.space.params == 0 or false
end

return M
