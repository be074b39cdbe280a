-- The strategy kit: the pieces every strategy needs and used to copy, for the shipped ones
-- (search/*.lua) and a user's strategy_file alike (`local kit = require("kit")`):
--   kit.seen()          the set of configurations not to propose again (the baseline in it)
--   kit.unseen()        uniformly random unseen configurations in bounded time
--   kit.check_options() unknown options refused with the list of known ones
--   kit.int/number/bool options read and range-checked, with the default when absent
--   kit.load()          a strategy module by name (search/NAME.lua) or by file path
-- Errors are raised without a location (error(msg, 0)) so the host reports them at the
-- experiment's strategy line. Must not keep state between strategies or use math.random:
-- the sampler draws from the rng it is given, so a seeded sweep replays exactly.

local kit = {}

local LOCATED = "^[^\n:]+:%d+:" -- "path:line:" as Lua's error() writes it
local TRIES = 64             -- rejection samples per configuration before enumerating
local ENUMERATE_MAX = 200000 -- the largest space enumerated (instruction budget per call)

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end
local digest = ft.digest -- src/luahost/lhost.c

-- ---- the seen set ----

local Seen = {}
Seen.__index = Seen

-- kit.seen(SPACE, HISTORY): keys of configurations already run or proposed. The baseline
-- "{}" is in it from the start (flagtune runs it itself) but not counted in `n`, the number
-- of the space's configurations seen. HISTORY (optional) items' configs are marked; a
-- history a "seen" strategy got (docs/STRATEGIES.md) brings its set, which is returned.
-- Keys are held by their digest (ft.digest: 17 interned bytes for a long key, shared with
-- the host's seen set), not as the canonical JSON itself: a seen set costs about 40 bytes
-- a configuration instead of the JSON's length twice over.
function kit.seen(space, history)
  if history and getmetatable(history.seen) == Seen then return history.seen end
  local self = setmetatable({ keys = { ["{}"] = true }, n = 0 }, Seen)
  for _, h in ipairs(history or {}) do self:mark(space:key(h.config)) end
  return self
end

-- Marks KEY; true when it was not seen before.
function Seen:mark(key)
  local id = digest(key)
  if self.keys[id] then return false end
  self.keys[id] = true
  self.n = self.n + 1
  return true
end

function Seen:has(key) return self.keys[digest(key)] == true end

-- ---- the unseen sampler ----

local Unseen = {}
Unseen.__index = Unseen

-- kit.unseen(SPACE, RNG): draws configurations uniformly. Rejection sampling while the
-- space is mostly unexplored; for spaces up to ENUMERATE_MAX configurations, when samples
-- keep colliding (or the caller asks for it), every index 1..size shuffled once and
-- consumed from the end, so the last configurations come out in bounded time.
function kit.unseen(space, rng)
  return setmetatable({ space = space, rng = rng, size = space:size() }, Unseen)
end

-- Whether the shuffled enumeration has started (it is never undone).
function Unseen:enumerating() return self.pool ~= nil end

-- The next configuration whose key FRESH(key) accepts (FRESH may mark it seen), and its
-- key; or nil when there is none (or, in a space too large to enumerate, none was found in
-- TRIES samples). ENUMERATE = true goes straight to the shuffled rest in a small space
-- (random{} does once half the space is seen); the rng is drawn from in the same order
-- whichever way a configuration is found, so seeded results do not change.
function Unseen:take(fresh, enumerate)
  local space = self.space
  local small = self.size <= ENUMERATE_MAX
  if not (enumerate and small) then
    for _ = 1, TRIES do
      local c = space:sample(self.rng)
      local key = space:key(c)
      if fresh(key) then return c, key end
    end
    if not small then return nil end -- a huge space this crowded: offer nothing, not spin
  end
  if not self.pool then
    -- Configurations are made (and seen ones skipped) only as they are taken, so building
    -- the pool stays cheap.
    local pool = {}
    for k = 1, math.tointeger(self.size) do pool[k] = k end
    self.pool = self.rng:shuffle(pool)
  end
  local pool = self.pool
  while #pool > 0 do
    local c = space:at(table.remove(pool))
    local key = space:key(c)
    if fresh(key) then return c, key end
  end
  return nil
end

-- ---- options ----

-- The host adds these to every strategy's options.
local HOST_OPTIONS = { budget = true, metric = true }

-- Refuses an option of OPTIONS not in KNOWN (a list of names, in the order the message
-- gives them): "unknown option 'x' (NAME{} takes a, b)" or "(NAME{} takes none)", with
-- "did you mean 'y'?" first when one is close (util.did_you_mean, loaded only on the error).
function kit.check_options(options, name, known)
  local set = {}
  for _, k in ipairs(known) do set[k] = true end
  for k in pairs(options or {}) do
    if not set[k] and not HOST_OPTIONS[k] then
      local hint = require("util").did_you_mean(k, known)
      fail("unknown option '%s' (%s%s{} takes %s)", tostring(k),
        hint and ("did you mean '" .. hint .. "'? ") or "", name,
        #known > 0 and table.concat(known, ", ") or "none")
    end
  end
end

-- OPTIONS[NAME] as an integer >= MIN, or DEFAULT when absent.
function kit.int(options, name, default, min)
  local v = options[name]
  if v == nil then return default end
  if math.type(v) ~= "integer" or v < min then
    fail("%s must be an integer >= %d, got %s", name, min, tostring(v))
  end
  return v
end

-- OPTIONS[NAME] as a number that OK(v) accepts, or DEFAULT when absent; WANT says what OK
-- wants ("a number between 0 and 1").
function kit.number(options, name, default, ok, want)
  local v = options[name]
  if v == nil then v = default end
  if type(v) ~= "number" or not ok(v) then
    fail("%s must be %s, got %s", name, want, tostring(v))
  end
  return v
end

-- OPTIONS[NAME] as a boolean, or DEFAULT when absent.
function kit.bool(options, name, default)
  local v = options[name]
  if v == nil then return default end
  if type(v) ~= "boolean" then fail("%s must be true or false, got %s", name, tostring(v)) end
  return v
end

-- ---- loading a strategy ----

-- kit.load(SPEC, ROLE): the module of strategy SPEC ({ name = "tpe" } or { path = FILE }).
-- A file is loaded with its own "@path" chunk name, so errors in it (syntax or raised while
-- it loads) read "FILE:LINE: ..."; the rest are unlocated: "cannot load ROLE file: ...",
-- "unknown strategy 'x'", or a module without new(). ROLE defaults to "strategy".
function kit.load(spec, role)
  local name = tostring(spec.name or spec.path or "?")
  local mod
  if spec.path then
    local chunk, err = loadfile(spec.path, "t")
    if not chunk then
      if err:find(LOCATED) then error(err, 0) end
      fail("cannot load %s file: %s", role or "strategy", err)
    end
    mod = chunk(spec.path)
  else
    local modname = "search." .. name
    if type(ft) == "table" and ft.has_module and not ft.has_module(modname) then
      fail("unknown strategy '%s'", name)
    end
    mod = require(modname)
  end
  if type(mod) ~= "table" or type(mod.new) ~= "function" then
    fail("strategy '%s' must return a table with a new(space, options, history, rng) function",
      name)
  end
  return mod
end

return kit
