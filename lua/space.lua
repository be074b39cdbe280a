-- The search space: the searched flags and variables as finite, ordered value lists, and
-- the one canonical form of a configuration (its JSON key, its rendered settings, its
-- label). Owns name validation, value <-> index <-> unit-cube encodings and
-- canonical JSON. Must not know strategies, the database or how a process is started:
-- render() hands over final strings and src/trial/trialcfg.c assembles XLA_FLAGS.
--
-- A configuration is a plain table { name = value } over every searched parameter; the
-- baseline is {} (nothing searched set, only the fixed settings).

local catindex = require "catindex"

-- The library functions called most, as locals: each global a function reads is a string
-- constant of that function, interned again at every start (docs/COST.md, Start-up).
local type, ipairs, pairs, tostring, error = type, ipairs, pairs, tostring, error
local format = string.format

local space = {}

local Space = {}
Space.__index = Space
Space.__name = "flagtune.space"

local FLOAT_TOL = 1e-9 -- contract: range() ends at hi + 1e-9 (relative to the step)

-- ---- values as text ----

-- Numbers as the contract prints them: integers without ".0", floats with %.10g (so 0.95
-- never reads 0.9500000001 and an integral float prints like an integer).
local function format_number(v)
  if math.type(v) == "integer" then return format("%d", v) end
  return format("%.10g", v)
end

local function format_value(v)
  local t = type(v)
  if t == "boolean" then return v and "true" or "false" end
  if t == "number" then return format_number(v) end
  return tostring(v)
end

-- A value as an error message shows it.
local function show(v)
  if type(v) == "string" then return format("%q", v) end
  if type(v) == "number" or type(v) == "boolean" then return format_value(v) end
  return type(v)
end

local JSON_ESCAPES = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n" }

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return JSON_ESCAPES[c] or format("\\u%04x", c:byte())
  end) .. '"'
end

local function json_value(v)
  local t = type(v)
  if t == "string" then return json_string(v) end
  if t == "number" and (v ~= v or v == math.huge or v == -math.huge) then
    error("space: " .. tostring(v) .. " has no JSON form", 0)
  end
  if t == "number" or t == "boolean" then return format_value(v) end
  error("space: a " .. t .. " has no place in a configuration", 0)
end

-- Rounds to 10 significant digits, kept a float: range values never drift.
local function round10(x)
  return tonumber(format("%.10g", x)) + 0.0
end

local function integer_of(v)
  if type(v) ~= "number" then return nil end
  return math.tointeger(v)
end

-- ---- parameters: one table per kind of value list ----

local Param = {}
Param.__index = Param
Param.__name = "flagtune.space.param"

local kinds = {}

-- Unit-cube encodings shared by the ordered kinds (int, float, pow2): linear over the
-- index, so pow2 is log2-linear in bytes. A single value sits in the middle.
local function ordered_encode(p, v)
  local i = p:index(v)
  if not i then return nil end
  if p.n == 1 then return 0.5 end
  return (i - 1) / (p.n - 1)
end

local function ordered_decode(p, u)
  u = math.min(math.max(u, 0), 1)
  return p:value(math.floor(u * (p.n - 1) + 0.5) + 1)
end

kinds.bool = {
  setup = function(p) p.values, p.n = { false, true }, 2 end,
  index = function(_, v)
    if v == false then return 1 elseif v == true then return 2 end
  end,
  value = function(_, i) return i == 2 end,
  encode = function(_, v) if v == true then return 1 elseif v == false then return 0 end end,
  decode = function(_, u) return u >= 0.5 end,
  describe = function() return "bool()" end,
}

