local M = {}
function M.new(space, options, history, rng)
  return setmetatable({ space = space, n = 0 }, { __index = M })
end
function M:ask(n) return nil end
return M
