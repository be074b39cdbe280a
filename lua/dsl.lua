-- The experiment file: the constructors a user writes (bool, choice, int, range, pow2,
-- experiment; grid, random, tpe, halving, strategy_file, slurm in lua/dsl_strategy.lua), the
-- sandboxed environment the file runs in, and dsl.load, which runs the file and has
-- lua/validate.lua check everything it returns, with "path:line: message" errors (the flag
-- and variable tables, checked against the catalog, are lua/checks.lua's).
-- Returns the validated table whose shape docs/EXPERIMENTS.md and the C side
-- (src/luahost/experiment.c) rely on. Must not run a trial, touch the database or load strategy
-- code: a strategy is only checked to exist. The space object itself belongs to lua/space.lua.

local util = require "util"
local catindex = require "catindex"

-- The library functions called most, as locals: each global a function reads is a string
-- constant of that function, interned again at every start (docs/COST.md, Start-up).
local type, ipairs, tostring, select, error = type, ipairs, tostring, select, error

local dsl = {}

-- Metatables mark what the constructors made, so validation can tell a descriptor from a
-- table the user typed. __name is what util.typename reports.
local PARAM = { __name = "flagtune.param" }
local STRATEGY = { __name = "flagtune.strategy" }
local EXPERIMENT = { __name = "flagtune.experiment" }
local EXECUTOR = { __name = "flagtune.executor" }
dsl.PARAM, dsl.STRATEGY = PARAM, STRATEGY
-- `flags = { name = auto }`: search the catalog's candidates for NAME.
local AUTO = setmetatable({}, { __name = "flagtune.auto",
                                __tostring = function() return "auto" end })
dsl.auto = AUTO

-- The strategies shipped in search/, offered as "did you mean" candidates.
local KNOWN_STRATEGIES = { "grid", "halving", "random", "tpe" }

---------------------------------------------------------------------------------------
-- Small helpers

local function is_param(v) return getmetatable(v) == PARAM end
local function is_strategy(v) return getmetatable(v) == STRATEGY end
dsl.is_param, dsl.is_strategy = is_param, is_strategy

-- Where the experiment file called the constructor that calls here(): level 3 is the
-- constructor's caller, so each constructor must call here() itself, first. A C caller
-- (pcall) has no line: the first Lua frame above it is used.
local function here()
  local level, info = 3, debug.getinfo(3, "Sl")
  while info and info.currentline < 1 and debug.getinfo(level + 1, "Sl") do
    level = level + 1
    info = debug.getinfo(level, "Sl")
  end
  local src = info and info.source or "?"
  return { path = src:sub(1, 1) == "@" and src:sub(2) or (info and info.short_src or "?"),
           line = info and math.max(info.currentline, 1) or 1 }
end

local function cfail(at, fmt, ...) util.fail(at.path, at.line, fmt, ...) end

local to_int, is_finite, is_list =
  util.to_int, util.is_finite, util.is_list

---------------------------------------------------------------------------------------
-- Space constructors: each returns a PARAM descriptor {kind=, line=, n=, ...}.

local function param(at, t)
  t.line = at.line
  if t.values then t.n = #t.values end
  return setmetatable(t, PARAM)
end

function dsl.bool(...)
  local at = here()
  if select("#", ...) > 0 then cfail(at, "bool() takes no arguments") end
  return param(at, { kind = "bool", values = { false, true } })
end

local function check_choice_value(at, i, v, seen)
  local t = type(v)
  if t ~= "string" and t ~= "number" and t ~= "boolean" then
    cfail(at, "choice value %d must be a string, number or boolean, got %s", i, util.typename(v))
  end
  if v ~= v then cfail(at, "choice value %d is NaN", i) end
  if seen[v] then cfail(at, "choice value %d repeats %s", i, util.describe(v)) end
  seen[v] = true
end

function dsl.choice(values, ...)
  local at = here()
  if type(values) ~= "table" or getmetatable(values) or select("#", ...) > 0 then
    cfail(at, 'choice takes a list of values: choice { "a", "b" }')
  end
  if not is_list(values) then cfail(at, "choice takes a list of values, not key = value pairs") end
  if #values == 0 then cfail(at, "choice {} needs at least one value") end
  local copy, seen = {}, {}
  for i, v in ipairs(values) do
    check_choice_value(at, i, v, seen)
    copy[i] = v
  end
  return param(at, { kind = "choice", values = copy })
end

local function int_arg(at, what, v, usage)
  local i = to_int(v)
  if not i then cfail(at, "%s: %s must be an integer, got %s", usage, what, util.describe(v)) end
  return i
end

function dsl.int(lo, hi, step)
  local at = here()
  local usage = "int(lo, hi[, step])"
  lo, hi = int_arg(at, "lo", lo, usage), int_arg(at, "hi", hi, usage)
  step = step == nil and 1 or int_arg(at, "step", step, usage)
  if step < 1 then cfail(at, "%s: step must be at least 1, got %d", usage, step) end
  if lo > hi then cfail(at, "%s: lo (%d) is greater than hi (%d)", usage, lo, hi) end
  return param(at, { kind = "int", lo = lo, hi = hi, step = step, n = (hi - lo) // step + 1 })
end

-- Decimal places needed to write X exactly as typed ("0.05" -> 2), nil for exponents.
local function decimals(x)
  local s = string.format("%.15g", x)
  if s:find("[eE]") then return nil end
  local frac = s:match("%.(%d+)$")
  return frac and #frac or 0
end

-- The grid lo, lo+step, ... <= hi, each rounded to the decimals the user wrote so that
-- 0.7 + 5 * 0.05 is 0.95 exactly, not 0.9500000000000001.
local function float_values(lo, hi, step)
  local n = math.floor((hi - lo) / step + 1e-9) + 1
  local dl, ds = decimals(lo), decimals(step)
  local d = dl and ds and math.max(dl, ds)
  local values = {}
  for i = 0, n - 1 do
    local v = lo + i * step
    if d then v = tonumber(string.format("%." .. d .. "f", v)) end
    values[#values + 1] = v + 0.0
  end
  return values
end

local MAX_RANGE_VALUES = 100000

function dsl.range(lo, hi, step, ...)
  local at = here()
  local usage = "range(lo, hi, step)"
  local args = { lo, hi, step }
  for i, what in ipairs({ "lo", "hi", "step" }) do -- not ipairs(args): it stops at a nil
    if not is_finite(args[i]) then
      cfail(at, "%s: %s must be a number, got %s%s", usage, what, util.describe(args[i]),
            i == 3 and args[i] == nil and string.format(" (e.g. range(%s, %s, %s))", tostring(lo),
                                                        tostring(hi), "0.05") or "")
    end
  end
  if select("#", ...) > 0 then cfail(at, "%s takes three numbers", usage) end
  if step <= 0 then cfail(at, "%s: step must be positive, got %s", usage, tostring(step)) end
  if lo > hi then
    cfail(at, "%s: lo (%s) is greater than hi (%s)", usage, tostring(lo), tostring(hi))
  end
  if (hi - lo) / step >= MAX_RANGE_VALUES then
    cfail(at, "%s: more than %d values; use a larger step", usage, MAX_RANGE_VALUES)
  end
  return param(at, { kind = "float", lo = lo + 0.0, hi = hi + 0.0, step = step + 0.0,
                     values = float_values(lo, hi, step) })
end

local function size_arg(at, what, v)
  local usage = "pow2(lo, hi)"
  if type(v) == "string" then
    local n, why = ft.parse_bytes(v)
    if not n then
      cfail(at, "%s: cannot read %s as a byte size: %s", usage, util.describe(v), why)
    end
    -- "8GB" is 8e9 bytes (decimal units, as units.c reads them), not 2^33: the bound would
    -- silently drop the 8GiB candidate. XLA's thresholds are bytes; say so at once.
    local num, unit = v:match("^%s*([%d.]+)%s*([kKmMgGtTpPeE][bB])%s*$")
    if unit and n & (n - 1) ~= 0 then
      cfail(at, '%s: %s is %d bytes (%s is a power of ten), not a power of two; did you mean "%s%siB"?',
            usage, util.describe(v), n, unit, num, unit:sub(1, 1):upper())
    end
    v = n
  elseif not to_int(v) then
    cfail(at, '%s: %s must be a size like "1MiB" or a number of bytes, got %s', usage, what,
          util.describe(v))
  end
  v = to_int(v)
  if v < 1 then cfail(at, "%s: %s must be at least 1 byte, got %d", usage, what, v) end
  return v
end

function dsl.pow2(lo, hi, ...)
  local at = here()
  if select("#", ...) > 0 then cfail(at, "pow2(lo, hi) takes two sizes") end
  lo, hi = size_arg(at, "lo", lo), size_arg(at, "hi", hi)
  if lo > hi then cfail(at, "pow2(lo, hi): lo (%d) is greater than hi (%d)", lo, hi) end
  local values, p = {}, 1
  while p < lo do p = p * 2 end
  while p > 0 and p <= hi do
    values[#values + 1] = p
    p = p < (1 << 62) and p * 2 or -1 -- stop before the integer overflows
  end
  if #values == 0 then cfail(at, "pow2(lo, hi): no power of two between %d and %d", lo, hi) end
  return param(at, { kind = "pow2", lo = lo, hi = hi, values = values })
end

---------------------------------------------------------------------------------------
-- Strategy and executor constructors (grid{}, random{}, tpe{}, halving{}, strategy_file(),
-- slurm{}): lua/dsl_strategy.lua, loaded when a file first calls one, so that a file naming
-- neither (random{} and the local executor by default) does not load it (docs/COST.md,
-- Start-up). Each is called in a tail call, which leaves no frame of its own: here() still
-- finds the file's line at level 3.

local strategies -- lua/dsl_strategy.lua, bound to this module's objects, once loaded

local function constructors()
  if not strategies then
    strategies = require("dsl_strategy").bind({
      here = here, cfail = cfail, is_strategy = is_strategy, STRATEGY = STRATEGY,
      EXECUTOR = EXECUTOR,
    })
  end
  return strategies
end

for _, name in ipairs({ "grid", "random", "tpe", "halving", "strategy_file", "slurm" }) do
  dsl[name] = function(...) return constructors()[name](...) end
end

---------------------------------------------------------------------------------------
-- The environment the experiment file runs in.

-- `return experiment { ... }` is a tail call, which leaves neither the file's path nor its
-- line on the stack; so dsl.load checks the argument and finds the call in the text
-- (line = nil here).
function dsl.experiment(spec, ...)
  local tail = debug.getinfo(1, "t").istailcall
  local at = here()
  local ok = type(spec) == "table" and not getmetatable(spec) and select("#", ...) == 0
  return setmetatable({ spec = ok and spec or nil, line = not tail and at.line or nil }, EXPERIMENT)
end

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- A fresh table per load: the file may assign globals without touching the host, and
-- copies of the libraries keep it from patching string or math for everyone else.
-- `xla`, whose one key, presets, loads lua/presets.lua when first read (or iterated): an
-- experiment without presets (most) does not pay for loading it (docs/COST.md "Start-up").
local XLA = {
  __index = function(t, k)
    if k ~= "presets" then return nil end
    local api = require("presets").bind(PARAM)
    rawset(t, "presets", api)
    return api
  end,
}
XLA.__pairs = function(t)
  local _ = t.presets
  return next, t, nil
end
local function lazy_xla() return setmetatable({}, XLA) end

local function make_env()
  local env = {
    string = copy(string), table = copy(table), math = copy(math), os = { getenv = os.getenv },
    tostring = tostring, tonumber = tonumber, ipairs = ipairs, pairs = pairs, type = type,
    error = error, print = print, select = select, assert = assert, pcall = pcall, next = next,
  }
  for _, k in ipairs({ "experiment", "bool", "choice", "int", "range", "pow2", "grid", "random",
                       "tpe", "halving", "strategy_file", "auto", "slurm" }) do
    env[k] = dsl[k]
  end
  env.xla = lazy_xla()
  return env
end

---------------------------------------------------------------------------------------
-- flags, vars, fixed_flags, env: lua/checks.lua (names, values, presets, the catalog)

local checks = require("checks").bind(PARAM, AUTO)
-- { by_name = { name = entry }, flags = sorted flag names, ... }: lua/catindex.lua's index.
dsl.catalog = catindex.get
dsl.misfit, dsl.status_warning = checks.misfit, checks.status_warning

local validation = require("validate").bind({
  dsl = dsl, PARAM = PARAM, AUTO = AUTO, EXECUTOR = EXECUTOR, KNOWN_STRATEGIES = KNOWN_STRATEGIES,
  is_strategy = is_strategy, checks = checks,
})
local validator, validate = validation.validator, validation.run

-- A message handler for the file's chunk: an error raised while the file itself runs but
-- located elsewhere (the instruction budget's hook reports its caller's line) or nowhere
-- (`error("boom", 2)` at the top level names the chunk's C caller, which has no line) gets
-- the line of the innermost frame of the file itself.
local function at_file_line(path)
  local source = "@" .. path
  return function(msg)
    if type(msg) ~= "string" or msg:sub(1, #path + 1) == path .. ":" then return msg end
    for level = 2, 200 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source == source and info.currentline > 0 then
        return util.where(path, info.currentline, (msg:gsub("^[^\n]-:%d+: ", "", 1)))
      end
    end
    return msg
  end
end

-- Runs experiment file TEXT (named PATH) in a fresh environment and returns the
-- validated table. Every error is raised as "path:line: message".
-- The line where TEXT's brackets first nest DEPTH deep (strings and comments are not read
-- apart: good enough to point at the table that is too deep), or the last line.
local function deep_line(text, depth)
  local level, line = 0, 1
  for c in text:gmatch("[{}%(%)%[%]\n]") do
    if c == "\n" then
      line = line + 1
    elseif c == "{" or c == "(" or c == "[" then
      level = level + 1
      if level >= depth then return line end
    else
      level = level - 1
    end
  end
  return line
end

-- dsl.load(PATH, TEXT, IMPORTED): the validated experiment of the file TEXT read from PATH;
-- IMPORTED ({ name = true } or nil) names the flags of the imported jaxlib lists
-- (`flagtune flags import`), accepted as real.
function dsl.load(path, text, imported)
  local chunk, err = load(text, "@" .. path, "t", make_env())
  if not chunk and not tostring(err):find("^" .. util.escape_pattern(path) .. ":%d+:") then
    -- Lua's parser says "C stack overflow" without a place when the file nests too deep.
    util.fail(path, deep_line(text, 150), "%s: the file nests tables or calls too deep "
              .. "(Lua allows about 200 levels)", err)
  end
  if not chunk then
    -- "\d" in a pattern: a regular expression's escape, which Lua's parser refuses bare.
    local esc = tostring(err):find("invalid escape sequence", 1, true)
      and tostring(err):match("\\([dswDSW.])'?$")
    if esc then
      err = string.format("%s (Lua patterns are not regular expressions: write %%%s, not \\%s, "
                          .. "e.g. \"step %%d+: ([%%d.]+) ms\")", err, esc, esc)
    end
    error(err, 0)
  end
  local ok, result = xpcall(chunk, at_file_line(path))
  if not ok then error(result, 0) end
  if getmetatable(result) ~= EXPERIMENT then
    util.fail(path, util.last_line(text), "the file must end with `return experiment { ... }`")
  end
  local line = result.line or util.find_call(text, "experiment")
  if not result.spec then
    util.fail(path, line, "experiment takes one table: return experiment { ... }")
  end
  return validate(validator(path, text, line, imported), result.spec)
end

-- A function(line) -> number|nil reading the step time with PATTERN's one capture.
function dsl.matcher(pattern)
  local match = string.match
  return function(line)
    local c = match(line, pattern)
    return c and tonumber(c)
  end
end

return dsl
