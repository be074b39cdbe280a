-- grid{ shuffle = false, max = 100000 }: every configuration once, in mixed-radix order
-- (space:at(k), the last parameter fastest) or a seeded shuffle of it, skipping those the
-- history already ran. Refuses spaces larger than max: a grid that cannot finish
-- overnight is a mistake better caught before the first trial.

local kit = require("kit")

local grid = { history = "seen" } -- new() reads only the seen set (kit.seen)
local G = {}
G.__index = G

local DEFAULT_MAX = 100000

local function count(n)
  if n < 1e15 then return string.format("%d", math.floor(n)) end
  return string.format("%.3g", n)
end

function grid.new(space, options, history, rng)
  options = options or {}
  kit.check_options(options, "grid", { "shuffle", "max" })
  local max = kit.int(options, "max", DEFAULT_MAX, 1)
  local shuffle = kit.bool(options, "shuffle", false)
  local size = space:size()
  if size > max then
    error(string.format("the space has %s configurations, more than grid's max of %d; use " ..
      "random{} or tpe{}, or raise grid{ max = ... }", count(size), max), 0)
  end
  local self = setmetatable({ space = space, size = math.tointeger(size), pos = 0,
                              seen = kit.seen(space, history) }, G)
  if shuffle then
    local order = {}
    for k = 1, self.size do order[k] = k end
    self.order = rng:shuffle(order)
  end
  return self
end

-- The next configuration not seen yet (kept in self.pending until taken), or nil.
function G:peek()
  while self.pending == nil and self.pos < self.size do
    self.pos = self.pos + 1
    local c = self.space:at(self.order and self.order[self.pos] or self.pos)
    local key = self.space:key(c)
    if self.seen:mark(key) then self.pending = c end
  end
  return self.pending
end

function G:ask(n)
  local out = {}
  while #out < n and self:peek() do
    out[#out + 1] = self.pending
    self.pending = nil
  end
  return out
end

-- Re-runs the host made without asking are not proposed again.
function G:tell(config)
  local key = self.space:key(config)
  self.seen:mark(key)
  if self.pending and self.space:key(self.pending) == key then self.pending = nil end
end

function G:done()
  return self:peek() == nil
end

return grid
