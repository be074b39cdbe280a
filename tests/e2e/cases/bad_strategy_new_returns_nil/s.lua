local M = {}
function M.new(space, options) end
return M
