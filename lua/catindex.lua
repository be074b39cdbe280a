-- The one index of the flag catalog (lua/catalog.lua), built on first use and shared by the
-- DSL's checks (lua/checks.lua), the presets (lua/presets.lua) and the space's routing of
-- TPU flags (lua/space.lua). Owns only the index; must not change or copy the entries, which
-- stay the catalog's own tables.

local catindex = {}

local index

-- { by_name = { NAME = entry } (flags and variables), flags = the flag names sorted,
--   tpu = { NAME = true } for flags with backend = "tpu" }.
function catindex.get()
  if not index then
    local by_name, flags, tpu = {}, {}, {}
    for _, e in ipairs(require "catalog") do
      by_name[e.name] = e
      if e.kind == "flag" then
        flags[#flags + 1] = e.name
        if e.backend == "tpu" then tpu[e.name] = true end
      end
    end
    table.sort(flags)
    index = { by_name = by_name, flags = flags, tpu = tpu }
  end
  return index
end

return catindex
