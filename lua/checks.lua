-- The flag and variable checks of an experiment file (lua/dsl.lua validates the rest of its
-- shape): names in the right table (flags and fixed_flags, vars and env), searched values
-- made with a constructor, fixed ones scalars, presets merged under what the file writes,
-- and the flag catalog (lua/catalog.lua through lua/catindex.lua): unknown flags with "did
-- you mean", allow_unknown_flags and a jaxlib's imported flag list, `auto` resolved to the
-- catalog's candidates, warnings for deprecated, renamed or removed names and for values
-- outside a flag's type, and (checks.release_warnings, called from C once the installed jax
-- is probed) names absent from the installed jax release. Errors are "path:line: message"
-- through dsl's validator (the V passed in as `v`); only unknown flags and shape mistakes are
-- errors, the rest warnings.
-- Must not build the space (lua/space.lua does, and routes TPU flags) or read the file.

local util = require "util"
local catindex = require "catindex"
local envpairs = require "envpairs"

-- The library functions called most, as locals: each global a function reads is a string
-- constant of that function, interned again at every start (docs/COST.md, Start-up).
local type, ipairs, pairs, tostring = type, ipairs, pairs, tostring
local format = string.format

local checks = {}

-- dsl.PARAM and dsl.auto, set by checks.bind: the descriptors dsl's constructors make.
local PARAM, AUTO

local function is_param(x) return getmetatable(x) == PARAM end

