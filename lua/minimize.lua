-- `flagtune minimize`: renders a subset of a stored configuration (the winner with some of its
-- searched parameters reverted, i.e. left unset as in the baseline) into a proposal. A search
-- proposal must set every parameter (Space:validate); these deliberately do not, so they are
-- decoded value by value: each one present must still be a value of its parameter. Must not
-- decide which parameters to revert (src/sweep/minimize.c plans that over the stored trials).
local M = {}

-- The proposal for the canonical JSON text JSON (every key a parameter of HOST's space, each
-- value one of its values; any subset, {} included), or nil and why it does not fit.
function M.render(host, json)
  local space = host.space
  local tbl, err = ft.json_decode(json)
  if type(tbl) ~= "table" then
    return nil, "invalid JSON (" .. tostring(err) .. "): " .. tostring(json)
  end
  local config = {}
  for k, v in pairs(tbl) do
    local p = space.by_name[k]
    if not p then
      return nil, string.format("configuration %s no longer fits the experiment's space: " ..
        "unknown parameter %s", json, tostring(k))
    end
    local c = p:canonical(v)
    if c == nil or not p:index(c) then
      return nil, string.format("configuration %s no longer fits the experiment's space: " ..
        "%s = %s is not a value of %s", json, k, tostring(v), p:describe())
    end
    config[k] = c
  end
  return host:finish({ json = space:key(config), label = space:label(config), steps = 0,
                       settings = space:render(config) })
end

return M
