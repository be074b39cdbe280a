-- A seeded pseudo-random generator for strategies: xoshiro256** on Lua 5.4's 64-bit
-- integers, seeded through splitmix64. Owns nothing but its four state words; must not
-- touch math.random (a strategy's choices have to replay exactly from the sweep's seed,
-- whatever else in the process draws random numbers). Integer arithmetic wraps and `>>`
-- is logical in Lua 5.4, so the sequence is the same on every platform.

local rng = {}
local R = {}
R.__index = R
R.__name = "flagtune.rng"

local TWO_POW_53 = 9007199254740992 -- 2^53: random() uses the top 53 bits

-- splitmix64: spreads one seed over the state words (xoshiro's authors' advice).
local function splitmix(x)
  x = x + 0x9E3779B97F4A7C15
  local z = x
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return x, z ~ (z >> 31)
end

local function rotl(x, k)
  return (x << k) | (x >> (64 - k))
end

-- Accepts an integer, an integral float or a numeric string; anything else is a bug in
-- the caller, reported as such.
local function seed_integer(seed)
  local s = math.tointeger(tonumber(seed or 0))
  if not s then error("rng.new: seed must be an integer, got " .. tostring(seed), 2) end
  return s
end

function rng.new(seed)
  local x = seed_integer(seed)
  local r = setmetatable({}, R)
  local s = {}
  for i = 1, 4 do x, s[i] = splitmix(x) end
  r.s = s
  return r
end

-- The next 64-bit word (a Lua integer, possibly negative).
function R:next64()
  local s = self.s
  local s0, s1, s2, s3 = s[1], s[2], s[3], s[4]
  local result = rotl(s1 * 5, 7) * 9
  local t = s1 << 17
  s2 = s2 ~ s0
  s3 = s3 ~ s1
  s1 = s1 ~ s2
  s0 = s0 ~ s3
  s2 = s2 ~ t
  s3 = rotl(s3, 45)
  s[1], s[2], s[3], s[4] = s0, s1, s2, s3
  return result
end

-- A float in [0, 1) with 53 random bits.
function R:random()
  return (self:next64() >> 11) / TWO_POW_53
end

-- An integer in [lo, hi], both inclusive, without modulo bias (rejection on 53 bits).
function R:int(lo, hi)
  lo, hi = math.tointeger(lo), math.tointeger(hi)
  if not lo or not hi or hi < lo then
    error("rng:int: bounds must be integers with lo <= hi", 2)
  end
  local m = hi - lo + 1
  if m <= 0 or m > TWO_POW_53 then error("rng:int: range wider than 2^53", 2) end
  local limit = TWO_POW_53 - TWO_POW_53 % m
  while true do
    local x = self:next64() >> 11
    if x < limit then return lo + x % m end
  end
end

-- A standard normal deviate (Box-Muller; one value per call keeps the state simple).
function R:normal()
  local u1 = 1 - self:random() -- (0, 1]: log(0) is -inf
  local u2 = self:random()
  return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
end

-- A uniformly chosen element of the array T (nil when T is empty).
function R:choice(t)
  if #t == 0 then return nil end
  return t[self:int(1, #t)]
end

-- Shuffles the array T in place (Fisher-Yates) and returns it.
function R:shuffle(t)
  for i = #t, 2, -1 do
    local j = self:int(1, i)
    t[i], t[j] = t[j], t[i]
  end
  return t
end

-- An independent generator derived from this one: for a strategy that drives another
-- (successive halving over a base strategy) without the two sharing one stream.
function R:split()
  return rng.new(self:next64())
end

return rng
