local M = {}
function M.new(space, options, history, rng)
  return setmetatable({ space = space }, { __index = M })
end
function M:ask(n)
  error({ code = 1 })
end
return M