-- The line each name of a checked table was written on: SITES[t] = { NAME = line } for the
-- flags, fixed_flags, vars and env tables check_space returns (they become the spec's), so
-- the release check, which runs after the file is loaded, can point at the right line.
-- Weak keys: an entry lives as long as its spec.
local SITES = setmetatable({}, { __mode = "k" })

local to_int, is_finite, is_list = util.to_int, util.is_finite, util.is_list

---------------------------------------------------------------------------------------
-- Names and shapes

local ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"
local FLAG_NAME = "^xla_[a-z0-9_]+$"
-- Variables flagtune sets itself for each trial.
local RESERVED = { XLA_FLAGS = "fixed_flags", LIBTPU_INIT_ARGS = "fixed_flags" }

local function looks_like_flag(name) return name:find("^%-*xla_") ~= nil end
local function looks_like_env(name) return name:find("^[A-Z][A-Z0-9_]*$") ~= nil end

local function line_in(v, table_key, name)
  return util.locate_key(v.text, name, v:line_of(table_key))
end

-- Name checks shared by flags and fixed_flags; ENV_HOME is where an env name belongs.
local function flag_name(v, key, name, env_home)
  if type(name) ~= "string" then
    v:fail_at(key, "'%s' must map flag names to values, got a %s key", key, type(name))
  end
  local line = line_in(v, key, name)
  if looks_like_env(name) then
    v:fail(line, "'%s' is an environment variable: move it to `%s`", name, env_home)
  end
  if name:find("^%-") then
    v:fail(line, "write the flag without its dashes: '%s'", (name:gsub("^%-+", "")))
  end
  if not name:find(FLAG_NAME) then
    v:fail(line, "'%s' is not an XLA flag name (they look like xla_gpu_enable_...)", name)
  end
  return line
end

local function env_name(v, key, name, flag_home)
  if type(name) ~= "string" then
    v:fail_at(key, "'%s' must map variable names to values, got a %s key", key, type(name))
  end
  local line = line_in(v, key, name)
  if looks_like_flag(name) then
    v:fail(line, "'%s' is an XLA flag: move it to `%s`", name, flag_home)
  end
  if not name:find(ENV_NAME) then
    v:fail(line, "'%s' is not a valid environment variable name", name)
  end
  if RESERVED[name] then
    v:fail(line, "'%s' is built by flagtune: put XLA flags in `%s` or `flags`", name,
           RESERVED[name])
  end
  return line
end

local SEARCH_HINT = "bool(), choice { ... }, int(lo, hi), range(lo, hi, step) or pow2(lo, hi)"

local function param(v, key, name, p, line, fixed_home)
  if is_param(p) then return p end
  local t = type(p)
  if t == "string" or t == "number" or t == "boolean" then
    v:fail(line, "'%s' has a single value: move it to `%s`, or search it with %s", name,
           fixed_home, SEARCH_HINT)
  end
  if t == "table" and not getmetatable(p) and is_list(p) and #p > 0 then
    v:fail(line, "'%s': write choice { ... } to search a list of values", name)
  end
  v:fail(line, "'%s' must be searched with %s, got %s", name, SEARCH_HINT, util.typename(p))
end

local function fixed_value(v, name, val, line, search_home)
  if is_param(val) then
    v:fail(line, "'%s' is searched, not fixed: move it to `%s`", name, search_home)
  end
  local t = type(val)
  if t ~= "string" and t ~= "number" and t ~= "boolean" then
    v:fail(line, "'%s' must be a boolean, number or string, got %s", name, util.typename(val))
  end
  if t == "number" and not is_finite(val) then
    v:fail(line, "'%s' must be a finite number", name)
  end
  return val
end

---------------------------------------------------------------------------------------
-- The catalog (lua/catalog.lua): unknown flags, deprecated or renamed names, values outside a
-- flag's type, `auto`. Errors only for unknown flags; the rest are warnings.

local function in_values(s, values)
  s = tostring(s):lower()
  for _, x in ipairs(values) do
    if tostring(x):lower() == s then return true end
  end
  return false
end

local function is_integral(v)
  if type(v) == "number" then return to_int(v) ~= nil end
  return type(v) == "string" and v:find("^%-?%d+$") ~= nil
end

-- A list value: every comma-separated item (an optional +/- edits XLA's default list) known.
local function list_fits(v, values)
  if type(v) ~= "string" then return false end
  for item in v:gmatch("[^,]+") do
    item = item:gsub("^%s*[+-]?", ""):gsub("%s+$", "")
    if item ~= "" and not in_values(item, values) then return false end
  end
  return true
end

local BOOL_WORDS = { ["true"] = true, ["false"] = true, ["1"] = true, ["0"] = true }

-- What a value of entry E's type looks like when V is not one, else nil. XLA's bool parser
-- takes true, false, 1 and 0 (tsl/util/command_line_flags.cc).
function checks.misfit(e, v)
  local t = e.type
  if t == "bool" then
    if type(v) == "boolean" or BOOL_WORDS[tostring(v)] then return nil end
    return "a bool (true or false)"
  elseif t == "int" or t == "bytes" then
    if is_integral(v) then return nil end
    return t == "bytes" and "a whole number of bytes" or "an integer"
  elseif t == "float" then
    if type(v) ~= "boolean" and tonumber(v) then return nil end
    return "a number"
  elseif t == "enum" and e.values then
    if type(v) ~= "boolean" and in_values(v, e.values) then return nil end
    return "one of " .. table.concat(e.values, ", ")
  elseif t == "list" and e.values then
    if list_fits(v, e.values) then return nil end
    return "a comma-separated list of " .. table.concat(e.values, ", ")
  end
  return nil
end

-- The warning for a deprecated, renamed or removed entry, or nil.
function checks.status_warning(e)
  local owner = e.kind == "env" and "JAX" or "XLA"
  if e.deprecated then
    local s = format("'%s' is deprecated: %s", e.name, e.deprecated)
    if e.renamed_to and not e.deprecated:find(e.renamed_to, 1, true) then
      s = s .. format(" (use '%s')", e.renamed_to)
    end
    return s
  end
  if e.renamed_to then
    return format("'%s' is renamed '%s' in newer %s", e.name, e.renamed_to, owner)
  end
  if e.until_ then
    return format("'%s' is gone from recent XLA (%s): newer jaxlibs refuse it", e.name,
                         e.until_)
  end
  return nil
end

-- Refuses a flag neither in the catalog nor in allow_unknown_flags.
local function known_flag(v, name, line)
  local e = catindex.get().by_name[name]
  if (e and e.kind == "flag") or v.allowed[name] then return e end
  -- A flag of an imported jaxlib list (`flagtune flags import`) is real for that jaxlib.
  if v.imported[name] then return nil end
  local hint = util.did_you_mean(name, catindex.get().flags)
  if hint then v:fail(line, "unknown XLA flag '%s' (did you mean '%s'?)", name, hint) end
  v:fail(line, "unknown XLA flag '%s': not in flagtune's catalog (see `flagtune flags`); if "
         .. "your jaxlib has it, add allow_unknown_flags = { \"%s\" }", name, name)
end

-- Warnings for entry E (may be nil) given VALUES at LINE.
local function catalog_warnings(v, name, e, line, values)
  if not e then return end
  local st = checks.status_warning(e)
  if st then v:warn(line, "%s", st) end
  for _, val in ipairs(values) do
    local want = checks.misfit(e, val)
    if want then
      local tail = e.type == "bool" and ": XLA ignores it (\"Couldn't interpret value\")" or ""
      v:warn(line, "'%s' = %s is not %s%s", name, util.describe(val), want, tail)
      return
    end
  end
end

-- `auto` becomes choice { the catalog's candidates }.
local function resolve_auto(v, name, p, line, e)
  if p ~= AUTO then return p end
  if not e or not e.candidates or #e.candidates == 0 then
    v:fail(line, "'%s' has no candidates in the catalog for `auto`: search it with %s", name,
           SEARCH_HINT)
  end
  local values = {}
  for i, c in ipairs(e.candidates) do values[i] = c end
  return setmetatable({ kind = "choice", values = values, n = #values, line = line }, PARAM)
end

-- The values a descriptor can take, for type checks (int: its ends).
local function param_values(p)
  if p.values then return p.values end
  return { p.lo, p.hi }
end

-- The names sorted by the line they are written on, so the first mistake is reported first.
local function by_line(v, key, t)
  local names, lines = {}, {}
  for name, p in pairs(t) do
    if type(name) ~= "string" then
      v:fail_at(key, "'%s' must map names to values, got a %s key", key, type(name))
    end
    names[#names + 1] = name
    lines[name] = is_param(p) and p.line or line_in(v, key, name)
  end
  table.sort(names, function(a, b)
    return lines[a] < lines[b] or (lines[a] == lines[b] and a < b)
  end)
  return names
end

-- Shapes first (names, values, both fixed and searched), as before the catalog existed;
-- then the catalog: unknown names, `auto`, warnings.
local function check_flags(v, raw_flags, raw)
  local searched, lines = v:table("flags", raw_flags), {}
  local order = by_line(v, "flags", searched)
  for _, name in ipairs(order) do
    local p = searched[name]
    local line = flag_name(v, "flags", name, "vars")
    lines[name] = is_param(p) and p.line or line
    if p ~= AUTO then param(v, "flags", name, p, lines[name], "fixed_flags") end
  end
  local fixed, given = {}, v:table("fixed_flags", raw.fixed_flags)
  local fixed_order = by_line(v, "fixed_flags", given)
  for _, name in ipairs(fixed_order) do
    local val = given[name]
    local line = flag_name(v, "fixed_flags", name, "env")
    lines["=" .. name] = line
    if val == AUTO then
      v:fail(line, "'%s' = auto searches the catalog's candidates: move it to `flags`", name)
    end
    fixed[name] = fixed_value(v, name, val, line, "flags")
    if searched[name] ~= nil then
      v:fail(line, "'%s' is in both `flags` and `fixed_flags`: keep one", name)
    end
  end
  local flags = {}
  for _, name in ipairs(order) do
    local line = lines[name]
    local e = known_flag(v, name, line)
    flags[name] = param(v, "flags", name, resolve_auto(v, name, searched[name], line, e), line,
                          "fixed_flags")
    catalog_warnings(v, name, e, line, param_values(flags[name]))
  end
  for _, name in ipairs(fixed_order) do
    local line = lines["=" .. name]
    catalog_warnings(v, name, known_flag(v, name, line), line, { fixed[name] })
  end
  local at, fixed_at = {}, {}
  for _, name in ipairs(order) do at[name] = lines[name] end
  for _, name in ipairs(fixed_order) do fixed_at[name] = lines["=" .. name] end
  SITES[flags], SITES[fixed] = at, fixed_at
  return flags, fixed
end

-- Two variables jaxlib refuses together (lua/envpairs.lua: both memory fractions kill every
-- trial with a ValueError) are an error at the later of their lines. A sweep that sets one
-- keeps the other from the caller's environment; the note says so when the caller has it.
local function mem_fraction(v, vars, env)
  local function set(name) return vars[name] ~= nil or env[name] ~= nil end
  local a, b, why = envpairs.conflict(set)
  if a then
    local function line(name)
      local p = vars[name]
      if is_param(p) and p.line then return p.line end
      return line_in(v, vars[name] ~= nil and "vars" or "env", name)
    end
    local la, lb = line(a), line(b)
    v:fail(math.max(la, lb), "'%s' and '%s' are both set: %s; keep '%s'", b, a, why, a)
  end
  -- Neither set by the experiment but both inherited: every trial would be refused.
  local function inherited(name)
    local have = os.getenv(name)
    return not set(name) and have ~= nil and have ~= ""
  end
  local ia, ib, iwhy = envpairs.conflict(inherited)
  if ia then
    v.warnings[#v.warnings + 1] = format("warning: %s and %s are both set in your environment "
      .. "and every trial inherits them: %s, so every trial will end invalid; unset %s", ib, ia,
      iwhy, ib)
  end
  for _, name in ipairs(envpairs.unset(vars, env)) do
    local have = os.getenv(name)
    if have and have ~= "" then
      local partner, why = envpairs.partner(name)
      v.warnings[#v.warnings + 1] = format("note: %s from your environment is not "
        .. "passed to trials: the experiment sets %s (%s)", name, partner, why)
    end
  end
end

-- The persistent compilation cache (src/trial/trialcfg.c, keep_xla_caches_apart): with
-- JAX_COMPILATION_CACHE_DIR set, jax also points XLA's autotune cache (and with 'all' its
-- kernel cache) into the directory, keyed without XLA_FLAGS, so trials would share autotuning.
-- flagtune sets JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none in every trial unless it is set
-- explicitly; an explicit value that enables one of them gets this warning. It enables one
-- when it is 'all' or names a cache (jax 0.12.0.1 jax/_src/compiler.py:322-327).
local CACHE_DIR, XLA_CACHES = "JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"
local function enables_xla_cache(value)
  value = tostring(value)
  return value == "all" or value:find("xla_gpu_per_fusion_autotune_cache_dir", 1, true) ~= nil
    or value:find("xla_gpu_kernel_cache_file", 1, true) ~= nil
end

local function compile_cache(v, vars, env, vars_at, env_at)
  local function given(name) -- the values NAME may take in a trial, and where it was set
    if env[name] ~= nil then return { env[name] }, env_at[name] end
    local p = vars[name]
    if p ~= nil then return is_param(p) and p.values or { p }, vars_at[name] end
    local have = os.getenv(name)
    if have ~= nil then return { have }, nil end
    return nil
  end
  local dirs = given(CACHE_DIR)
  local dir_set = dirs == nil -- unset: the sweep's own directory (src/trial/launch.c)
  for _, d in ipairs(dirs or {}) do dir_set = dir_set or tostring(d) ~= "" end
  if not dir_set then return end
  local values, line = given(XLA_CACHES)
  for _, value in ipairs(values or {}) do
    if enables_xla_cache(value) then
      local msg = format("%s=%s with a %s: XLA's autotune and kernel caches are keyed without "
        .. "XLA_FLAGS, so trials would share autotuning decisions; leave it unset (flagtune then "
        .. "sets it to 'none' in every trial) or set it to 'none'", XLA_CACHES, tostring(value),
        CACHE_DIR)
      if line then v:warn(line, "%s", msg)
      else v.warnings[#v.warnings + 1] = "warning: " .. msg .. " (from your environment)" end
      return
    end
  end
end

local function check_vars(v, raw_vars, raw, gpus)
  local vars, vars_at, env_at = {}, {}, {}
  local by_name = catindex.get().by_name
  for name, p in pairs(v:table("vars", raw_vars)) do
    local line = env_name(v, "vars", name, "flags")
    line = is_param(p) and p.line or line
    vars_at[name] = line
    local e = by_name[name]
    e = e and e.kind == "env" and e or nil
    vars[name] = param(v, "vars", name, resolve_auto(v, name, p, line, e), line, "env")
    if e and checks.status_warning(e) then v:warn(line, "%s", checks.status_warning(e)) end
  end
  local env = {}
  for name, val in pairs(v:table("env", raw.env)) do
    local line = env_name(v, "env", name, "fixed_flags")
    env_at[name] = line
    if type(val) == "boolean" then
      v:fail(line, "'%s' must be a string or number, got boolean", name)
    end
    if val == AUTO then
      v:fail(line, "'%s' = auto searches the catalog's candidates: move it to `vars`", name)
    end
    val = fixed_value(v, name, val, line, "vars")
    env[name] = type(val) == "number" and tostring(to_int(val) or val) or val
    if vars[name] then v:fail(line, "'%s' is in both `env` and `vars`: keep one", name) end
    local e = by_name[name]
    if e and e.kind == "env" and checks.status_warning(e) then
      v:warn(line, "%s", checks.status_warning(e))
    end
  end
  mem_fraction(v, vars, env)
  compile_cache(v, vars, env, vars_at, env_at)
  if gpus > 0 and (env.CUDA_VISIBLE_DEVICES or vars.CUDA_VISIBLE_DEVICES) then
    v:fail_at("gpus_per_trial", "CUDA_VISIBLE_DEVICES is set per trial when gpus_per_trial > 0: "
              .. "remove it from `env` and `vars`")
  end
  SITES[vars], SITES[env] = vars_at, env_at
  return vars, env
end

-- `allow_unknown_flags = { "xla_new_flag" }`: names the catalog does not know yet.
local function check_allowed(v, raw)
  local allowed = {}
  for _, name in ipairs(v:string_list("allow_unknown_flags", raw.allow_unknown_flags)) do
    if not name:find(FLAG_NAME) then
      v:fail_at("allow_unknown_flags", "allow_unknown_flags: '%s' is not an XLA flag name "
                .. "(they look like xla_gpu_enable_...)", name)
    end
    allowed[name] = true
  end
  return allowed
end

-- `presets = xla.presets.x{} or { xla.presets.x{}, ... }` merged under copies of flags and
-- vars; what the file writes itself (flags, fixed_flags, vars, env) replaces a preset's entry.
local function apply_presets(v, raw)
  if raw.presets == nil then return raw.flags, raw.vars end
  local presets = require "presets" -- loaded only by an experiment that names presets
  local list = presets.is_preset(raw.presets) and { raw.presets } or raw.presets
  if type(list) ~= "table" or getmetatable(list) or not is_list(list) or #list == 0 then
    v:fail_at("presets", "'presets' must be a preset or a list of presets like "
              .. "{ xla.presets.nccl{} }, got %s", util.typename(raw.presets))
  end
  local total, why = presets.sum(list)
  if not total then v:fail_at("presets", "%s", why) end
  local function under(mine, fixed, theirs, key, fixed_key)
    local out = {}
    for k, p in pairs(v:table(key, mine)) do out[k] = p end
    local f = v:table(fixed_key, fixed)
    for k, p in pairs(theirs) do
      if out[k] == nil and f[k] == nil then out[k] = p end
    end
    return out
  end
  return under(raw.flags, raw.fixed_flags, total.flags, "flags", "fixed_flags"),
         under(raw.vars, raw.env, total.vars, "vars", "env")
end

---------------------------------------------------------------------------------------
-- Release ranges: the catalog's `jax = { first, after, last, before }` against the installed
-- jax and jaxlib (docs/CATALOG.md, "Release ranges").

-- "0.4.36.dev20241122", "0.5.0+cuda12" -> { 0, 4, 36 }: the numeric release part only, so a
-- dev or local build compares as its release.
function checks.version(s)
  local out = {}
  for part in tostring(s):match("^[%d.]*"):gmatch("%d+") do out[#out + 1] = tonumber(part) end
  return #out > 0 and out or nil
end

-- <0, 0 or >0 as version A is older than, the same as or newer than B (missing parts are 0).
function checks.compare(a, b)
  for i = 1, math.max(#a, #b) do
    local x, y = a[i] or 0, b[i] or 0
    if x ~= y then return x < y and -1 or 1 end
  end
  return 0
end

-- Why entry E does not exist in release V (a version table), or nil.
function checks.absent_from(e, v)
  local r = e.jax
  if type(r) ~= "table" then return nil end
  local function cmp(s) return checks.compare(v, checks.version(s)) end
  if r.first and cmp(r.first) < 0 then return "it first appears in jax " .. r.first end
  if r.after and cmp(r.after) <= 0 then return "it is newer than jax " .. r.after end
  if r.last and cmp(r.last) > 0 then return "jax " .. r.last .. " is the last release with it" end
  if r.before and cmp(r.before) >= 0 then return "jax " .. r.before .. " no longer has it" end
  return nil
end

-- The spec's names that have a release range, as { name, line, entry } sorted by line.
local function ranged(spec)
  local out, by_name = {}, catindex.get().by_name
  for _, key in ipairs({ "flags", "fixed_flags", "vars", "env" }) do
    local t = spec[key]
    for name, line in pairs(t and SITES[t] or {}) do
      local e = by_name[name]
      if e and e.jax and (e.kind == "flag") == (key == "flags" or key == "fixed_flags") then
        out[#out + 1] = { name = name, line = line, entry = e }
      end
    end
  end
  table.sort(out, function(a, b)
    return a.line < b.line or (a.line == b.line and a.name < b.name)
  end)
  return out
end

-- Whether any name of SPEC has a release range: C probes the installed jax only then.
function checks.has_ranges(spec) return #ranged(spec) > 0 end

-- The catalog's flags were checked against real jaxlibs (catindex.PROBED_JAXLIB, records in
-- tests/data/probe/). When the installed JAXLIB is none of them and NAMES (ranged(spec))
-- holds a flag, says so at the first flag's line: its names, types and defaults may differ.
local function probed_on(spec, path, jaxlib, names)
  local v = jaxlib and checks.version(jaxlib)
  if not v then return end
  local list = catindex.PROBED_JAXLIB or {}
  for _, p in ipairs(list) do
    if checks.compare(v, checks.version(p)) == 0 then return end
  end
  for _, s in ipairs(names) do
    if s.entry.kind == "flag" then
      spec.warnings[#spec.warnings + 1] = format(
        "%s:%d: warning: the flag catalog was probed on jaxlib %s; you have jaxlib %s, whose "
        .. "flags and defaults may differ (`flagtune flags probe --catalog` asks it)", path,
        s.line, table.concat(list, ", "), jaxlib)
      return
    end
  end
end

-- Appends to spec.warnings a "PATH:LINE: warning: ..." for each name of SPEC that the
-- installed release lacks: flags against JAXLIB (XLA lives in jaxlib), variables against JAX.
-- Either version may be nil (not probed): its names are not checked.
function checks.release_warnings(spec, path, jax, jaxlib)
  spec.warnings = spec.warnings or {}
  local names = ranged(spec)
  probed_on(spec, path, jaxlib, names)
  for _, s in ipairs(names) do
    local is_flag = s.entry.kind == "flag"
    local shown = is_flag and jaxlib or jax
    local v = shown and checks.version(shown)
    local why = v and checks.absent_from(s.entry, v)
    if why then
      spec.warnings[#spec.warnings + 1] = format(
        "%s:%d: warning: '%s' is absent from %s %s you have installed (%s)", path, s.line,
        s.name, is_flag and "jaxlib" or "jax", shown, why)
    end
  end
  return spec.warnings
end

---------------------------------------------------------------------------------------
-- Entry points

-- Searching a name the catalog tags "precision" (xla.presets.precision{}, `auto` or a file's
-- own choice) trades accuracy for speed: a faster program that computes something else
-- would win. It is an error unless metric.check compares every trial's loss with the
-- baseline's (trials past the tolerance end `wrong`). Reported at the first such name's line.
local function precision_guard(v, raw, flags, vars)
  local metric = raw.metric
  if type(metric) == "table" and type(metric.check) == "table" then return end
  local by_name, first = catindex.get().by_name, nil
  for _, t in ipairs({ flags, vars }) do
    for name, p in pairs(t) do
      local e = by_name[name]
      if e and e.tags then
        for _, tag in ipairs(e.tags) do
          local line = is_param(p) and p.line or 1
          if tag == "precision" and (not first or line < first.line
                                     or (line == first.line and name < first.name)) then
            first = { name = name, line = line }
          end
        end
      end
    end
  end
  if first then
    v:fail(first.line, "'%s' trades accuracy for speed: searching it needs the correctness "
           .. "guard, metric.check = { json = \"loss\", tolerance = 0.02 } (or pattern = ...), so "
           .. "that a trial whose loss drifts from the baseline's ends `wrong` "
           .. "(docs/EXPERIMENTS.md, \"The correctness guard\")", first.name)
  end
end

-- flags, fixed_flags, vars, env of RAW (the experiment table) checked, with the presets
-- merged in; sets v.allowed (allow_unknown_flags). GPUS is gpus_per_trial.
local function check_space(v, raw, gpus)
  v.allowed = check_allowed(v, raw)
  local flags, vars = apply_presets(v, raw)
  local searched, fixed = check_flags(v, flags, raw)
  local svars, env = check_vars(v, vars, raw, gpus)
  precision_guard(v, raw, searched, svars)
  return searched, fixed, svars, env
end

-- The checks for descriptors with metatable PARAM_MT and `auto` value AUTO_VALUE (dsl's).
function checks.bind(param_mt, auto_value)
  PARAM, AUTO = param_mt, auto_value
  return { space = check_space, misfit = checks.misfit, status_warning = checks.status_warning }
end

return checks
