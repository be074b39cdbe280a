-- tpe{}'s start (search/tpe.lua): the Latin hypercube its first trials are drawn from and the
-- guides' configuration (the public recipe). Methods of a tpe{} object (self.params, self.o,
-- self.rng), installed by search/tpe.lua. Must not use math.random.
local space_mod = require("space")
local models = require("tpe_models")

local M = {}

-- N points, one per stratum of every parameter, strata paired at random: a start that
-- covers each parameter's range evenly however few trials it has.
function M.latin_hypercube(self, n)
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

-- The guides' configuration: each parameter at the catalog's recommended value where it has
-- one in the space, else at its default where that is in the space, else at its middle value.
-- Also how many parameters took a recommended value (T:recipe).
function M.guide_point(self)
  local x, recommended = {}, 0
  for dim, p in ipairs(self.params) do
    local rec, def = space_mod.guide(p.name)
    local function at(v)
      if v == nil then return nil end
      return p:index(v) or p:index(tostring(v))
    end
    local i = at(rec)
    if not i and self.o.guide >= 2 and type(rec) == "number" and not models.is_categorical(p) and
       math.type(p:value(1)) then
      i = rec < p:value(1) and 1 or rec > p:value(p.n) and p.n or nil -- past an end: that end
    end
    if i then recommended = recommended + 1 end
    x[dim] = i or at(def) or (p.n + 1) // 2
  end
  return x, recommended
end

return M
