-- The strategy host's calls that only a running sweep makes: a finished trial told to the
-- strategy, whether it is done, and its estimates for the confirmation. Split from
-- lua/host.lua, which installs these methods on its Host class at the first call of one
-- (`check` makes none: docs/COST.md, Start-up). The protocol and its errors are
-- lua/host.lua's.

local M = {}

-- Adds the methods to HOST (lua/host.lua's class); PARTS.finite is its number check.
function M.install(Host, parts)
  local finite = parts.finite

  -- A finished trial. A configuration asked of this host is found by its JSON (marked seen
  -- when asked); any other (the baseline, a re-run, a resumed sweep's) is decoded, and JSON
  -- that no longer decodes (a re-run from an older space) is dropped.
  function Host:tell(json, result)
    local config = self.pending[json]
    if config then
      self.pending[json] = nil
    else
      config = self.space:decode_json(json)
      if not config then return end
      self:mark(config)
    end
    if type(self.strategy.tell) ~= "function" then return end
    result = result or {}
    self:call("tell", config, {
      status = result.status, value = finite(result.value), steps = result.steps or {},
      steps_budget = result.steps_budget, number = result.number, baseline = next(config) == nil,
      wall_ms = finite(result.wall_ms), step_ms = finite(result.step_ms),
    })
  end

  function Host:done()
    if type(self.strategy.done) ~= "function" then return false end
    return self:call("done") and true or false
  end

  -- The strategy's model estimates of stored configurations (JSON strings; "{}" and ones that
  -- no longer fit the space get none), for the confirmation (src/sweep/confirm.c): a list parallel
  -- to JSONS of { mean = log ms, sd = log ms } or false. A strategy without estimate() gives
  -- every one false; a malformed answer is the strategy's error.
  function Host:estimate(jsons)
    local out, configs, where = {}, {}, {}
    for i, json in ipairs(jsons) do
      out[i] = false
      local config = self.space:decode_json(json)
      if config and next(config) ~= nil then
        configs[#configs + 1] = config
        where[#configs] = i
      end
    end
    if #configs == 0 or type(self.strategy.estimate) ~= "function" then return out end
    local got = self:call("estimate", configs)
    if type(got) ~= "table" then
      self:fail(": estimate() must return a list parallel to its configurations, got %s",
        got == nil and "nil" or type(got))
    end
    for k = 1, #configs do
      local e = got[k]
      if e then
        local mean, sd = type(e) == "table" and finite(e.mean), type(e) == "table" and finite(e.sd)
        if not (mean and sd and sd >= 0) then
          self:fail(": estimate() item %d must be false or { mean = number, sd = number >= 0 }, " ..
            "got %s", k, type(e) == "table" and string.format("{ mean = %s, sd = %s }",
              tostring(e.mean), tostring(e.sd)) or tostring(e))
        end
        out[where[k]] = { mean = mean, sd = sd }
      end
    end
    return out
  end

  -- The configuration the strategy holds for the public recipe (the guides' settings that
  -- it proposed first), as its canonical JSON, or nil: the strategy's optional recipe()
  -- method. The confirmation re-measures it and the winner must beat it (src/sweep/confirm.h).
  function Host:recipe()
    if type(self.strategy.recipe) ~= "function" then return nil end
    local config = self:call("recipe")
    if config == nil then return nil end
    if type(config) ~= "table" then
      self:fail(": recipe() must return a configuration or nil, got %s", type(config))
    end
    if next(config) == nil then return nil end
    local ok, msg = self.space:validate(config)
    if not ok then self:fail(": recipe() returned an invalid configuration: %s", msg) end
    return self.space:key(config)
  end
end

return M
