local M = {}
function M.new(space, options, history, rng)
  return setmetatable({ space = space }, { __index = M })
end
local function fail(msg) error(msg, 0) end
function M:ask(n)
  fail("no proposals left")
end
return M
