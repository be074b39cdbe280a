-- random{}: uniformly random configurations from the sweep's seeded rng, never one twice
-- (history included). Rejection sampling while the space is mostly unexplored; once it is
-- small and half seen, or samples keep colliding, the unseen rest is enumerated and
-- shuffled so the last configurations come out in bounded time. Must not use math.random.

local random = {}
local R = {}
R.__index = R

local OPTIONS = { budget = true, metric = true }
local TRIES = 64             -- rejection samples per configuration before enumerating
local ENUMERATE_MAX = 200000 -- the largest space enumerated (instruction budget per call)

local function check_options(options)
  for k in pairs(options) do
    if not OPTIONS[k] then error(string.format("unknown option '%s' (random{} takes none)",
      tostring(k)), 0) end
  end
end

function random.new(space, options, history, rng)
  check_options(options or {})
  local self = setmetatable({ space = space, rng = rng, size = space:size(), seen = {},
                              n_seen = 0 }, R)
  self.seen["{}"] = true -- the baseline is not in the searched space
  for _, h in ipairs(history or {}) do self:mark(space:key(h.config)) end
  return self
end

function R:mark(key)
  if self.seen[key] then return false end
  self.seen[key] = true
  self.n_seen = self.n_seen + 1
  return true
end

-- Every index 1..size, shuffled; built once, consumed from the end. Configurations
-- are made (and seen ones skipped) only as they are taken, so building stays cheap.
function R:build_pool()
  local pool = {}
  for k = 1, math.tointeger(self.size) do pool[k] = k end
  self.pool = self.rng:shuffle(pool)
end

function R:from_pool()
  local pool = self.pool
  while #pool > 0 do
    local c = self.space:at(table.remove(pool))
    if self:mark(self.space:key(c)) then return c end
  end
  return nil
end

function R:next_config()
  local small = self.size <= ENUMERATE_MAX
  if not self.pool and small and self.n_seen * 2 >= self.size then self:build_pool() end
  if self.pool then return self:from_pool() end
  for _ = 1, TRIES do
    local c = self.space:sample(self.rng)
    if self:mark(self.space:key(c)) then return c end
  end
  if small then
    self:build_pool()
    return self:from_pool()
  end
  return nil -- a huge space this crowded: offer nothing now rather than spin
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
  self:mark(self.space:key(config))
end

function R:done()
  return #self.space.params == 0 or self.n_seen >= self.size
end

return random
