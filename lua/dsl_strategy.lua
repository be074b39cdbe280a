-- The experiment file's strategy and executor constructors: grid{}, random{}, tpe{},
-- halving{}, strategy_file(PATH, { ... }) and slurm{ ... }, with the checks of their options
-- (plain data: no cycles, bounded depth) and the strategy's display form (tpe{startup=10}).
-- Split from lua/dsl.lua, which loads it when the file first calls one of them (an
-- experiment naming no strategy and no executor does not load it: docs/COST.md, Start-up)
-- and hands over its objects with M.bind. Must not load strategy code: a strategy is only
-- checked to exist (lua/validate.lua).

local util = require "util"

local M = {}

-- lua/dsl.lua's objects (M.bind): here() (the constructor's caller's place: each constructor
-- calls it first), cfail(at, fmt, ...), the metatables a strategy and an executor carry.
local here, cfail, is_strategy, STRATEGY, EXECUTOR

function M.bind(parts)
  here, cfail, is_strategy = parts.here, parts.cfail, parts.is_strategy
  STRATEGY, EXECUTOR = parts.STRATEGY, parts.EXECUTOR
  return M
end

local relative_to = util.relative_to

-- Strategy constructors: {__strategy=true, name=, options=, path=, line=, desc=}.

-- A compact, stable rendering of options for display: tpe{startup=10}.
local function render(v)
  if is_strategy(v) then return v.desc end
  if type(v) == "string" then return util.describe(v) end
  if type(v) ~= "table" then return tostring(v) end
  local parts = {}
  for i, x in ipairs(v) do parts[i] = render(x) end
  for _, k in ipairs(util.sorted_keys(v)) do
    if not (math.type(k) == "integer" and k >= 1 and k <= #v) then
      parts[#parts + 1] = tostring(k) .. "=" .. render(v[k])
    end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

local OPTIONS_DEPTH = 16 -- tables inside tables a strategy's options may hold

-- Options are plain data: a table inside them may not hold itself (render and the strategy
-- would recurse forever) nor nest deeper than OPTIONS_DEPTH.
local function check_option_value(at, what, key, v, depth, open)
  if type(v) ~= "table" or is_strategy(v) then return end
  if open[v] then cfail(at, "%s options: '%s' holds itself (a cycle); options must be plain data",
                        what, key) end
  if depth > OPTIONS_DEPTH then
    cfail(at, "%s options: '%s' nests tables more than %d deep", what, key, OPTIONS_DEPTH)
  end
  open[v] = true
  for _, x in pairs(v) do check_option_value(at, what, key, x, depth + 1, open) end
  open[v] = nil
end

local function check_options(at, what, options)
  if options == nil then return {} end
  if type(options) ~= "table" or getmetatable(options) then
    cfail(at, "%s takes a table of options, got %s", what, util.typename(options))
  end
  local copy = {}
  for k, v in pairs(options) do
    if type(k) ~= "string" then cfail(at, "%s options must be name = value pairs", what) end
    check_option_value(at, what, k, v, 1, { [options] = true })
    copy[k] = v
  end
  return copy
end

local function strategy(at, name, options, path)
  local s = { __strategy = true, name = name, options = options, path = path, line = at.line }
  s.desc = (path or name) .. render(options)
  return setmetatable(s, STRATEGY)
end

local function builtin(name)
  return function(options, ...)
    local at = here()
    if select("#", ...) > 0 then
      cfail(at, "%s takes one table of options: %s{ ... }", name, name)
    end
    return strategy(at, name, check_options(at, name .. "{}", options))
  end
end

M.grid, M.random, M.tpe, M.halving =
  builtin "grid", builtin "random", builtin "tpe", builtin "halving"

function M.strategy_file(file, options)
  local at = here()
  if type(file) ~= "string" or file == "" then
    cfail(at, 'strategy_file takes a path: strategy_file("my_search.lua", { ... })')
  end
  local path = relative_to(at.path, file)
  local f, why = io.open(path, "r")
  if not f then
    cfail(at, "strategy_file: cannot read %s: %s", util.describe(path), (why:gsub("^.-: ", "")))
  end
  f:close()
  local name = path:match("([^/]+)$"):gsub("%.lua$", "")
  return strategy(at, name, check_options(at, "strategy_file", options), path)
end

-- `executor = slurm { partition = "gpu", ... }`: trials as Slurm job steps (docs/SLURM.md).
-- The local executor is the string "local" (the default): `local` is a Lua keyword.
function M.slurm(options, ...)
  local at = here()
  if select("#", ...) > 0 then cfail(at, "slurm takes one table of options: slurm{ ... }") end
  return setmetatable({ kind = "slurm", options = check_options(at, "slurm{}", options),
                        line = at.line }, EXECUTOR)
end

return M
