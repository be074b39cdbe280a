-- search/halving.lua (and search/hill_climb.lua) through lua/host.lua: rung budgets, bracket
-- structure (members and steps per rung), promotion of the best, failures never promoted,
-- parallel asks, hyperband brackets, and resuming mid-rung from a history.

local space = require("space")
local host = require("host")
local halving = require("search.halving")
local tap = require("tap")
local test, eq = tap.test, tap.eq

-- 14 * 6 * 2 * 3 = 504 configurations.
local function synth_space()
  return space.new({ xla_gpu_thr = { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                     xla_gpu_lhs = { kind = "bool" } },
                   { MEM = { kind = "float", lo = 0.7, hi = 0.95, step = 0.05 },
                     PROTO = { kind = "choice", values = { "a", "b", "c" } } }, {}, {}, "exp.lua")
end

local function new_host(sp, options, seed, history, name)
  local exp = { path = "exp.lua", space = sp,
                strategy = { name = name or "halving", options = options or {}, line = 30 },
                budget = { trials = 100, hours = 0, steps = 45 } }
  return host.new(exp, seed or 1, history or {})
end

-- A deterministic landscape: OOM for large thresholds at low fractions; longer runs are
-- measured a little differently (noise shrinking with steps) so promotions must use the
-- rung's own values.
local function evaluate(sp, c, steps)
  local t = sp.by_name.xla_gpu_thr:encode(c.xla_gpu_thr)
  local f = sp.by_name.MEM:encode(c.MEM)
  if t > 0.7 and f < 0.5 then return "oom" end
  local v = 100 + 30 * (t - 0.5) ^ 2 + (c.xla_gpu_lhs and 0 or 8) + ({ a = 1, b = 0, c = 3 })[c.PROTO]
  return "ok", v + 1 / steps
end

-- Runs TRIALS sequentially; returns the trace { json, steps, repeat, status, value }.
local function run(h, sp, trials, history)
  local trace = {}
  for i = 1, trials do
    local p = h:ask(1)[1]
    if not p then break end
    local status, v = evaluate(sp, sp:decode_json(p.json), p.steps)
    trace[#trace + 1] = { json = p.json, steps = p.steps, status = status, value = v }
    local result = { status = status, value = v, steps = {}, steps_budget = p.steps,
                     number = i + #(history or {}) }
    h:tell(p.json, result)
    if history then history[#history + 1] = { config = sp:decode_json(p.json), status = status,
      value = v, steps = {}, steps_budget = p.steps, number = result.number } end
  end
  return trace
end

local function test_rung_steps()
  local function str(t) return table.concat(t, ",") end
  eq(str(halving.rung_steps(5, 45, 3)), "5,15,45", "5..45 by 3")
  eq(str(halving.rung_steps(5, 50, 3)), "5,16,50", "the top rung is max_steps")
  eq(str(halving.rung_steps(3, 100, 2)), "3,6,12,25,50,100", "eta 2")
  eq(str(halving.rung_steps(10, 10, 3)), "10", "one rung")
  local h = new_host(synth_space(), { base = "random", eta = 3, metric = { skip = 6 } })
  eq(str(h.strategy.o.steps), "15,45", "min_steps (7) leaves step times after the skip")
  -- the default eta: two rungs, min_steps and max_steps, 1 in max // min (at most 9) promoted
  h = new_host(synth_space(), { base = "random" })
  eq(str(h.strategy.o.steps), "5,45", "default rungs for 45 steps")
  eq(h.strategy.o.eta, 9, "default eta for 5..45")
  h = new_host(synth_space(), { base = "random", metric = { skip = 6 } })
  eq(str(h.strategy.o.steps), "7,45", "default rungs after a skip of 6")
  eq(h.strategy.o.eta, 6, "default eta for 7..45")
  h = new_host(synth_space(), { base = "random", min_steps = 1, max_steps = 1000 })
  eq(str(h.strategy.o.steps), "1,12,111,1000", "eta 9 at most")
  h = new_host(synth_space(), { base = "random", min_steps = 30 })
  eq(str(h.strategy.o.steps), "45", "min_steps above half of max_steps: one rung")
end

-- The default bracket (5 and 45 steps): 9 fresh at 5, the best ok one of them at 45.
local function test_default_bracket()
  local sp = synth_space()
  local h = new_host(sp, { base = { name = "random", options = {} } }, 3)
  local trace = run(h, sp, 21)
  for i = 1, 9 do eq(trace[i].steps, 5, "fresh configurations first") end
  local best
  for i = 1, 9 do
    if trace[i].status == "ok" and (not best or trace[i].value < best.value) then best = trace[i] end
  end
  eq(trace[10].json .. "@" .. trace[10].steps, best.json .. "@45", "the best of nine at 45")
  for i = 11, 19 do eq(trace[i].steps, 5, "then the next bracket") end
  eq(trace[20].steps, 45, "and its best")
end

-- One bracket of plain halving with min 5, max 45, eta 3: 9 at 5 steps, the best 3 at 15,
-- the best one at 45; the next bracket starts after it.
local function test_bracket_structure()
  local sp = synth_space()
  local h = new_host(sp, { base = { name = "random", options = {} }, min_steps = 5, eta = 3 }, 3)
  local trace = run(h, sp, 26)
  local per_steps = {}
  for i = 1, 13 do per_steps[trace[i].steps] = (per_steps[trace[i].steps] or 0) + 1 end
  eq(per_steps[5], 9, "rung 1 members")
  eq(per_steps[15], 3, "rung 2 members")
  eq(per_steps[45], 1, "rung 3 members")
  for i = 1, 9 do eq(trace[i].steps, 5, "fresh configurations first") end
  -- the promoted three are the best ok three of the nine, in order of value
  local ranked = {}
  for i = 1, 9 do
    if trace[i].status == "ok" then ranked[#ranked + 1] = trace[i] end
  end
  table.sort(ranked, function(a, b) return a.value < b.value end)
  for j = 1, 3 do eq(trace[9 + j].json, ranked[j].json, "promotion " .. j) end
  local best2 = trace[10].value < trace[11].value and trace[10] or trace[11]
  best2 = (trace[12].value < best2.value) and trace[12] or best2
  eq(trace[13].json, best2.json, "the best of rung 2 reaches the top")
  eq(trace[14].steps, 5, "then a new bracket")
end

-- Over many brackets: a failed configuration is never run again, every promotion is a
-- configuration that was ok one rung below, and fresh configurations never repeat.
local function test_failures_never_promoted()
  local sp = synth_space()
  local h = new_host(sp, { base = "random", min_steps = 5 }, 11)
  local trace = run(h, sp, 120)
  local last, fresh = {}, {}
  local failed = 0
  for _, t in ipairs(trace) do
    if t.steps == 5 then
      assert(not fresh[t.json], "fresh configuration twice: " .. t.json)
      fresh[t.json] = true
    else
      local prev = last[t.json]
      assert(prev, "promoted without a lower rung: " .. t.json)
      eq(prev.status, "ok", "promoted after " .. prev.status)
      assert(prev.steps < t.steps, "promotions go up")
    end
    if t.status ~= "ok" then failed = failed + 1 end
    last[t.json] = t
  end
  assert(#trace == 120, "ran " .. #trace)
  assert(failed >= 3, "the landscape has failures: " .. failed)
end

-- With trials running (nothing told), asks open new brackets instead of waiting, and no
-- fresh configuration is proposed twice.
local function test_parallel_asks()
  local sp = synth_space()
  local h = new_host(sp, { base = "tpe", min_steps = 5 }, 2)
  local seen, n = {}, 0
  for _ = 1, 5 do
    for _, p in ipairs(h:ask(4)) do
      assert(not seen[p.json], "twice: " .. p.json)
      seen[p.json], n = true, n + 1
      eq(p.steps, 5, "fresh configurations at the first rung")
    end
  end
  eq(n, 20, "ask(4) five times")
  assert(#h.strategy.brackets >= 3, "brackets opened while waiting")
end

-- Hyperband: brackets start at rungs 1, 2, 3 in turn with 9, 5 and 3 members.
local function test_hyperband()
  local sp = synth_space()
  local h = new_host(sp, { base = "random", min_steps = 5, eta = 3, hyperband = true }, 4)
  local trace = run(h, sp, 30)
  local b = h.strategy.brackets
  eq(b[1].start, 1, "bracket 1 rung"); eq(b[1].quota, 9, "bracket 1 size")
  eq(b[2].start, 2, "bracket 2 rung"); eq(b[2].quota, 5, "bracket 2 size")
  eq(b[3].start, 3, "bracket 3 rung"); eq(b[3].quota, 3, "bracket 3 size")
  eq(trace[14].steps, 15, "bracket 2 starts at 15 steps")
  eq(trace[19].steps, 45, "its survivor at 45")
  eq(trace[20].steps, 45, "bracket 3 starts at the top")
end

-- Stopping mid-rung and resuming from the history reproduces the rest of the schedule
-- (grid base: its order is fixed, so even the fresh configurations must match), including
-- a member that was lost and is re-run by the orchestrator.
local function test_resume(options, cut)
  local sp = synth_space()
  local full = run(new_host(sp, options, 5), sp, 40)
  local history = {}
  run(new_host(sp, options, 5), sp, cut, history)
  local lost = history[#history]
  lost.status, lost.value = "lost", nil
  local h = new_host(sp, options, 5, history)
  -- the orchestrator re-runs the lost trial with its step budget and tells the result
  local status, v = evaluate(sp, lost.config, lost.steps_budget)
  h:tell(sp:key(lost.config), { status = status, value = v, steps = {},
                                steps_budget = lost.steps_budget })
  local rest = run(h, sp, 40 - cut)
  for i, t in ipairs(rest) do
    local want = full[cut + i]
    eq(t.json .. "@" .. t.steps, want.json .. "@" .. want.steps, "resumed trial " .. (cut + i))
  end
end

-- A base strategy file: grid{}'s order, with an estimate() sure of itself (sd 0) that ranks
-- configurations the opposite way to the landscape (mean -10 log(value)).
-- A strategy file holding SOURCE; returns its path.
local function base_file(source)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  return path
end

local function estimating_base()
  return base_file([[
local grid = require("search.grid")
local M = {}
function M.new(space, options, history, rng)
  local g = grid.new(space, options, history, rng)
  local w = setmetatable({}, { __index = function(_, k)
    local v = g[k]
    if type(v) == "function" then return function(_, ...) return v(g, ...) end end
    return v
  end })
  function w:estimate(configs)
    local out = {}
    for i, c in ipairs(configs) do
      local t = space.by_name.xla_gpu_thr:encode(c.xla_gpu_thr)
      local v = 100 + 30 * (t - 0.5) ^ 2 + (c.xla_gpu_lhs and 0 or 8)
        + ({ a = 1, b = 0, c = 3 })[c.PROTO]
      out[i] = { mean = -10 * math.log(v), sd = 0 }
    end
    return out
  end
  return w
end
return M
]])
end

local function near(a, b, what)
  assert(math.abs(a - b) < 1e-9, string.format("%s: got %.12g, want %.12g", what, a, b))
end

-- Promotion is by the rung's measured value, whatever the base's estimate() says (a base
-- sure of the opposite order changes nothing).
local function test_promote_by_value()
  local sp = synth_space()
  local path = estimating_base()
  local h = new_host(sp, { base = { path = path }, min_steps = 5, eta = 3 }, 3)
  local trace = run(h, sp, 12)
  local ranked = {}
  for i = 1, 9 do
    if trace[i].status == "ok" then ranked[#ranked + 1] = trace[i] end
  end
  table.sort(ranked, function(a, b) return a.value < b.value end)
  assert(#ranked >= 4, "enough ok members: " .. #ranked)
  -- (values, not configurations: MEM does not change the value, so ties are possible)
  for j = 1, 3 do near(trace[9 + j].value - 1 / 15, ranked[j].value - 1 / 5, "by value " .. j) end
  os.remove(path)
end

local function test_local()
  local sp = synth_space()
  local h = new_host(sp, { startup = 4 }, 1, {}, "hill_climb")
  local seen, best = {}, math.huge
  for i = 1, 60 do
    local p = h:ask(1)[1]
    if not p then break end
    assert(not seen[p.json], "twice: " .. p.json)
    seen[p.json] = true
    local status, v = evaluate(sp, sp:decode_json(p.json), 45)
    if v and v < best then best = v end
    h:tell(p.json, { status = status, value = v, steps = {}, number = i })
  end
  assert(best < 101, "the hill climber gets close to the optimum (100), got " .. best)
end

-- Runs TRIALS sequentially, each told what it cost: a start of START steps of STEP ms plus its
-- steps; returns the trace.
local function run_costed(h, sp, trials, start, step)
  local trace = {}
  for i = 1, trials do
    local p = h:ask(1)[1]
    if not p then break end
    local status, v = evaluate(sp, sp:decode_json(p.json), p.steps)
    local times = {}
    for k = 1, p.steps do times[k] = step end
    trace[#trace + 1] = { json = p.json, steps = p.steps, status = status, value = v }
    h:tell(p.json, { status = status, value = v, steps = times, steps_budget = p.steps,
                     number = i, wall_ms = (start + p.steps) * step, step_ms = step })
  end
  return trace
end

local function count_steps(trace, steps)
  local n = 0
  for _, t in ipairs(trace) do if t.steps == steps then n = n + 1 end end
  return n
end

-- A start that costs many steps: after the first measured trial no more short rungs (the open
-- bracket promotes its one member), then every proposal is a fresh configuration at 45 steps.
local function test_full_fidelity_measured()
  local sp = synth_space()
  local h = new_host(sp, { base = "random" }, 4) -- rungs 5 and 45
  local trace = run_costed(h, sp, 12, 240, 2.0)
  eq(trace[1].steps, 5, "the cost is unknown before the first trial: it halves")
  eq(trace[2].json, trace[1].json, "the open bracket promotes its member")
  eq(trace[2].steps, 45, "to the top rung")
  local seen = { [trace[1].json] = true }
  for i = 3, #trace do
    eq(trace[i].steps, 45, "full fidelity, trial " .. i)
    assert(not seen[trace[i].json], "a fresh configuration: " .. trace[i].json)
    seen[trace[i].json] = true
  end
  eq(#trace, 12, "it keeps proposing")
end

-- A cheap start halves as before: the default bracket, 9 at 5 steps, the best at 45.
local function test_cheap_start_halves()
  local sp = synth_space()
  local trace = run_costed(new_host(sp, { base = "random" }, 4), sp, 80, 2, 2.0)
  eq(count_steps(trace, 5), 72, "eight brackets of 9 short trials (past the window of 64)")
  eq(count_steps(trace, 45), 8, "and their best at 45")
end

-- compile_steps = N gives the cost: full fidelity from the first trial; 20 (25/65 < 0.5)
-- halves.
local function test_compile_steps_option()
  local sp = synth_space()
  local trace = run(new_host(sp, { base = "random", compile_steps = 60 }, 5), sp, 8)
  eq(count_steps(trace, 45), 8, "every trial at 45 steps")
  trace = run(new_host(sp, { base = "random", compile_steps = 20 }, 5), sp, 10)
  eq(count_steps(trace, 5), 9, "a cheap start halves")
  -- a resumed full-fidelity sweep goes on at full fidelity, proposing nothing twice
  local history = {}
  local first = run(new_host(sp, { base = "random", compile_steps = 60 }, 5), sp, 6, history)
  local again = run(new_host(sp, { base = "random", compile_steps = 60 }, 5, history), sp, 4)
  local seen = {}
  for _, t in ipairs(first) do seen[t.json] = true end
  for _, t in ipairs(again) do
    eq(t.steps, 45, "resumed at full fidelity")
    assert(not seen[t.json], "not proposed twice: " .. t.json)
  end
end

-- A base strategy file: random{}'s proposals, every tell recorded in HALVING_TOLD.
local function recording_base()
  return base_file([[
local random = require("search.random")
local M = {}
function M.new(space, options, history, rng)
  local r = random.new(space, options, history, rng)
  HALVING_TOLD_HISTORY = history
  return { ask = function(_, n) return r:ask(n) end,
           tell = function(_, config, result) HALVING_TOLD[#HALVING_TOLD + 1] = result end }
end
return M
]])
end

-- Step times STEPS: the skipped two, then the given ones.
local function times(...)
  local t = { 50, 50 }
  for _, v in ipairs({ ... }) do t[#t + 1] = v end
  return t
end

-- At full fidelity (a start of 60 steps) the rungs move into the trial: the first proposal
-- runs whole (no value at step 5 is known), then each carries rung = { steps = 5, value = the
-- best value at step 5 so far, the (n // eta)-th once eta are known }; a trial pruned there is
-- told to the base as the ok 5-step run it is, and so is the history of a resumed sweep.
local function test_in_trial_rungs()
  local sp = synth_space()
  local path = recording_base()
  HALVING_TOLD = {}
  local opts = { base = { path = path }, compile_steps = 60, eta = 3, metric = { skip = 2 } }
  local h = new_host(sp, opts, 6)
  local p = h:ask(1)[1]
  eq(p.steps, 45, "full fidelity")
  eq(p.rung_steps, 0, "no rung before a value at step 5")
  local full = times(12, 10, 11)
  for _ = 6, 45 do full[#full + 1] = 11 end
  h:tell(p.json, { status = "ok", value = 11, steps = full, steps_budget = 45, number = 1 })
  local history = { { config = sp:decode_json(p.json), status = "ok", value = 11, steps = full,
                      steps_budget = 45, number = 1 } }
  p = h:ask(1)[1]
  eq(p.steps, 45, "still the whole trial")
  eq(p.rung_steps, 5, "the rung: step 5")
  eq(p.rung_value, 11, "the bar: trial 1's median of steps 3-5")
  h:tell(p.json, { status = "pruned", steps = times(14, 13, 15), steps_budget = 45, number = 2 })
  history[2] = { config = sp:decode_json(p.json), status = "pruned", steps = times(14, 13, 15),
                 steps_budget = 45, number = 2 }
  eq(HALVING_TOLD[2].status, "ok", "the pruned trial is told as an ok short run")
  eq(HALVING_TOLD[2].value, 14, "its median over steps 3-5")
  eq(HALVING_TOLD[2].steps_budget, 45, "the rest as it came")
  eq(h:ask(1)[1].rung_value, 11, "2 values, fewer than eta: the best")
  for i, v in ipairs({ 9, 20, 8, 30 }) do
    h:tell(h:ask(1)[1].json, { status = "pruned", steps = times(v, v, v), steps_budget = 45,
                               number = 2 + i })
  end
  eq(h:ask(1)[1].rung_value, 9, "6 values (8, 9, 11, 14, 20, 30), eta 3: the second best")
  h:tell(h:ask(1)[1].json, { status = "oom", steps = {}, steps_budget = 45, number = 7 })
  eq(h:ask(1)[1].rung_value, 9, "a failure has no value at the rung")
  -- a resumed sweep: the base's history has the pruned trial as an ok run, the bar is rebuilt
  HALVING_TOLD = {}
  h = new_host(sp, opts, 6, history)
  eq(HALVING_TOLD_HISTORY[2].status, "ok", "the history's pruned trial, as the base is told it")
  eq(HALVING_TOLD_HISTORY[2].value, 14, "with its value")
  eq(h:ask(1)[1].rung_value, 11, "the bar from the history")
  -- with two rungs only (min_steps = max_steps) nothing to prune at
  h = new_host(sp, { base = "random", compile_steps = 60, min_steps = 45 }, 6)
  eq(h:ask(1)[1].rung_steps, 0, "one rung: no in-trial rung")
end

local function test_options()
  local sp = synth_space()
  local ok, err = pcall(new_host, sp, { eta = 1 })
  assert(not ok and err:find("exp%.lua:30: strategy 'halving': eta must be"), err)
  ok, err = pcall(new_host, sp, { min_steps = 50 })
  assert(not ok and err:find("min_steps %(50%) is above max_steps %(45%)"), err)
  ok, err = pcall(new_host, sp, { base = 3 })
  assert(not ok and err:find("base must be a strategy"), err)
  ok, err = pcall(new_host, sp, { compile_steps = -1 })
  assert(not ok and err:find("compile_steps must be a number of steps >= 0"), err)
  ok, err = pcall(new_host, sp, { rungs = 3 })
  assert(not ok and err:find("unknown option 'rungs'"), err)
  -- promote = "estimate" was removed: named, not ignored nor a bare "unknown option"
  for _, v in ipairs({ "estimate", "value" }) do
    ok, err = pcall(new_host, sp, { promote = v })
    assert(not ok and err:find("^exp%.lua:30: strategy 'halving': option 'promote' was removed"),
      err)
  end
end

test("rung_steps", test_rung_steps)
test("bracket_structure", test_bracket_structure)
test("failures_never_promoted", test_failures_never_promoted)
test("parallel_asks", test_parallel_asks)
test("hyperband", test_hyperband)
test("default bracket", test_default_bracket)
test("resume after 11 trials", test_resume, { base = "grid", min_steps = 5, eta = 3 }, 11)
test("resume after 20 trials", test_resume, { base = "grid", min_steps = 5, eta = 3 }, 20)
test("resume after 15 trials, default rungs", test_resume, { base = "grid" }, 15)
test("resume hyperband after 16 trials", test_resume,
  { base = "grid", min_steps = 5, eta = 3, hyperband = true }, 16)
test("promote by value, not the base's estimate", test_promote_by_value)
test("hill_climb", test_local)
test("full fidelity when a start costs many steps", test_full_fidelity_measured)
test("a cheap start halves", test_cheap_start_halves)
test("compile_steps", test_compile_steps_option)
test("in-trial rungs at full fidelity", test_in_trial_rungs)
test("options", test_options)
