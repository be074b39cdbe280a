-- `flagtune check` runs a strategy file's loading and first ask(), but nothing that changes
-- the world: os.execute raises at its line instead of running
os.execute("touch pwned-by-check")
local M = {}
function M.new(space, options, history, rng)
  return { ask = function(self, n) return {} end }
end
return M
