-- pcall catches the budget's error, but the next instruction raises it again
local M = {}
function M.new(space, options, history, rng)
  return setmetatable({ space = space }, { __index = M })
end
function M:ask(n)
  while true do pcall(function() while true do end end) end
end
return M
