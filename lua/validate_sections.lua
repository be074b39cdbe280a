-- The experiment's optional sections, checked as lua/validate.lua checks the rest (the same
-- validator V, "path:line: message" errors): metric.check (the correctness guard), pgle
-- (manual PGLE) and executor = slurm { ... }. Split from lua/validate.lua, which loads it
-- only for a file that sets one of them (most set none: docs/COST.md, Start-up) and hands
-- over the checks both use with M.bind. Must not run anything the file names.

local util = require "util"

local M = {}

-- lua/validate.lua's (M.bind): the executor's metatable (lua/dsl.lua's) and its checks of a
-- command, of {steps} in one and of a metric pattern.
local EXECUTOR, check_command, uses_steps, check_pattern

function M.bind(parts)
  EXECUTOR, check_command, uses_steps = parts.EXECUTOR, parts.check_command, parts.uses_steps
  check_pattern = parts.check_pattern
  return M
end

-- metric.check = { json = "loss" } or { pattern = "loss: (%S+)" }, tolerance = 0.02 (relative
-- to the baseline's value), abs = 0 (an absolute floor): every trial's loss curve is compared
-- with the baseline's at the same steps, and a trial outside the tolerance is `wrong`.
local CHECK_KEYS = { json = true, pattern = true, tolerance = true, abs = true }

function M.correctness(v, c)
  if type(c) ~= "table" or getmetatable(c) then
    v:fail_at("metric.check", "'metric.check' must be a table like { json = \"loss\", "
              .. "tolerance = 0.02 }, got %s", util.typename(c))
  end
  v:check_keys(c, CHECK_KEYS, "metric.check")
  if (c.json == nil) == (c.pattern == nil) then
    v:fail_at("metric.check", c.json and "metric.check takes `json` or `pattern`, not both"
              or 'metric.check needs json = "loss" or pattern = "loss: (%S+)"')
  end
  local out = { kind = c.json and "json" or "pattern" }
  out.field = v:string("metric.check.json", c.json)
  out.pattern = c.pattern and check_pattern(v, c.pattern, "metric.check.pattern", "the loss",
                                            '"loss: (%S+)"')
  out.tolerance = v:number("metric.check.tolerance", c.tolerance, 0.02, 0)
  out.abs = v:number("metric.check.abs", c.abs, 0, 0)
  if out.tolerance == 0 and out.abs == 0 then
    v:fail_at("metric.check", "metric.check needs a tolerance above 0 (relative) or abs above 0: "
              .. "no two runs compute bit-identical losses")
  end
  return out
end

-- pgle = { mode = "manual", steps = N, command = { ... } }: every trial first runs a profile
-- phase (the JAX-Toolbox PGLE guide's two-run workflow); auto PGLE is searched through vars
-- instead.
local PGLE_KEYS = { mode = true, steps = true, command = true, route = true }

function M.pgle(v, raw, x)
  local p = raw.pgle
  if type(p) ~= "table" or getmetatable(p) then
    v:fail_at("pgle", "'pgle' must be a table like { mode = \"manual\" }, got %s",
              util.typename(p))
  end
  v:check_keys(p, PGLE_KEYS, "pgle")
  if p.mode ~= "manual" then
    v:fail_at("pgle", "pgle.mode must be \"manual\", got %s (auto PGLE is searched with "
              .. "vars = { JAX_ENABLE_PGLE = choice { \"true\", \"false\" } })",
              util.describe(p.mode))
  end
  local out = { mode = "manual", steps = v:int("pgle.steps", p.steps, x.budget.steps, 1) }
  local route, why = require("pgle").check_route(p.route) -- lua/pgle.lua knows the routes
  if not route then v:fail_at("pgle", "%s", why) end
  out.route = route
  out.command = p.command and check_command(v, p.command, "pgle.command") or x.command
  if uses_steps(out.command) and out.steps == 0 then
    v:fail_at("pgle", "pgle.steps is needed: the profile command uses {steps} and budget.steps "
              .. "is not set")
  end
  return out
end

-- executor = "local" | "slurm" | slurm { ... }. Slurm's options are checked here so that a
-- typo is a path:line error before anything runs; src/luahost/experiment.c copies the result.
local SLURM_KEYS = { partition = true, account = true, time = true, nodes = true,
                     tasks_per_node = true, gpus_per_trial = true, mode = true, extra = true,
                     cpus_per_trial = true, srun = true, chain = true }

-- srun options flagtune sets for every step itself (src/exec/slurm.c's srun_argv).
local SRUN_OWN = { "--jobid", "--exact", "--nodes", "-N", "--ntasks", "-n", "--ntasks-per-node",
                   "--gres", "--job-name", "-J", "--kill-on-bad-exit", "--cpus-per-task", "-c",
                   "--verbose", "-v" }

function M.executor(v, raw, x)
  local e = raw.executor
  if e == "slurm" then e = setmetatable({ kind = "slurm", options = {} }, EXECUTOR) end
  if getmetatable(e) ~= EXECUTOR then
    v:fail_at("executor", "'executor' must be \"local\", \"slurm\" or slurm { ... }, got %s",
              util.describe(e))
  end
  local o = e.options
  v:check_keys(o, SLURM_KEYS, "executor")
  local out = { kind = "slurm" }
  out.partition = v:string("executor.partition", o.partition, nil)
  out.account = v:string("executor.account", o.account, nil)
  if type(o.time) == "number" then
    out.time = tostring(v:int("executor.time", o.time, nil, 1)) -- Slurm reads minutes
  else
    out.time = v:string("executor.time", o.time, nil)
  end
  out.nodes = v:int("executor.nodes", o.nodes, 1, 1)
  out.tasks_per_node = v:int("executor.tasks_per_node", o.tasks_per_node, 1, 1)
  out.gpus_per_trial = v:int("executor.gpus_per_trial", o.gpus_per_trial, x.gpus_per_trial, 0)
  out.mode = v:string("executor.mode", o.mode, "allocation")
  if out.mode ~= "allocation" and out.mode ~= "job" then
    v:fail_at("executor.mode", "executor.mode must be \"allocation\" (steps in one allocation) "
              .. "or \"job\" (one job per trial), got %s", util.describe(o.mode))
  end
  out.extra = v:string_list("executor.extra", o.extra)
  out.cpus_per_trial = v:int("executor.cpus_per_trial", o.cpus_per_trial, 0, 1)
  if o.chain ~= nil and type(o.chain) ~= "boolean" then
    v:fail_at("executor.chain", "executor.chain must be true or false, got %s",
              util.describe(o.chain))
  end
  out.chain = o.chain and 1 or 0
  if out.cpus_per_trial % out.tasks_per_node ~= 0 then
    v:fail_at("executor.cpus_per_trial", "executor.cpus_per_trial (%d CPUs per node of a trial) "
              .. "must be a multiple of tasks_per_node (%d): each task gets an equal share",
              out.cpus_per_trial, out.tasks_per_node)
  end
  if o.cpus_per_trial ~= nil then
    for i, opt in ipairs(out.extra) do
      if opt:match("^%-%-cpus%-per%-task") or opt:match("^%-c") then
        v:fail_at("executor.cpus_per_trial", "executor.cpus_per_trial and executor.extra item %d "
                  .. "(%s) both set the CPUs per task: keep one", i, util.describe(opt))
      end
    end
  end
  out.srun = v:string_list("executor.srun", o.srun)
  for i, opt in ipairs(out.srun) do
    if opt:sub(1, 1) ~= "-" or opt == "--" then
      v:fail_at("executor.srun", "executor.srun item %d must be an srun option like "
                .. "\"--gpu-bind=closest\", got %s", i, util.describe(opt))
    end
    local name = opt:match("^([^=]+)")
    for _, own in ipairs(SRUN_OWN) do
      if name == own or (#own == 2 and opt:sub(1, 2) == own and #opt > 2) then
        v:fail_at("executor.srun", "executor.srun item %d: %s is set by flagtune for every step "
                  .. "(use nodes, tasks_per_node, gpus_per_trial or cpus_per_trial)", i,
                  util.describe(opt))
      end
    end
  end
  return out
end

return M
