local M = {}
function M.new(space, options)
  local i = 0
  while true do i = i + 1 end
end
return M
