-- The live view's knowledge of flags (src/cli/progress.c shows it; C names no flag): which label
-- tokens ("name=value", as Space:label writes them) are a parameter at its default, where
-- the flag catalog knows one. A trial's line leaves those out: they are what the baseline
-- ran too, so only what differs from the baseline is shown.

local progress = {}

-- The tokens, one per searched parameter whose catalog default is a value of the space,
-- joined by "\n".
function progress.default_tokens(spec)
  local idx = require("catindex").get().by_name
  local out = {}
  for _, p in ipairs(spec.space.params) do
    local e = idx[p.name]
    if e and e.default ~= nil and p:canonical(e.default) ~= nil then
      out[#out + 1] = spec.space:label({ [p.name] = e.default })
    end
  end
  return table.concat(out, "\n")
end

-- Short names for a line too narrow for the labels (src/cli/progress.c): each parameter by the
-- initials of its words (xla_/xla_tpu_ and a leading enable_ dropped: what differs between the
-- sweep's flags, not their common prefix), lower case for flags, upper case for variables;
-- where two collide, more letters of each word until they differ. "label name\tshort" lines,
-- label names as Space:label writes them. A name of one word is its own short name.
function progress.short_names(spec)
  local names, words = {}, {}
  for _, p in ipairs(spec.space.params) do
    local label = p.name:gsub("^xla_gpu_", "")
    local core = label:gsub("^xla_tpu_", ""):gsub("^xla_", ""):gsub("^enable_", "")
    local w = {}
    for part in core:gmatch("[^_]+") do w[#w + 1] = part end
    names[#names + 1], words[#words + 1] = label, w
  end
  local function short(i, n)
    local w = words[i]
    if #w < 2 then return names[i] end
    local out = {}
    for k, part in ipairs(w) do out[k] = part:sub(1, n) end
    local s = table.concat(out, n > 1 and "_" or "")
    return names[i]:match("^[A-Z0-9_]+$") and s:upper() or s:lower()
  end
  local out, chosen = {}, {}
  for i = 1, #names do chosen[i] = short(i, 1) end
  for n = 2, 8 do
    local seen, again = {}, false
    for i = 1, #names do seen[chosen[i]] = (seen[chosen[i]] or 0) + 1 end
    for i = 1, #names do
      if seen[chosen[i]] > 1 then chosen[i], again = short(i, n), true end
    end
    if not again then break end
  end
  for i = 1, #names do out[#out + 1] = names[i] .. "\t" .. chosen[i] end
  return table.concat(out, "\n")
end

return progress
