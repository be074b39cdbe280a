-- The strategy host, Lua side: loads a strategy (search/NAME.lua or a user file), gives it
-- the space, its options, the replayed history and a seeded rng, and enforces the
-- protocol on everything it proposes: valid configurations only, no configuration twice
-- unless the proposal says repeat_ok, proposals rendered to final settings. Owns the seen
-- set (history + everything proposed or told). Must not run processes, read the
-- database or know about C: src/luahost/strategy.c calls in under an instruction budget.
--
-- Errors are strings a user can act on, and their prefix says whose fault they are:
--   "strategy-file.lua:LINE: ..."  raised inside a user strategy file (Lua's own location)
--   "experiment.lua:LINE: ..."     the experiment's strategy spec: unknown strategy, bad
--                                  options (a strategy's new() raising without a location)
--   "strategy 'NAME' ..."          a protocol violation (invalid or duplicate proposal), or
--                                  a strategy raising without a location in ask/tell/done
-- Anything else ("search/grid.lua:12: ...", "lua/host.lua:...") is a bug in flagtune.

local space_mod = require("space")
local rng_mod = require("rng")
local pgle = require("pgle")
local kit = require("kit")
local envpairs = require("envpairs")

-- The library functions called most, as locals: each global a function reads is a string
-- constant of that function, interned again at every start (docs/COST.md, Start-up).
local type, error = type, error
local format = string.format

local host = {}
local Host = {}
Host.__index = Host
Host.__name = "flagtune.host"

local LOCATED = "^[^\n:]+:%d+:" -- "path:line:" as Lua's error() writes it

-- "experiment.lua:LINE: MSG" at the strategy spec (the file alone when no line is known).
local function at_experiment(exp, msg)
  local st = exp.strategy or {}
  local line = st.line or (type(exp.lines) == "table" and exp.lines.strategy)
  local path = exp.path or (exp.space and exp.space.path) or "experiment"
  if line then return format("%s:%d: %s", path, line, msg) end
  return path .. ": " .. msg
end

-- Where the instruction budget ran out, read from the stack the error left (a handler
-- runs before unwinding): the innermost frame in the user's strategy file if there is one,
-- else the innermost Lua frame. The budget hook raises without a location of its own.
local function budget_location(file)
  local first
  for level = 2, 200 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.what ~= "C" and info.currentline and info.currentline > 0 then
      local src = info.source:gsub("^@", "")
      local here = format("%s:%d: ", src, info.currentline)
      if file and src == file then return here end
      first = first or here
    end
  end
  return first or ""
end

-- Error handler for strategy calls: a budget error gets the line where it ran out (in the
-- user's file when it is on the stack, whatever location the hook gave); any other message
-- the strategy raised without a location (error(msg, 0)) gets PREFIX(msg); located ones
-- pass unchanged.
local function locate_with(prefix, file)
  return function(e)
    if type(e) ~= "string" then return e end
    local budget = e:match("instruction budget of %d+ exceeded")
    if budget then return budget_location(file) .. budget end
    if e:find(LOCATED) then return e end
    return prefix(e)
  end
end

local function finite(v)
  if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then return nil end
  return v
end

-- The strategy module (kit.load: a user file, whose errors keep their "path:line:", or an
-- embedded search/NAME.lua); unlocated errors are the experiment's, at its strategy line.
local function load_module(exp, name)
  local st = exp.strategy or {}
  local ok, mod = pcall(kit.load, { name = name, path = st.path })
  if ok then return mod end
  if type(mod) == "string" and not mod:find(LOCATED) then error(at_experiment(exp, mod), 0) end
  error(mod, 0)
end

-- What a strategy module's `history` field may ask for (docs/STRATEGIES.md, "What the
-- history holds"): every entry with its step times (the default), the entries without them
-- (n_steps says how many there were), or no entries at all, only the seen set.
local LEVELS = { steps = true, results = true, seen = true }

-- The module's history level, checked: "steps" when it says nothing.
local function history_level(exp, name, mod)
  local level = mod.history
  if level == nil then return "steps" end
  if not LEVELS[level] then
    error(at_experiment(exp, format("strategy '%s': history must be \"steps\", \"results\" " ..
      "or \"seen\", got %s", name, tostring(level))), 0)
  end
  return level
end

-- History items { json (or config), status, value, steps (or n_steps), steps_budget, number }
-- as the strategy sees them: decoded, canonical, marked seen (an item given as JSON is
-- reused as the strategy's entry: the caller's table changes). Configurations that no
-- longer fit the space (an earlier sweep's, or the experiment changed) go to the second
-- list as the parameters they share with it (partial configurations, not marked seen), for
-- a strategy's prior(); those sharing nothing are left out. LEVEL (Host.level's) "results"
-- keeps no step times (n_steps, their count, instead); "seen" keeps no entry that fits,
-- only its mark. The lists are LIST and PARTIAL when given (appended to).
function Host:replay(history, level, list, partial)
  list, partial = list or {}, partial or {}
  local keep_steps, keep_entry = level ~= "results", level ~= "seen"
  for _, item in ipairs(history or {}) do
    local tbl = item.config
    if tbl == nil then tbl = ft.json_decode(item.json or "") end
    local config, key = self.space:decode_key(tbl)
    local shared = not config and self.space:project(tbl)
    local entry
    if item.config == nil then -- given as JSON (src/luahost/strategy.c's): the item becomes the entry,
      -- its JSON dropped, so that a 10,000-trial resume does not hold two tables a trial
      entry, item.json = item, nil
      entry.config, entry.value = config or shared, finite(item.value)
      if keep_steps then entry.steps = item.steps or {} else
        entry.n_steps, entry.steps = item.n_steps or #(item.steps or {}), nil
      end
    else
      entry = { config = config or shared, status = item.status, value = finite(item.value),
                steps_budget = item.steps_budget, number = item.number }
      if keep_steps then entry.steps = item.steps or {} else
        entry.n_steps = item.n_steps or #(item.steps or {})
      end
    end
    if config ~= nil then
      self:mark_key(key)
      entry.baseline = next(config) == nil
      if keep_entry then list[#list + 1] = entry end
    elseif shared then
      partial[#partial + 1] = entry
    end
  end
  return list, partial
end

-- IDS (a list of the ft.digest of canonical JSON texts: stored configurations of a sweep
-- whose space made them, Host.space_digest the same as the sweep's; src/luahost/
-- lhost_strategy.c digests them) marked seen as they are, with no decode: the history of a
-- "seen"-level strategy whose stored texts are known to be its keys. One loop, no call a key.
function Host:add_ids(ids)
  local seen, n = self.seen, self.n_seen
  for i = 1, #ids do
    local id = ids[i]
    if id ~= "{}" and not seen[id] then seen[id], n = true, n + 1 end
  end
  self.n_seen = n
end

-- The seen set is keyed by ft.digest(key) (see kit.seen): about 40 bytes a configuration.
function Host:mark(config)
  if next(config) ~= nil then self:mark_key(self.space:key(config)) end
end

-- Marks the configuration whose key is KEY ("{}", the baseline, is never marked).
function Host:mark_key(key)
  if key == "{}" then return end
  local id = ft.digest(key)
  if not self.seen[id] then self.seen[id], self.n_seen = true, self.n_seen + 1 end
end

-- host.open(EXP, BUDGET): the host with its strategy module loaded, before any history:
-- Host:add (any number of times, in trial order), then Host:start make the strategy. EXP
-- is lua/dsl.lua's validated experiment table; BUDGET ({ trials, hours, steps }) the
-- sweep's, which the command line may have changed (EXP.budget, the file's, when nil).
-- Host.level is what the module's history holds ("steps", "results" or "seen"), so that
-- src/luahost/strategy.c reads from the database only that; Host.space_digest the identity
-- of the keys its space makes (Space:digest), stored with a new sweep and compared by resume.
function host.open(exp, budget)
  local st = exp.strategy or { name = "random" }
  local sp = exp.space
    or space_mod.new(exp.flags, exp.vars, exp.fixed_flags, exp.env, exp.path, exp.lines)
  local name = st.name or st.path or "?"
  -- pending: the configurations asked and not yet told, by their canonical JSON (Host:accept,
  -- Host:tell), so that a tell finds its table instead of decoding the JSON again.
  local self = setmetatable({ space = sp, exp = exp, name = name, path = st.path, seen = {},
                              n_seen = 0, pending = {}, hist = {}, partial = {},
                              budget = budget or exp.budget }, Host)
  self.mod = load_module(exp, name)
  self.level = history_level(exp, name, self.mod)
  self.space_digest = sp:digest()
  return self
end

-- Replays HISTORY (a list of items, Host:replay) onto what Host:start gives the strategy.
function Host:add(history)
  self:replay(history, self.level, self.hist, self.partial)
end

-- The history new() gets: the entries, or for a "seen" module an empty list whose `seen`
-- is a kit.seen set holding every configuration the history marked (its marks its own).
function Host:history()
  if self.level ~= "seen" then return self.hist end
  -- The host's set under the strategy's own (a key not in it is looked up in the host's), not a
  -- copy of every key: from here on the host marks only what the strategy proposed or is told.
  local s = kit.seen()
  s.keys = setmetatable({ ["{}"] = true }, { __index = self.seen })
  s.n = self.n_seen
  return { seen = s }
end

-- Makes the strategy from the history added, its rng seeded with SEED; returns the host.
function Host:start(seed)
  local exp, st, name = self.exp, self.exp.strategy or {}, self.name
  local options = {}
  for k, v in pairs(st.options or {}) do options[k] = v end
  options.budget = self.budget
  if exp.metric then
    options.metric = { skip = exp.metric.skip or 0, min_steps = exp.metric.min_steps or 1,
                       reduce = exp.metric.reduce or "median" }
  end
  local handler = locate_with(function(e)
    return at_experiment(exp, format("strategy '%s': %s", name, e))
  end, st.path)
  local hist, partial = self:history(), self.partial
  self.hist, self.partial = nil, nil
  local ok, obj = xpcall(self.mod.new, handler, self.space, options, hist, rng_mod.new(seed or 0))
  self.mod = nil
  if not ok then error(obj, 0) end
  if type(obj) ~= "table" or type(obj.ask) ~= "function" then
    error(at_experiment(exp, format(
      "strategy '%s': new() must return an object with an ask(self, n) method", name)), 0)
  end
  self.strategy = obj
  -- n_partial: how many partial configurations the strategy took (0 without a prior()).
  self.n_partial = 0
  if #partial > 0 and type(obj.prior) == "function" then
    self:call("prior", partial)
    self.n_partial = #partial
  end
  return self
end

-- host.new(EXP, SEED, HISTORY, BUDGET): host.open, Host:add(HISTORY), Host:start(SEED).
function host.new(exp, seed, history, budget)
  local self = host.open(exp, budget)
  self:add(history)
  return self:start(seed)
end

-- Calls the strategy's METHOD under a handler that names the strategy in unlocated errors.
function Host:call(method, ...)
  local name = self.name
  local handler = locate_with(function(e) return format("strategy '%s': %s", name, e) end,
    self.path)
  local ok, res = xpcall(self.strategy[method], handler, self.strategy, ...)
  if not ok then error(res, 0) end
  return res
end

-- Raises "strategy 'NAME'" .. FMT (FMT starts with " proposed ..." or ": ...").
function Host:fail(fmt, ...)
  error(format("strategy '%s'", self.name) .. format(fmt, ...), 0)
end

-- A rendered proposal P completed: skip and profile (lua/pgle.lua), and `unset`, the
-- variables the trial must not inherit from the caller (lua/envpairs.lua: a sweep that sets
-- one memory fraction drops the other, the same for every proposal, baseline included).
function Host:finish(p)
  p.unset = envpairs.unset(self.exp.vars, self.exp.env)
  return pgle.decorate(self.exp, p)
end

-- One proposal checked and normalized: { json, label, steps, settings, skip, profile, unset }
-- (Host:finish).
function Host:accept(p, i)
  if type(p) ~= "table" then
    self:fail(" proposed an invalid configuration: proposal %d is a %s, not a table", i, type(p))
  end
  local config, steps, repeat_ok, rung = p, nil, false, nil
  if type(p.config) == "table" then
    config, steps, repeat_ok, rung = p.config, p.steps, p.repeat_ok == true, p.rung
  end
  local ok, msg = self.space:validate(config)
  if not ok then self:fail(" proposed an invalid configuration: %s", msg) end
  if steps ~= nil and (math.type(steps) ~= "integer" or steps <= 0) then
    self:fail(" proposed an invalid configuration: steps must be a positive integer, got %s",
      tostring(steps))
  end
  local rung_steps, rung_value = self:check_rung(rung, steps)
  local key = self.space:key(config)
  if next(config) == nil and not repeat_ok then
    self:fail(" proposed the baseline {}, which flagtune always runs itself (repeat_ok = true " ..
      "measures it again)")
  end
  local id = ft.digest(key)
  if self.seen[id] and not repeat_ok then self:fail(" proposed configuration %s twice", key) end
  self.seen[id] = true
  -- Its canonical values (what decoding KEY gives), in a table of its own for Host:tell.
  local by_name, canon = self.space.by_name, {}
  for k, v in pairs(config) do canon[k] = by_name[k]:canonical(v) end
  self.pending[key] = canon
  return self:finish({ json = key, label = self.space:label(config), steps = steps or 0,
                       rung_steps = rung_steps, rung_value = rung_value,
                       settings = self.space:render(config) })
end

-- A proposal's in-trial rung, { steps = K, value = V }: the trial stops (pruned) when its
-- value after K step times is above V ms. Returns K and V (0 and nil without one).
function Host:check_rung(rung, steps)
  if rung == nil then return 0, nil end
  local budget = steps or self.budget.steps
  local k, v = type(rung) == "table" and rung.steps, type(rung) == "table" and rung.value
  if math.type(k) ~= "integer" or k <= 0 or (math.type(budget) == "integer" and budget > 0
                                               and k >= budget) then
    self:fail(" proposed an invalid configuration: rung.steps must be a positive integer " ..
      "below the trial's steps (%s), got %s", tostring(budget), tostring(k))
  end
  local skip = self.exp.metric and self.exp.metric.skip or 0
  if k <= skip then
    self:fail(" proposed an invalid configuration: rung.steps (%d) leaves no step time past " ..
      "metric.skip (%d)", k, skip)
  end
  if type(v) ~= "number" or not (v > 0 and v < math.huge) then
    self:fail(" proposed an invalid configuration: rung.value must be a positive number " ..
      "of ms, got %s", tostring(v))
  end
  return k, v
end

-- Up to N checked proposals (fewer, or none, when the strategy has nothing to offer now).
function Host:ask(n)
  n = math.tointeger(n) or 0
  if n <= 0 then return {} end
  local list = self:call("ask", n)
  if type(list) ~= "table" then
    self:fail(": ask() must return a list of configurations, got %s",
      list == nil and "nil" or type(list))
  end
  if #list > n then self:fail(": ask(%d) returned %d configurations", n, #list) end
  local out = {}
  for i = 1, #list do out[i] = self:accept(list[i], i) end
  return out
end

-- What only a running sweep calls (tell, done, estimate, recipe) is lua/host_feedback.lua's: each is a
-- stub here until the first call installs them all (`check` makes a host, asks it once and
-- tells it nothing: docs/COST.md, Start-up).
for _, name in ipairs({ "tell", "done", "estimate", "recipe" }) do
  Host[name] = function(self, ...)
    require("host_feedback").install(Host, { finite = finite })
    return Host[name](self, ...)
  end
end

-- A stored configuration rendered for a re-run (or "{}" for the baseline): the proposal,
-- or nil and why it no longer fits the space. It is not marked seen: the strategy did not
-- propose it and may still do so; pass lost trials in the history to keep it from that.
function Host:render(json)
  local config, msg = self.space:decode_json(json)
  if not config then
    return nil, format("configuration %s no longer fits the experiment's space: %s",
      tostring(json), msg)
  end
  return self:finish({ json = self.space:key(config), label = self.space:label(config),
                       steps = 0, settings = self.space:render(config) })
end

-- A subset of a stored configuration (the winner with parameters reverted), rendered for
-- `flagtune minimize` (lua/minimize.lua): like render, without requiring every parameter.
function Host:render_subset(json)
  return require("minimize").render(self, json)
end

return host
