-- The experiment table's validation: every key the file returned checked against its type,
-- range and the others it depends on, with "path:line: message" errors (lines found in the
-- file's text; util.locate_key) and "did you mean" hints, and the result shaped as
-- src/luahost/experiment.c reads it. The constructors that build what is validated (bool, choice,
-- strategies, experiment) and the sandbox the file runs in are lua/dsl.lua's; it hands its
-- objects over with M.bind before the first validation. Must not run anything the file names.

local util = require "util"
-- A ParamSet is made by lua/presets.lua alone: until it is loaded, nothing is one.
local function is_paramset(v)
  local presets = package.loaded.presets
  return presets ~= nil and presets.is_paramset(v)
end
local catindex = require "catindex"

-- The library functions called most, as locals: each global a function reads is a string
-- constant of that function, interned again at every start (docs/COST.md, Start-up).
local type, ipairs, pairs, getmetatable = type, ipairs, pairs, getmetatable

local to_int, is_finite, is_list, relative_to =
  util.to_int, util.is_finite, util.is_list, util.relative_to

local M = {}

-- The DSL's objects (set by M.bind): what its constructors made, and lua/checks.lua bound to
-- them.
local dsl, PARAM, AUTO, EXECUTOR, KNOWN_STRATEGIES, is_strategy, checks

function M.bind(parts)
  dsl, PARAM, AUTO, EXECUTOR = parts.dsl, parts.PARAM, parts.AUTO, parts.EXECUTOR
  KNOWN_STRATEGIES, is_strategy = parts.KNOWN_STRATEGIES, parts.is_strategy
  checks = parts.checks
  return M
end

---------------------------------------------------------------------------------------
-- Validation. V carries the path, the text and the `experiment` call's line, and
-- locates keys in the text for messages.

local V = {}
V.__index = V

-- IMPORTED: the flag names of the database's imported jaxlib lists ({ name = true }), real
-- for that jaxlib (lua/checks.lua's known_flag); nil for none.
local function validator(path, text, line, imported)
  return setmetatable({ path = path, text = text, line = line, lines = {}, warnings = {},
                        imported = imported or {} }, V)
end

-- Records "path:line: warning: message"; dsl.load returns them in `warnings`.
function V:warn(line, fmt, ...)
  self.warnings[#self.warnings + 1] =
    string.format("%s:%d: warning: %s", self.path, line, string.format(fmt, ...))
end

-- The line of KEY ("timeout", or "metric.skip" looked up after the metric line).
function V:line_of(key)
  if self.lines[key] then return self.lines[key] end
  local parent, sub = key:match("^(.-)%.([^.]+)$")
  local from = parent and self:line_of(parent) or self.line
  local l = util.locate_key(self.text, sub or key, from)
  self.lines[key] = l
  return l
end

function V:fail(line, fmt, ...) util.fail(self.path, line, fmt, ...) end
function V:fail_at(key, fmt, ...) self:fail(self:line_of(key), fmt, ...) end

-- Refuses keys of T not in ALLOWED (a set); the one written first is reported.
function V:check_keys(t, allowed, prefix)
  local bad = {}
  for k in pairs(t) do
    if type(k) ~= "string" then
      self:fail_at(prefix or "experiment", "%s holds a value without a name: write key = value",
                   prefix and ("'" .. prefix .. "'") or "experiment { ... }")
    end
    if not allowed[k] then bad[#bad + 1] = k end
  end
  if #bad == 0 then return end
  local full = function(k) return prefix and (prefix .. "." .. k) or k end
  table.sort(bad, function(a, b)
    local la, lb = self:line_of(full(a)), self:line_of(full(b))
    return la < lb or (la == lb and a < b)
  end)
  local k = bad[1]
  local where = prefix and (" in " .. prefix) or ""
  local hint = util.did_you_mean(k, util.sorted_keys(allowed))
  if hint then
    self:fail_at(full(k), "unknown key '%s'%s (did you mean '%s'?)", k, where, hint)
  end
  self:fail_at(full(k), "unknown key '%s'%s", k, where)
end

function V:string(key, v, default, allow_empty)
  if v == nil then return default end
  if type(v) ~= "string" then
    self:fail_at(key, "'%s' must be a string, got %s", key, util.typename(v))
  end
  if v == "" and not allow_empty then self:fail_at(key, "'%s' must not be empty", key) end
  return v
end

function V:int(key, v, default, min)
  if v == nil then return default end
  local i = to_int(v)
  if not i then self:fail_at(key, "'%s' must be an integer, got %s", key, util.describe(v)) end
  if min and i < min then self:fail_at(key, "'%s' must be at least %d, got %d", key, min, i) end
  return i
end

function V:number(key, v, default, min)
  if v == nil then return default end
  if not is_finite(v) then
    self:fail_at(key, "'%s' must be a number, got %s", key, util.describe(v))
  end
  if min and v < min then self:fail_at(key, "'%s' must be at least %s, got %s", key, min, v) end
  return v
end

-- A duration: "20m", "1h30m", or a number of seconds; must be positive.
function V:duration(key, v, default)
  if v == nil then return default end
  local secs = v
  if type(v) == "string" then
    local why
    secs, why = ft.parse_duration(v)
    if not secs then
      self:fail_at(key, "'%s': cannot read %s as a duration: %s", key, util.describe(v), why)
    end
  elseif not is_finite(v) then
    self:fail_at(key, "'%s' must be a duration like \"20m\" or a number of seconds, got %s", key,
                 util.typename(v))
  end
  if secs <= 0 then self:fail_at(key, "'%s' must be positive, got %s", key, util.describe(v)) end
  return secs
end

function V:string_list(key, v)
  if v == nil then return {} end
  if type(v) ~= "table" or getmetatable(v) or not is_list(v) then
    self:fail_at(key, "'%s' must be a list of strings like { \"text\" }, got %s", key,
                 util.typename(v))
  end
  local out = {}
  for i, s in ipairs(v) do
    if type(s) ~= "string" or s == "" then
      self:fail_at(key, "'%s' item %d must be a non-empty string, got %s", key, i, util.describe(s))
    end
    out[i] = s
  end
  return out
end

function V:table(key, v)
  if v == nil then return {} end
  if is_paramset(v) then
    local plain = {}
    for k, x in pairs(v) do plain[k] = x end
    return plain
  end
  if type(v) ~= "table" or getmetatable(v) then
    self:fail_at(key, "'%s' must be a table of name = value, got %s", key, util.typename(v))
  end
  return v
end

---------------------------------------------------------------------------------------
-- command

local function check_command(v, cmd, key)
  key = key or "command"
  if cmd == nil then
    v:fail(v.line, '%s is required: %s = { "python3", "train.py" }', key, key)
  end
  if type(cmd) == "string" then
    v:fail_at(key, '%s must be an argv array like { "python3", "train.py" }, not a shell string',
              key)
  end
  if type(cmd) ~= "table" or getmetatable(cmd) or not is_list(cmd) then
    v:fail_at(key, '%s must be an argv array like { "python3", "train.py" }, got %s', key,
              util.typename(cmd))
  end
  if #cmd == 0 then v:fail_at(key, "%s must not be empty", key) end
  local argv = {}
  for i, a in ipairs(cmd) do
    if type(a) == "number" and is_finite(a) then a = tostring(to_int(a) or a) end
    if type(a) ~= "string" then
      v:fail_at(key, "%s[%d] must be a string, got %s", key, i, util.typename(a))
    end
    argv[i] = a
  end
  if argv[1] == "" then v:fail_at(key, "%s[1], the program, must not be empty", key) end
  return argv
end

local function uses_steps(argv)
  for _, a in ipairs(argv) do
    if a:find("{steps}", 1, true) then return true end
  end
  return false
end

---------------------------------------------------------------------------------------
-- flags, vars, fixed_flags, env: lua/checks.lua (names, values, presets, the catalog), bound
-- to the DSL's objects by M.bind
---------------------------------------------------------------------------------------
-- metric

local METRIC_KEYS = { json = true, pattern = true, skip = true, reduce = true, unit = true,
                      scale = true, min_steps = true, skip_pgle = true, check = true,
                      better = true }
local UNITS = { s = 1000, ms = 1, us = 0.001 }
local REDUCERS = { median = true, mean = true, min = true }

-- A metric pattern at KEY ("metric.pattern"): a valid Lua pattern with exactly one capture,
-- WHAT (the step time).
local function check_pattern(v, pat, key, what, example)
  key, what = key or "metric.pattern", what or "the step time"
  example = example or '"step %d+: ([%d.]+) ms"'
  if type(pat) ~= "string" or pat == "" then
    v:fail_at(key, "'%s' must be a Lua pattern string, got %s", key, util.describe(pat))
  end
  local values, positions = util.pattern_captures(pat)
  if not values then
    v:fail_at(key, "%s is not a valid Lua pattern: %s", key, positions)
  end
  local ok, err = pcall(string.find, "", pat)
  if not ok then
    v:fail_at(key, "%s is not a valid Lua pattern: %s", key,
              (tostring(err):gsub("^bad argument.-%((.*)%)$", "%1")))
  end
  if values ~= 1 or positions ~= 0 then
    v:fail_at(key, "%s must have exactly one capture, %s, like %s (it has %d)", key, what,
              example, values + positions)
  end
  return pat
end

-- The optional sections (metric.check, pgle, a Slurm executor) are checked by
-- lua/validate_sections.lua, loaded only by a file that sets one of them (docs/COST.md,
-- Start-up), with the checks it shares with this module.
local sections_mod

local function optional()
  if not sections_mod then
    sections_mod = require("validate_sections").bind({
      EXECUTOR = EXECUTOR, check_command = check_command, uses_steps = uses_steps,
      check_pattern = check_pattern,
    })
  end
  return sections_mod
end

-- metric.check (the correctness guard): lua/validate_sections.lua.
local function check_correctness(v, c)
  if c == nil or c == false then return nil end
  return optional().correctness(v, c)
end

local function check_metric(v, m)
  if m == nil then
    v:fail(v.line, 'metric is required: metric = { json = "step_time_ms" } or '
           .. '{ pattern = "step %%d+: ([%%d.]+) ms" }')
  end
  if type(m) ~= "table" or getmetatable(m) then
    v:fail_at("metric", "'metric' must be a table like { json = \"step_time_ms\" }, got %s",
              util.typename(m))
  end
  v:check_keys(m, METRIC_KEYS, "metric")
  if (m.json == nil) == (m.pattern == nil) then
    v:fail_at("metric", m.json and "metric takes `json` or `pattern`, not both"
              or 'metric needs json = "field" or pattern = "... (capture) ..."')
  end
  local out = { kind = m.json and "json" or "pattern" }
  out.field = v:string("metric.json", m.json)
  out.pattern = m.pattern and check_pattern(v, m.pattern)
  out.skip = v:int("metric.skip", m.skip, 0, 0)
  out.reduce = v:string("metric.reduce", m.reduce, "median")
  if not REDUCERS[out.reduce] then
    v:fail_at("metric.reduce", "'metric.reduce' must be \"median\", \"mean\" or \"min\", got %s",
              util.describe(out.reduce))
  end
  out.better = v:metric_better(m)
  out.scale = v:metric_scale(m)
  out.min_steps = v:int("metric.min_steps", m.min_steps, out.skip + 1, 1)
  if m.skip_pgle ~= nil and type(m.skip_pgle) ~= "boolean" then
    v:fail_at("metric.skip_pgle", "'metric.skip_pgle' must be true or false, got %s",
              util.describe(m.skip_pgle))
  end
  out.skip_pgle = m.skip_pgle ~= false
  out.check = check_correctness(v, m.check)
  return out
end

-- A rate read by the metric's json key or pattern: "it/s", "tokens/s", "samples/sec",
-- "throughput". Lower is better unless the file says otherwise, so such a metric without
-- `better` would rank the slowest configuration first.
local RATE_WORDS = { "it/s", "its/s", "tokens/s", "tok/s", "samples/s", "samples/sec",
                     "throughput", "per_sec", "per_second", "_per_s", "/sec", "tokens_per",
                     "samples_per", "steps_per", "images/s", "img/s" }

local function looks_like_rate(s)
  s = s:lower():gsub("%%", "")
  for _, w in ipairs(RATE_WORDS) do
    if s:find(w, 1, true) then return w end
  end
  return nil
end

-- metric.better: "lower" (a step time, the default) or "higher" (a rate: it/s, tokens/s).
-- A rate is stored as its cost, ms per unit (1000 / rate), so everything that ranks reads a
-- lower-better value (docs/EXPERIMENTS.md, "Higher is better").
function V:metric_better(m)
  local b = m.better
  if b ~= nil and b ~= "lower" and b ~= "higher" then
    self:fail_at("metric.better", "'metric.better' must be \"lower\" (a step time) or "
                 .. "\"higher\" (a rate such as it/s), got %s", util.describe(b))
  end
  if b == nil then
    local w = looks_like_rate(m.json or m.pattern or "")
    if w then
      self:warn(self:line_of(m.json and "metric.json" or "metric.pattern"), "the metric %s reads %s, a rate, but lower is better "
                .. "unless metric.better = \"higher\" is set: the slowest configuration "
                .. "would rank first", m.json and ("json key '" .. m.json .. "'") or "pattern",
                util.describe(w))
    end
  end
  if b == "higher" and m.unit ~= nil then
    self:fail_at("metric.unit", "'metric.unit' is a time unit; with better = \"higher\" the "
                 .. "metric is a rate per second (use scale = 1/60 for a rate per minute)")
  end
  return b or "lower"
end

function V:metric_scale(m)
  if m.unit ~= nil and m.scale ~= nil then
    self:fail_at("metric.scale", "metric takes `unit` or `scale`, not both")
  end
  if m.unit ~= nil then
    if not UNITS[m.unit] then
      self:fail_at("metric.unit", "'metric.unit' must be \"s\", \"ms\" or \"us\", got %s",
                   util.describe(m.unit))
    end
    return UNITS[m.unit]
  end
  local s = self:number("metric.scale", m.scale, 1)
  if s <= 0 then self:fail_at("metric.scale", "'metric.scale' must be positive, got %s", s) end
  return s
end

---------------------------------------------------------------------------------------
-- budget, strategy

local BUDGET_KEYS = { trials = true, hours = true, steps = true }

local function check_budget(v, b)
  if b ~= nil and (type(b) ~= "table" or getmetatable(b)) then
    v:fail_at("budget", "'budget' must be a table like { trials = 50, hours = 8 }, got %s",
              util.typename(b))
  end
  b = b or {}
  v:check_keys(b, BUDGET_KEYS, "budget")
  local out = {}
  out.trials = v:int("budget.trials", b.trials, 20)
  if out.trials < 2 then
    v:fail_at("budget.trials", "budget.trials must be at least 2: the baseline takes one")
  end
  if type(b.hours) == "string" then
    if b.hours:find("^%s*[%d.]+%s*$") then -- "8": eight hours or eight seconds? Say which.
      v:fail_at("budget.hours", "'budget.hours' = %s has no unit: write hours = %s (hours) or a "
                .. "duration such as \"%sh\" or \"90m\"", util.describe(b.hours),
                b.hours:match("[%d.]+"), b.hours:match("[%d.]+"))
    end
    out.hours = v:duration("budget.hours", b.hours) / 3600
  else
    out.hours = v:number("budget.hours", b.hours, 0, 0)
  end
  out.steps = v:int("budget.steps", b.steps, 0, 0)
  return out
end

local function has_strategy(name)
  return ft.has_module == nil or ft.has_module("search." .. name)
end

local function check_strategy_name(v, line, name)
  if not name:find("^[%w_]+$") or not has_strategy(name) then
    local hint = util.did_you_mean(name, KNOWN_STRATEGIES)
    local tail = hint and (" (did you mean '" .. hint .. "'?)") or ""
    v:fail(line, "unknown strategy '%s'%s", name, tail)
  end
end

-- A strategy's own options may hold strategies (halving's base): check those exist too.
local function check_nested(v, line, options)
  for k, o in pairs(options) do
    if k == "base" and type(o) == "string" then check_strategy_name(v, line, o) end
    if is_strategy(o) then
      if not o.path then check_strategy_name(v, o.line, o.name) end
      check_nested(v, o.line, o.options)
    end
  end
end

local function check_strategy(v, s)
  local line = v:line_of("strategy")
  if s == nil then
    return { __strategy = true, name = "random", options = {}, line = v.line, desc = "random{}" }
  end
  if type(s) == "string" then
    check_strategy_name(v, line, s)
    return { __strategy = true, name = s, options = {}, line = line, desc = s .. "{}" }
  end
  if not is_strategy(s) then
    v:fail(line, "'strategy' must be grid{}, random{}, tpe{}, halving{}, strategy_file(...) "
           .. "or a name, got %s", util.typename(s))
  end
  if not s.path then check_strategy_name(v, s.line, s.name) end
  check_nested(v, s.line, s.options)
  return { __strategy = true, name = s.name, options = s.options, path = s.path, line = s.line,
           desc = s.desc }
end

---------------------------------------------------------------------------------------
-- The whole experiment

local TOP_KEYS = {}
for _, k in ipairs({ "name", "model", "hardware", "description", "command", "workdir", "env",
                     "fixed_flags", "flags", "vars", "metric", "budget", "parallel",
                     "gpus_per_trial", "timeout", "grace", "seed", "strategy", "oom_patterns",
                     "invalid_patterns", "presets", "allow_unknown_flags", "confirm", "prune",
                     "warm_start", "software_probe", "pgle", "executor", "on_done" }) do
  TOP_KEYS[k] = true
end

local function default_name(path)
  return (path:match("([^/]*)$"):gsub("%.lua$", ""))
end

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

-- Builds the space through lua/space.lua. It locates its own errors from the path and
-- lines given; one that still carries no location gets the `experiment` line.
local function build_space(v, x)
  local space = require "space"
  local lines = {}
  for _, k in ipairs({ "flags", "vars", "fixed_flags", "env" }) do lines[k] = v:line_of(k) end
  local ok, res = pcall(space.new, x.flags, x.vars, x.fixed_flags, x.env, v.path, lines)
  if ok then return res end
  local msg = tostring(res)
  if msg:sub(1, #v.path + 1) == v.path .. ":" then error(msg, 0) end
  msg = msg:gsub("^lua/space%.lua:%d+: ", "")
  v:fail(v.line, "%s", msg)
end

-- Linux refuses one environment string longer than MAX_ARG_STRLEN (32 pages: 131,072 bytes
-- with its "NAME=" and NUL; include/uapi/linux/binfmts.h), so a trial whose XLA_FLAGS grew
-- past it fails to start ("argument list too long"). Measured against the longest value each
-- searched flag can take, plus the XLA_FLAGS (or LIBTPU_INIT_ARGS) trials inherit from here.
local MAX_ARG_STRLEN = 131072

local function check_lengths(v, space)
  local max = space:max_lengths()
  local function over(name, len, key)
    local inherited = os.getenv(name) or ""
    local total = #name + 1 + len + (#inherited > 0 and #inherited + 1 or 0) + 1
    if total > MAX_ARG_STRLEN then
      v:fail_at(key, "%s could reach %d bytes (%d of them inherited from your environment): "
                .. "Linux refuses an environment string over %d bytes (MAX_ARG_STRLEN), so such "
                .. "a trial could not start; search fewer or shorter values", name, total,
                #inherited, MAX_ARG_STRLEN)
    end
  end
  over("XLA_FLAGS", max.xla, "flags")
  over("LIBTPU_INIT_ARGS", max.tpu, "flags")
  for name, len in pairs(max.env) do
    if len + #name + 2 > MAX_ARG_STRLEN then
      v:fail_at("vars", "%s could reach %d bytes: Linux refuses an environment string over %d "
                .. "bytes (MAX_ARG_STRLEN)", name, len + #name + 2, MAX_ARG_STRLEN)
    end
  end
end

local function check_scalars(v, raw, x)
  x.name = v:string("name", raw.name, default_name(v.path))
  x.model = v:string("model", raw.model, x.name)
  x.hardware = v:string("hardware", raw.hardware, "auto")
  x.description = v:string("description", raw.description, nil, true)
  x.workdir = raw.workdir and relative_to(v.path, v:string("workdir", raw.workdir))
  x.parallel = v:int("parallel", raw.parallel, 1, 1)
  x.gpus_per_trial = v:int("gpus_per_trial", raw.gpus_per_trial, 0, 0)
  x.timeout = v:duration("timeout", raw.timeout, 0)
  x.grace = v:duration("grace", raw.grace, 10)
  x.seed = v:int("seed", raw.seed, nil)
  x.oom_patterns = v:string_list("oom_patterns", raw.oom_patterns)
  x.invalid_patterns = v:string_list("invalid_patterns", raw.invalid_patterns)
end

-- A value holding a line break is not one flag or variable: XLA splits XLA_FLAGS (and reads a
-- flagfile) at whitespace, so such a flag value would become two items, and `export --format
-- env` cannot write it. Refused at its line, before any trial runs.
local function check_line_breaks(v, x)
  for _, key in ipairs({ "flags", "fixed_flags", "vars", "env" }) do
    for name, val in pairs(x[key]) do
      local values = getmetatable(val) == PARAM and val.values or { val }
      for _, s in ipairs(values) do
        if type(s) == "string" and s:find("[\r\n]") then
          local line = getmetatable(val) == PARAM and val.line
            or util.locate_key(v.text, name, v:line_of(key))
          v:fail(line, "'%s': the value %s holds a line break; a flag or variable value must be "
                 .. "one line", name, util.describe(s))
        end
      end
    end
  end
end

local function check_space(v, raw, x)
  x.flags, x.fixed_flags, x.vars, x.env = checks.space(v, raw, x.gpus_per_trial)
  check_line_breaks(v, x)
  if count(x.flags) + count(x.vars) == 0 then
    local line = raw.flags and v:line_of("flags") or raw.vars and v:line_of("vars") or v.line
    v:fail(line, "nothing to search: add `flags` or `vars`")
  end
end

local function check_steps(v, x)
  if uses_steps(x.command) and x.budget.steps == 0 then
    v:fail_at("command", "command uses {steps} but budget.steps is not set")
  end
  if uses_steps(x.command) and x.metric.min_steps > x.budget.steps then
    v:fail_at("metric", "no trial could end ok: the metric needs %d step times (skip %d + 1) "
              .. "but budget.steps is %d", x.metric.min_steps, x.metric.skip, x.budget.steps)
  end
  if x.strategy.name == "halving" and not x.strategy.path and not uses_steps(x.command) then
    v:fail(x.strategy.line,
           "halving needs {steps} in the command: it runs trials with growing step budgets")
  end
end

-- confirm = { top = 3, repeats = 1 }, prune = { margin = 0.25, min_steps = 3 } or false,
-- warm_start = bool, software_probe = "shell command" or false. The C side reads the same
-- defaults (src/luahost/experiment.c) when a key is absent.
local CONFIRM_KEYS = { top = true, repeats = true }
local PRUNE_KEYS = { margin = true, min_steps = true }

local function options_table(v, key, t, keys, example)
  if t == false then return false end
  if t ~= nil and (type(t) ~= "table" or getmetatable(t)) then
    v:fail_at(key, "'%s' must be a table like %s, or false, got %s", key, example,
              util.typename(t))
  end
  t = t or {}
  v:check_keys(t, keys, key)
  return t
end

local function check_search_options(v, raw, x)
  local c = options_table(v, "confirm", raw.confirm, CONFIRM_KEYS, "{ top = 3, repeats = 1 }")
  x.confirm = { top = c and v:int("confirm.top", c.top, 3, 0) or 0,
                repeats = c and v:int("confirm.repeats", c.repeats, 1, 1) or 0 }
  if x.confirm.top > 16 then
    v:fail_at("confirm", "confirm.top must be at most 16, got %d", x.confirm.top)
  end
  local p = options_table(v, "prune", raw.prune, PRUNE_KEYS, "{ margin = 0.25, min_steps = 3 }")
  x.prune = { margin = p and v:number("prune.margin", p.margin, 0.25, 0) or 0,
              min_steps = p and v:int("prune.min_steps", p.min_steps, 3, 1) or 0 }
  if raw.warm_start ~= nil and type(raw.warm_start) ~= "boolean" then
    v:fail_at("warm_start", "'warm_start' must be true or false, got %s",
              util.describe(raw.warm_start))
  end
  x.warm_start = raw.warm_start == true
  if raw.software_probe == false then
    x.software_probe = false
  else
    x.software_probe = v:string("software_probe", raw.software_probe, nil)
  end
end

-- pgle = { ... } (manual PGLE) and executor = "slurm" | slurm { ... }:
-- lua/validate_sections.lua.
local function check_pgle(v, raw, x)
  if raw.pgle == nil or raw.pgle == false then return nil end
  return optional().pgle(v, raw, x)
end

local function check_executor(v, raw, x)
  if raw.executor == nil or raw.executor == "local" then return { kind = "local" } end
  return optional().executor(v, raw, x)
end

local function validate(v, raw)
  v:check_keys(raw, TOP_KEYS)
  local x = {}
  check_scalars(v, raw, x)
  x.command = check_command(v, raw.command)
  -- on_done = { "cmd", ... }: run when the sweep ends (any end), its summary in the environment
  if raw.on_done ~= nil then x.on_done = check_command(v, raw.on_done, "on_done") end
  check_space(v, raw, x)
  x.metric = check_metric(v, raw.metric)
  x.budget = check_budget(v, raw.budget)
  x.strategy = check_strategy(v, raw.strategy)
  check_search_options(v, raw, x)
  check_steps(v, x)
  x.pgle = check_pgle(v, raw, x)
  if x.pgle then -- a profile XLA could not use: the trial did not measure what it asked
    for _, text in ipairs(require("pgle").FAILURE_TEXTS) do
      x.invalid_patterns[#x.invalid_patterns + 1] = text
    end
  end
  x.executor = check_executor(v, raw, x)
  x.metric.pgle_extra_skip = require("pgle").extra_skip(x)
  x.space = build_space(v, x)
  check_lengths(v, x.space)
  x.warnings = v.warnings
  x.lines = {}
  for k in pairs(raw) do x.lines[k] = v:line_of(k) end
  x.lines.experiment = v.line
  return x
end

M.validator, M.run = validator, validate
return M