local function same_choice(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then return math.abs(a - b) <= FLOAT_TOL * math.max(1, math.abs(a)) end
  return a == b
end

kinds.choice = {
  setup = function(p, d, fail)
    if type(d.values) ~= "table" or #d.values == 0 then
      fail("choice{} needs at least one value")
    end
    p.values = {}
    for i, v in ipairs(d.values) do
      local t = type(v)
      if t ~= "string" and t ~= "number" and t ~= "boolean" then
        fail("choice{} values must be strings, numbers or booleans, got " .. t)
      end
      if t == "number" and (v ~= v or v == math.huge or v == -math.huge) then
        fail("choice{} value " .. tostring(v) .. " is not a finite number")
      end
      for j = 1, i - 1 do
        if same_choice(p.values[j], v) then fail("choice{} lists " .. show(v) .. " twice") end
      end
      p.values[i] = v
    end
    p.n = #p.values
  end,
  index = function(p, v)
    for i, w in ipairs(p.values) do
      if same_choice(w, v) then return i end
    end
  end,
  value = function(p, i) return p.values[i] end,
  encode = function(p, v)
    local i = p:index(v)
    return i and (i - 0.5) / p.n
  end,
  decode = function(p, u)
    u = math.min(math.max(u, 0), 1)
    return p.values[math.min(p.n, math.floor(u * p.n) + 1)]
  end,
  describe = function(p)
    local shown = {}
    for i, v in ipairs(p.values) do shown[i] = show(v) end
    return "choice{" .. table.concat(shown, ", ") .. "}"
  end,
}

kinds.int = {
  setup = function(p, d, fail)
    local lo, hi, step = integer_of(d.lo), integer_of(d.hi), integer_of(d.step or 1)
    if not lo or not hi or not step then fail("int(lo, hi, step) takes integers") end
    if step <= 0 then fail("int(): step must be positive, got " .. step) end
    if hi < lo then fail(format("int(%d, %d): lo is above hi", lo, hi)) end
    p.lo, p.hi, p.step = lo, hi, step
    p.n = (hi - lo) // step + 1
  end,
  index = function(p, v)
    local iv = integer_of(v)
    if not iv or iv < p.lo or iv > p.hi or (iv - p.lo) % p.step ~= 0 then return nil end
    return (iv - p.lo) // p.step + 1
  end,
  value = function(p, i) return p.lo + (i - 1) * p.step end,
  encode = ordered_encode,
  decode = ordered_decode,
  describe = function(p)
    return format("int(%d, %d, %d)", p.lo, p.hi, p.step)
  end,
}

kinds.float = {
  setup = function(p, d, fail)
    local lo, hi, step = d.lo, d.hi, d.step
    if type(lo) ~= "number" or type(hi) ~= "number" or type(step) ~= "number" then
      fail("range(lo, hi, step) takes numbers")
    end
    if not (step > 0) or step == math.huge then fail("range(): step must be positive") end
    if not (hi >= lo) or hi - lo == math.huge then
      fail(format("range(%s, %s): lo is above hi", show(lo), show(hi)))
    end
    p.lo, p.hi, p.step = lo + 0.0, hi + 0.0, step + 0.0
    p.n = math.floor((hi - lo) / step + FLOAT_TOL) + 1
    if p.n > 1e7 then fail("range(): more than 10 million values; use a larger step") end
    if p.n <= 4096 then -- the usual short range: values computed once
      p.values = {}
      for i = 1, p.n do p.values[i] = round10(p.lo + (i - 1) * p.step) end
    end
  end,
  index = function(p, v)
    if type(v) ~= "number" or v ~= v then return nil end
    local i = math.floor((v - p.lo) / p.step + 0.5) + 1
    if i < 1 or i > p.n then return nil end
    local tol = math.max(FLOAT_TOL * math.abs(v), FLOAT_TOL * p.step)
    if math.abs(p:value(i) - v) > tol then return nil end
    return i
  end,
  value = function(p, i) return p.values and p.values[i] or round10(p.lo + (i - 1) * p.step) end,
  encode = ordered_encode,
  decode = ordered_decode,
  describe = function(p)
    return format("range(%s, %s, %s)", format_number(p.lo), format_number(p.hi),
      format_number(p.step))
  end,
}

local MAX_POW2 = 62

kinds.pow2 = {
  setup = function(p, d, fail)
    local lo, hi = d.lo, d.hi
    if type(lo) ~= "number" or type(hi) ~= "number" then fail("pow2(lo, hi) takes byte sizes") end
    local e0, e1 = 0, -1
    while e0 <= MAX_POW2 and (1 << e0) < lo do e0 = e0 + 1 end
    while e1 < MAX_POW2 and (1 << (e1 + 1)) <= hi do e1 = e1 + 1 end
    if e1 < e0 then
      fail(format("pow2(%s, %s) holds no power of two", show(lo), show(hi)))
    end
    p.e0, p.n = e0, e1 - e0 + 1
    p.lo, p.hi = 1 << e0, 1 << e1
  end,
  index = function(p, v)
    local iv = integer_of(v)
    if not iv or iv < p.lo or iv > p.hi or iv & (iv - 1) ~= 0 then return nil end
    local e = 0
    while (1 << e) < iv do e = e + 1 end
    return e - p.e0 + 1
  end,
  value = function(p, i) return 1 << (p.e0 + i - 1) end,
  encode = ordered_encode,
  decode = ordered_decode,
  describe = function(p)
    return format("pow2(%s, %s)", space.bytes(p.lo), space.bytes(p.hi))
  end,
}

function Param:index(v) return self.ops.index(self, v) end
function Param:value(i) return self.ops.value(self, i) end
function Param:decode(u) return self.ops.decode(self, u) end
function Param:describe() return self.ops.describe(self) end

-- [0, 1] for a value in the space, nil for one that is not.
function Param:encode(v) return self.ops.encode(self, v) end

-- The canonical form of V (e.g. 0.95 for 0.9500000001, 2 for 2.0), or nil.
function Param:canonical(v)
  local i = self:index(v)
  return i and self:value(i)
end

-- ---- construction ----

local FLAG_NAME = "^xla_[a-z0-9_]+$"
local ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"

-- Variables flagtune assembles itself from flags: setting them directly would be lost.
local RESERVED_ENV = { XLA_FLAGS = "flags", LIBTPU_INIT_ARGS = "flags" }

-- Where a flag goes: "tpu" (LIBTPU_INIT_ARGS) for the catalog's backend = "tpu" flags and,
-- for names the catalog lacks, the xla_tpu_ / xla_jf_ prefixes; "xla" (XLA_FLAGS) otherwise.
local function flag_target(name)
  local ok, index = pcall(catindex.get)
  if ok and index.tpu[name] then return "tpu" end
  if name:find("^xla_tpu_") or name:find("^xla_jf_") then return "tpu" end
  return "xla"
end
space.flag_target = flag_target

-- Raises "path:line: message" (or "path: message" without a line) at level 0.
local function locator(path, line)
  return function(msg)
    if path and line then error(format("%s:%d: %s", path, line, msg), 0) end
    if path then error(path .. ": " .. msg, 0) end
    error(msg, 0)
  end
end

local function sorted_names(t)
  local names = {}
  for k in pairs(t or {}) do names[#names + 1] = k end
  table.sort(names, function(a, b) return tostring(a) < tostring(b) end)
  return names
end

local function check_name(name, pattern, what, fail)
  if type(name) ~= "string" or not name:find(pattern) then
    if what == "flag" then
      fail(format("%s is not an XLA flag name (lower case, starting with xla_)", show(name)))
    end
    fail(format("%s is not an environment variable name", show(name)))
  end
  if what ~= "flag" and RESERVED_ENV[name] then
    fail(format("%s is assembled by flagtune; put XLA flags in %s or fixed_flags", name,
      RESERVED_ENV[name]))
  end
end

local function new_param(name, target, d, fail)
  if type(d) ~= "table" or not kinds[d.kind] then
    fail(format("%s: expected bool(), choice{...}, int(), range() or pow2(), got %s",
      name, type(d) == "table" and "a table" or type(d)))
  end
  local p = setmetatable({ name = name, target = target, kind = d.kind, line = d.line }, Param)
  p.ops = kinds[d.kind]
  p.ops.setup(p, d, function(msg) fail(name .. ": " .. msg) end)
  return p
end

local function add_params(sp, set, fixed, what, path, lines)
  local section = what == "flag" and "flags" or "vars"
  local fixed_section = what == "flag" and "fixed_flags" or "env"
  for _, name in ipairs(sorted_names(set)) do
    local d = set[name]
    local fail = locator(path, type(d) == "table" and d.line or lines[section])
    check_name(name, what == "flag" and FLAG_NAME or ENV_NAME, what, fail)
    if fixed and fixed[name] ~= nil then
      fail(format("%s is both fixed (%s) and searched (%s)", name, fixed_section, section))
    end
    local p = new_param(name, what == "flag" and flag_target(name) or "env", d, fail)
    sp.params[#sp.params + 1] = p
    sp.by_name[name] = p
  end
end

local function fixed_settings(set, what, path, line)
  local out = {}
  local fail = locator(path, line)
  for _, name in ipairs(sorted_names(set)) do
    local v = set[name]
    check_name(name, what == "flag" and FLAG_NAME or ENV_NAME, what, fail)
    local t = type(v)
    if t ~= "string" and t ~= "number" and t ~= "boolean" then
      fail(format("%s: a fixed value must be a string, number or boolean, got %s", name, t))
    end
    out[#out + 1] = { target = what == "flag" and flag_target(name) or "env", name = name,
                      value = format_value(v) }
  end
  return out
end

-- FLAGS { xla_name = PARAM }, VARS { ENV = PARAM }, FIXED_FLAGS { xla_name = value },
-- ENV { NAME = value }; PATH names the experiment file in errors; LINES (optional,
-- { fixed_flags = n, env = n, flags = n, vars = n }) locates errors that have no param line.
function space.new(flags, vars, fixed_flags, env, path, lines)
  lines = lines or {}
  local sp = setmetatable({ params = {}, by_name = {}, path = path }, Space)
  sp.fixed = fixed_settings(fixed_flags, "flag", path, lines.fixed_flags)
  sp.fixed_env = fixed_settings(env, "env", path, lines.env)
  add_params(sp, flags, fixed_flags, "flag", path, lines)
  add_params(sp, vars, env, "env", path, lines)
  sp.json_order = {}
  for i, p in ipairs(sp.params) do
    p.json_key = json_string(p.name) .. ":"
    sp.json_order[i] = p
  end
  table.sort(sp.json_order, function(a, b) return a.name < b.name end)
  return sp
end

-- The version of the canonical form a configuration's key takes (Space:key: json_value's
-- text of each value, each kind's canonical values). Raise it with any change to json_value,
-- format_number or a kind's canonical form (index, value, round10): Space:digest then
-- differs, so that a resume replays a sweep stored under the old form by decoding each
-- configuration instead of taking its stored text as the key (docs/COST.md, resume).
space.CANON_VERSION = 1

-- A number as the space's digest reads it: every digit, so that bounds which differ
-- anywhere make different digests.
local function digest_number(v)
  if math.type(v) == "integer" then return format("%d", v) end
  return format("%.17g", v)
end

-- One parameter's part of the digest: its JSON key, its kind and its canonical values
-- (bool, choice) or bounds (int, range, pow2).
local function param_identity(p)
  local parts = { p.json_key, p.kind }
  if p.kind == "choice" then
    for _, v in ipairs(p.values) do
      parts[#parts + 1] = type(v) .. ":" .. (type(v) == "number" and digest_number(v)
        or json_value(v))
    end
  elseif p.kind ~= "bool" then
    for _, k in ipairs({ "lo", "hi", "step" }) do
      if p[k] ~= nil then parts[#parts + 1] = digest_number(p[k]) end
    end
  end
  return table.concat(parts, "\31")
end

-- The identity of the keys this space makes (sweeps.space_digest): ft.digest over
-- CANON_VERSION and each parameter's JSON key, kind and canonical values or bounds, in key
-- order. Two spaces with one digest make the same key of every configuration.
function Space:digest()
  local parts = { "flagtune-space/" .. space.CANON_VERSION }
  for _, p in ipairs(self.json_order) do parts[#parts + 1] = param_identity(p) end
  local id = ft.digest(table.concat(parts, "\30"))
  return (id:gsub(".", function(c) return format("%02x", c:byte()) end))
end

-- Byte counts for labels and messages: ft.format_bytes when the C host is there.
function space.bytes(n)
  if type(ft) == "table" and ft.format_bytes then return ft.format_bytes(n) end
  return format_number(n)
end

space.format_value = format_value

-- ---- the space's API ----

-- The number of configurations (a float: may exceed 2^63; 1 when nothing is searched).
function Space:size()
  local n = 1.0
  for _, p in ipairs(self.params) do n = n * p.n end
  return n
end

-- A uniformly random configuration.
function Space:sample(r)
  local config = {}
  for _, p in ipairs(self.params) do config[p.name] = p:value(r:int(1, p.n)) end
  return config
end

-- The K-th configuration (1-based) in mixed radix over params order, the last param
-- varying fastest (nested loops in the order `flagtune show` lists the params).
function Space:at(k)
  local size = self:size()
  local ik = math.tointeger(k)
  if not ik or ik < 1 or ik > size or size > 2 ^ 53 then
    error(format("space:at(%s): outside 1..%s", tostring(k), format_number(size)), 2)
  end
  local rest, config = ik - 1, {}
  for j = #self.params, 1, -1 do
    local p = self.params[j]
    config[p.name] = p:value(rest % p.n + 1)
    rest = rest // p.n
  end
  return config
end

-- true, or nil and a message: every searched param set to a value of its list, nothing
-- else; {} (the baseline) is valid.
function Space:validate(config)
  if type(config) ~= "table" then
    return nil, "a configuration is a table, got " .. type(config)
  end
  for k in pairs(config) do
    if not self.by_name[k] then return nil, "unknown parameter " .. show(k) end
  end
  if next(config) == nil then return true end
  for _, p in ipairs(self.params) do
    local v = config[p.name]
    if v == nil then return nil, "missing parameter " .. p.name end
    if not p:index(v) then
      return nil, format("%s = %s is not a value of %s", p.name, show(v), p:describe())
    end
  end
  return true
end

-- Canonical JSON: keys sorted, values in their canonical form. Strategies key seen sets
-- by it, so the common case (only searched names) walks the presorted params instead of
-- sorting the config's keys on every call.
function Space:encode_json(config)
  local parts, n = {}, 0
  for _, p in ipairs(self.json_order) do
    local v = config[p.name]
    if v ~= nil then
      n = n + 1
      parts[n] = p.json_key .. json_value(p:canonical(v) or v)
    end
  end
  local keys = 0
  for _ in pairs(config) do keys = keys + 1 end
  if keys ~= n then -- names outside the space: the general (slower) path
    parts = {}
    for _, k in ipairs(sorted_names(config)) do
      local p, v = self.by_name[k], config[k]
      if p then v = p:canonical(v) or v end
      parts[#parts + 1] = json_string(tostring(k)) .. ":" .. json_value(v)
    end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- The identity of a configuration (for seen sets): its canonical JSON.
Space.key = Space.encode_json

-- A decoded JSON object (ft.json_decode's result) as a configuration: values coerced to
-- their kind's canonical form (1 -> 1.0 for a range, 0.95000000001 -> 0.95). Returns the
-- config, or nil and why it does not fit this space.
function Space:decode(tbl)
  if type(tbl) ~= "table" then return nil, "a configuration is a JSON object" end
  local config = {}
  for k, v in pairs(tbl) do
    local p = self.by_name[k]
    if not p then return nil, "unknown parameter " .. show(k) end
    local c = p:canonical(v)
    if c == nil then
      return nil, format("%s = %s is not a value of %s", p.name, show(v), p:describe())
    end
    config[k] = c
  end
  local ok, msg = self:validate(config)
  if not ok then return nil, msg end
  return config
end

-- Space:decode and Space:key at once, for the stored configurations a history replays (a
-- resume of 60,000 trials decodes each once): the configuration and its key, or nil when TBL
-- does not fit (Space:decode says why). The values are canonicalized once, not again by key.
function Space:decode_key(tbl)
  if type(tbl) ~= "table" then return nil end
  if next(tbl) == nil then return {}, "{}" end
  local config, parts, n = {}, {}, 0
  for _, p in ipairs(self.json_order) do
    local v = tbl[p.name]
    local i = v ~= nil and p:index(v)
    if not i then return nil end
    local c = p:value(i)
    n = n + 1
    config[p.name], parts[n] = c, p.json_key .. json_value(c)
  end
  for _ in pairs(tbl) do n = n - 1 end
  if n ~= 0 then return nil end -- a name the space does not have
  return config, "{" .. table.concat(parts, ",") .. "}"
end

-- The part of a decoded JSON object this space shares: the parameters it also has, with
-- values it allows (canonical). Nil when nothing is shared. For the history of an earlier
-- sweep whose space differs (warm start): a partial configuration, never proposed.
function Space:project(tbl)
  if type(tbl) ~= "table" then return nil end
  local config, n = {}, 0
  for k, v in pairs(tbl) do
    local p = self.by_name[k]
    local c = p and p:canonical(v)
    if c ~= nil then config[k], n = c, n + 1 end
  end
  if n == 0 then return nil end
  return config
end

-- Canonical JSON text -> configuration, or nil and a message.
function Space:decode_json(text)
  local tbl, err = ft.json_decode(text)
  if tbl == nil then return nil, "invalid JSON (" .. tostring(err) .. "): " .. tostring(text) end
  return self:decode(tbl)
end

-- Whether flag NAME set to VALUE stays out of XLA_FLAGS: an empty value of a catalog flag
-- marked `empty = "unset"` (XLA's setter refuses '', and the flag's default is what '' means).
local function left_out(name, value)
  if value ~= "" then return false end
  local ok, index = pcall(catindex.get)
  local e = ok and index.by_name[name]
  return e ~= nil and e ~= false and e.empty == "unset"
end
space.left_out = left_out

-- The catalog's `recommended` (the public guides') and `default` values of NAME, or nil for a
-- name the catalog lacks or a field it does not carry (tpe{ guide = 1 }'s start).
function space.guide(name)
  local ok, index = pcall(catindex.get)
  local e = ok and index.by_name[name]
  if not e then return nil, nil end
  return e.recommended, e.default
end

-- Everything a trial sets, as final strings: fixed flags (by name), searched flags (params
-- order), fixed env (by name), searched vars (params order). A flag whose empty value XLA
-- refuses (left_out) is not set at all.
function Space:render(config)
  local out = {}
  local function add(s)
    if s.target ~= "env" and left_out(s.name, s.value) then return end
    out[#out + 1] = { target = s.target, name = s.name, value = s.value }
  end
  local function add_searched(flag_part)
    for _, p in ipairs(self.params) do
      local v = config[p.name]
      if v ~= nil and (p.target ~= "env") == flag_part then
        add({ target = p.target, name = p.name, value = format_value(p:canonical(v) or v) })
      end
    end
  end
  for _, s in ipairs(self.fixed) do add(s) end
  add_searched(true)
  for _, s in ipairs(self.fixed_env) do add(s) end
  add_searched(false)
  return out
end

-- The longest rendered text each setting can reach: { xla = bytes, tpu = bytes, env = { NAME =
-- bytes } }, for the flag strings as src/trial/trialcfg.c joins them ("--name=value", a value with
-- whitespace or quotes double-quoted, one space between) and each variable's value. A
-- parameter with more than MAX_SCAN values is bounded by its first and last value's length
-- plus a margin (long ranges are numbers, all short).
local MAX_SCAN = 4096

local function longest_value(p)
  local n, best = p.n, 0
  local function try(i)
    local v = p:value(i)
    local len = #format_value(p:canonical(v) or v)
    if len > best then best = len end
  end
  if n <= MAX_SCAN then
    for i = 1, n do try(i) end
  else
    try(1)
    try(n)
    best = best + 8
  end
  return best
end

function Space:max_lengths()
  local out = { xla = 0, tpu = 0, env = {} }
  local function flag(target, name, len)
    local key = target == "tpu" and "tpu" or "xla"
    out[key] = out[key] + (out[key] > 0 and 1 or 0) + #name + 3 + len + 2 -- "--", "=", quotes
  end
  for _, s in ipairs(self.fixed) do flag(s.target, s.name, #s.value) end
  for _, s in ipairs(self.fixed_env) do out.env[s.name] = #s.value end
  for _, p in ipairs(self.params) do
    if p.target == "env" then
      out.env[p.name] = math.max(out.env[p.name] or 0, longest_value(p))
    else
      flag(p.target, p.name, longest_value(p))
    end
  end
  return out
end

-- A short human form: "enable_latency_hiding_scheduler=true all_gather_..=512MiB
-- NCCL_PROTO=SIMPLE" (xla_gpu_ dropped, byte sizes in units); "baseline" for {}.
function Space:label(config)
  local parts = {}
  for _, p in ipairs(self.params) do
    local v = config[p.name]
    if v ~= nil then
      v = p:canonical(v) or v
      local text = p.kind == "pow2" and math.type(v) == "integer" and space.bytes(v)
        or format_value(v)
      parts[#parts + 1] = p.name:gsub("^xla_gpu_", "") .. "=" .. text
    end
  end
  if #parts == 0 then return "baseline" end
  return table.concat(parts, " ")
end

return space
