-- random{}: uniformly random configurations from the sweep's seeded rng, never one twice
-- (history included). The kit's unseen sampler: rejection sampling while the space is
-- mostly unexplored; once it is small and half seen, or samples keep colliding, the unseen
-- rest is enumerated and shuffled so the last configurations come out in bounded time.
-- Must not use math.random.

local kit = require("kit")

local random = { history = "seen" } -- new() reads only the seen set (kit.seen)
local R = {}
R.__index = R

function random.new(space, options, history, rng)
  kit.check_options(options, "random", {})
  local self = setmetatable({ space = space, size = space:size(), seen = kit.seen(space, history),
                              unseen = kit.unseen(space, rng) }, R)
  self.fresh = function(key) return self.seen:mark(key) end
  return self
end

function R:next_config()
  -- Half the space seen: rejection sampling would mostly collide, enumerate instead.
  local enumerate = self.unseen:enumerating() or self.seen.n * 2 >= self.size
  return (self.unseen:take(self.fresh, enumerate))
end

function R:ask(n)
  local out = {}
  while #out < n and not self:done() do
    local c = self:next_config()
    if not c then break end
    out[#out + 1] = c
  end
  return out
end

-- Configurations run by the host without asking (re-runs) count as seen too.
function R:tell(config)
  self.seen:mark(self.space:key(config))
end

function R:done()
  return #self.space.params == 0 or self.seen.n >= self.size
end

return random
