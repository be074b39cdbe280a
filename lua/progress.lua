-- The live view's knowledge of flags (src/progress.c shows it; C names no flag): which label
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

return progress
