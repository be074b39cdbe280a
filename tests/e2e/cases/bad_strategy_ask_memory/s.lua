-- a memory error is caught by pcall, and the loop would go on without the cap's hook
local M = {}
function M.new(space, options, history, rng)
  return setmetatable({ space = space }, { __index = M })
end
function M:ask(n)
  while true do pcall(string.rep, "x", (1 << 31) - 1) end
end
return M
