local M = {}
function M.new(space, options)
  if options.depth < 0 then error("depth must be >= 0", 0) end
end
return M
