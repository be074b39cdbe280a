local M = {
function M.new() end
return M
