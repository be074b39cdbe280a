-- The one index of the flag catalog (lua/catalog.lua), built on first use and shared by the
-- DSL's checks (lua/checks.lua), the presets (lua/presets.lua) and the space's routing of
-- TPU flags (lua/space.lua). Owns only the index; must not change or copy the entries.
--
-- Lazy: the build (tools/embed.c) embeds each catalog entry as a chunk of its own and an
-- index of them (lua/catalog_index.lua: each entry's name, kind and place), so a start that
-- names three flags loads three entries, not the 400 of the whole file (`flagtune check`:
-- docs/COST.md, Start-up). by_name[NAME] loads NAME's entry the first time it is asked for;
-- pairs(by_name) and catindex.entries() load them all, and `flags` (for "did you mean") is
-- made when first read. An entry loaded so is a table of its own, equal to (not the same
-- table as) require("catalog")'s; when the whole catalog is already loaded (`flagtune
-- flags`), or the build has no split, the index is built from the whole catalog.

local catindex = {}

-- The jaxlib versions the catalog was checked against for real: each has its record under
-- tests/data/probe/ (which flags XLA refuses, which defaults it contradicts;
-- tests/lua/test_catalog_probe_jax012.lua fails when the catalog disagrees with one).
-- `check` says so when the installed jaxlib is another (lua/checks.lua, release_warnings).
catindex.PROBED_JAXLIB = { "0.10.2", "0.11.2", "0.12.0.1" }

local index
local ENTRIES = "lua/catalog.entries"

local function eager(catalog)
  local by_name, flags, tpu = {}, {}, {}
  for _, e in ipairs(catalog) do
    by_name[e.name] = e
    if e.kind == "flag" then
      flags[#flags + 1] = e.name
      if e.backend == "tpu" then tpu[e.name] = true end
    end
  end
  table.sort(flags)
  return { by_name = by_name, flags = flags, tpu = tpu, lazy = false }
end

-- DATA: lua/catalog_index.lua's string, "\nNAME KIND OFFSET LENGTH\n..." (tools/embed.c):
-- one string constant, so the index costs a start next to nothing; a name is found by a
-- plain search for its line (catalog names are words, so a line cannot match elsewhere).
local function lazy(data)
  local loaded, by_name, tpu = 0, {}, {}
  local idx = { by_name = by_name, tpu = tpu, lazy = true }
  local function line(name) -- KIND, OFFSET, LENGTH of NAME, or nil
    if type(name) ~= "string" or not name:find("^[%w_]+$") then return nil end
    local at = data:find("\n" .. name .. " ", 1, true)
    if not at then return nil end
    local kind, off, len = data:match("^(%a) (%d+) (%d+)\n", at + #name + 2)
    return kind, tonumber(off), tonumber(len)
  end
  local function load_entry(off, len)
    local f = assert(ft.load_embedded(ENTRIES, off, len))
    loaded = loaded + 1
    return f()[1]
  end
  local function all()
    for name, _, off, len in data:gmatch("\n([%w_]+) (%a) (%d+) (%d+)") do
      if rawget(by_name, name) == nil then
        rawset(by_name, name, load_entry(tonumber(off), tonumber(len)))
      end
    end
  end
  setmetatable(by_name, {
    __index = function(t, name)
      local kind, off, len = line(name)
      if not kind then return nil end
      local e = load_entry(off, len)
      rawset(t, name, e)
      return e
    end,
    __pairs = function(t)
      all()
      return next, t, nil
    end,
  })
  setmetatable(tpu, {
    __index = function(_, name) return line(name) == "t" or nil end,
    __pairs = function()
      local set = {}
      for name in data:gmatch("\n([%w_]+) t ") do set[name] = true end
      return next, set, nil
    end,
  })
  setmetatable(idx, { __index = function(t, key) -- the sorted flag names, when first asked for
    if key ~= "flags" then return nil end
    local flags = {}
    for name, kind in data:gmatch("\n([%w_]+) (%a) ") do
      if kind ~= "v" then flags[#flags + 1] = name end
    end
    table.sort(flags)
    rawset(t, "flags", flags)
    return flags
  end })
  idx.loaded = function() return loaded end
  idx.all = all
  idx.names = function()
    local names = {}
    for name in data:gmatch("\n([%w_]+) ") do names[#names + 1] = name end
    return names
  end
  return idx
end

-- { by_name = { NAME = entry } (flags and variables), flags = the flag names sorted,
--   tpu = { NAME = true } for flags with backend = "tpu" }.
function catindex.get()
  if not index then
    local ok, data = false, nil
    if not package.loaded.catalog and ft and ft.load_embedded then
      ok, data = pcall(require, "catalog_index")
    end
    index = (ok and type(data) == "string") and lazy(data) or eager(require "catalog")
  end
  return index
end

-- Every entry, in the catalog's order (each loaded).
function catindex.entries()
  local idx = catindex.get()
  if not idx.lazy then return require "catalog" end
  local out = {}
  for i, name in ipairs(idx.names()) do out[i] = idx.by_name[name] end
  return out
end

-- How many entries have been loaded (all of them without the split): for the tests.
function catindex.loaded()
  local idx = catindex.get()
  return idx.lazy and idx.loaded() or #require "catalog"
end

return catindex
