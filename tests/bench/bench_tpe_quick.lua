-- A quick, in-process search-quality harness for tuning a strategy's knobs on generated
-- landscapes (flagtune-sim --landscape gen:SEED): the strategy runs through lua/host.lua in
-- this process, each configuration is valued by `flagtune-sim --true-value` (cached), with
-- Gaussian noise added here (H_NOISE per full run; with H_STEP_BUDGET, H_STEP_NOISE per step
-- over the steps past the 2 skipped), and the score is the true regret of the best noisy
-- observation at the full 45 steps. Not the benchmark (tests/bench/bench_search.py runs real
-- sweeps); a way to compare knobs in seconds per seed. Tune on the training seeds only.
-- The strategy's budget.trials is H_TRIALS, so its start is sized from it: H_TRIALS=20
-- (standing for a 25-trial sweep) starts with 6 where a real 25-trial sweep, given 25, starts
-- with 8 (pass H_OPTS='{startup=8}' to run that start).
--   H_SEEDS=1,2,3 H_TRIALS=25,50 H_STRAT=tpe H_OPTS='{local_share=0.5}' H_REPS=1 \
--   H_NOISE=0.003 [H_STEP_BUDGET=1125 H_STEP_NOISE=0.02] [H_SIM=build/flagtune-sim] [H_CURVE=1] \
--     build/tests/luatest tests/bench/bench_tpe_quick.lua
-- H_REAL=1 (for halving{}, and tpe{} to compare with): every trial is a real flagtune-sim run
-- at the proposal's step budget (its JSON steps, the median past the 2 skipped, the sim's own
-- per-process and per-step noise, FLAGTUNE_TRIAL the trial number), H_NOISE and H_STEP_NOISE
-- unused; the winner is the configuration with the lowest mean of its full-step runs (a sweep
-- without confirmation), and "found" the truly best configuration run at the full budget.
-- H_SIM_NOISE=0 runs H_REAL without the sim's noise (the search alone, same proposals logic).
-- Each budget prints its runs' regrets (seed by seed, H_REPS runs each) and, with H_REAL, a
-- "found T=N [...]" line of the same runs' found regrets, for pairing two variants run by run.
-- H_ANALYSE=1: per run, the parameters the found best sets unlike the optimum (the core marked
-- "*") and what setting each alone to the optimum's value gains, summed core / free.
-- H_CEIL=1: not the strategy but coordinate descent on exact values (a reference; below).
-- H_TRIALS counts search trials (a real 50-trial sweep searches 45: a baseline, 4 confirming).
--   H_REAL=1 H_SEEDS=1-40 H_TRIALS=45 H_STRAT=halving H_OPTS='{min_steps=5}' \
--     build/tests/luatest tests/bench/bench_tpe_quick.lua
package.path = "tests/lua/?.lua;tests/bench/?.lua;" .. package.path
local host = require("host")
local rng = require("rng")
local gen = require("genspace")
local SIM, sh, load_space, render = gen.SIM, gen.sh, gen.load_space, gen.render

local function evaluate(seed, order, c, cache, sp)
  local key = sp:key(c)
  if cache[key] then return cache[key] end
  local xf, env = gen.settings(order, c)
  local out = sh("env XLA_FLAGS='" .. table.concat(xf, " ") .. "' " .. table.concat(env, " ") .. " " .. SIM .. " --landscape gen:" .. seed .. " --true-value")
  local r
  if out:match("^oom") then r = { status = "oom" }
  elseif out:match("^invalid") then r = { status = "invalid" }
  else r = { status = "ok", value = tonumber(out) } end
  cache[key] = r
  return r
end

-- H_REAL: one real measurement of C at STEPS steps (trial number TRIAL): the median of the
-- sim's step times past the 2 skipped; nil for a failure.
local REAL = os.getenv("H_REAL") == "1"
-- The generated family's core (docs/SIMULATOR.md, gen:SEED): H_ANALYSE marks them "*".
local CORE = {}
for n in ("xla_gpu_enable_latency_hiding_scheduler XLA_PYTHON_CLIENT_MEM_FRACTION " ..
  "xla_gpu_all_gather_combine_threshold_bytes xla_gpu_reduce_scatter_combine_threshold_bytes " ..
  "xla_gpu_all_reduce_combine_threshold_bytes xla_gpu_enable_pipelined_all_gather " ..
  "xla_gpu_enable_pipelined_reduce_scatter xla_gpu_enable_pipelined_all_reduce " ..
  "xla_gpu_enable_while_loop_double_buffering xla_gpu_memory_limit_slop_factor " ..
  "NCCL_NVLS_ENABLE"):gmatch("%S+") do CORE[n] = true end
-- H_SIM_NOISE=PCT: the sim's --noise for H_REAL's runs (0: noise-free; unset: the sim's 100)
local SIM_NOISE = os.getenv("H_SIM_NOISE") and (" --noise " .. os.getenv("H_SIM_NOISE")) or ""
local function measure(seed, tseed, order, c, steps, trial)
  local xf, env = gen.settings(order, c)
  local out = sh("env XLA_FLAGS='" .. table.concat(xf, " ") .. "' " .. table.concat(env, " ") ..
    " FLAGTUNE_TRIAL=" .. trial .. " " .. SIM .. " --landscape gen:" .. seed .. " --steps " ..
    steps .. " --time-scale 0 --seed " .. tseed .. SIM_NOISE .. " --format json 2>/dev/null")
  local xs = {}
  local k = 0
  for v in out:gmatch('"step_time_ms": ([%d%.]+)') do
    k = k + 1
    if k > 2 then xs[#xs + 1] = tonumber(v) end
  end
  table.sort(xs)
  local n = #xs
  if n == 0 then return nil end
  return n % 2 == 1 and xs[(n + 1) // 2] or (xs[n // 2] + xs[n // 2 + 1]) / 2
end

-- H_CEIL=1: a reference instead of the strategy: coordinate descent on the EXACT values
-- (no noise) for H_TRIALS evaluations: from a random configuration that runs, each parameter
-- in a random order gets all its other levels tried, one evaluation each, and keeps the best;
-- around again while evaluations are left. Returns the best exact value and configuration.
local function coordinate_descent(seed, rep, order, sp, cache, T)
  local r = rng.new(seed * 7 + rep)
  local n, c, v = 0, nil, nil
  while n < T and not v do
    c = {}
    for _, p in ipairs(sp.params) do c[p.name] = p:value(r:int(1, p.n)) end
    n = n + 1
    v = evaluate(seed, order, c, cache, sp).value
  end
  local improved = true
  while n < T and improved do
    improved = false
    local dims = {}
    for d = 1, #sp.params do dims[d] = d end
    r:shuffle(dims)
    for _, d in ipairs(dims) do
      local p = sp.params[d]
      local here = p:index(c[p.name])
      local best_i = here
      for i = 1, p.n do
        if i ~= here and n < T then
          local c2 = {}
          for k, x in pairs(c) do c2[k] = x end
          c2[p.name] = p:value(i)
          n = n + 1
          local v2 = evaluate(seed, order, c2, cache, sp).value
          if v2 and v2 < v then v, best_i, improved = v2, i, true end
        end
      end
      c[p.name] = p:value(best_i)
    end
  end
  return v or math.huge, v and c
end
local CEIL = os.getenv("H_CEIL") == "1"

local seeds = {}
for a, b in (os.getenv("H_SEEDS") or "1,2,3,4,5,6"):gmatch("(%d+)%-?(%d*)") do
  for x = tonumber(a), tonumber(b ~= "" and b or a) do seeds[#seeds + 1] = x end
end
local budgets = {}
for s in (os.getenv("H_TRIALS") or "50"):gmatch("%d+") do budgets[#budgets + 1] = tonumber(s) end
local strat = os.getenv("H_STRAT") or "tpe"
local opts = load("return " .. (os.getenv("H_OPTS") or "{}"))()
local noise = tonumber(os.getenv("H_NOISE") or "0.015")
local reps = tonumber(os.getenv("H_REPS") or "1")
local spaces = {}
for _, T0 in ipairs(budgets) do
  local T = T0
  STEPS = 0
  -- H_CURVE=1: the median and mean true regret of the best observation after each trial
  CURVE = os.getenv("H_CURVE") and {} or nil
  local regrets, ooms, founds = {}, {}, {}
  for _, seed in ipairs(seeds) do
    spaces[seed] = spaces[seed] or { load_space(seed) }
    local sp, order, opt = table.unpack(spaces[seed])
    spaces[seed].cache = spaces[seed].cache or {}
    for rep = 1, reps do
    local h = host.new({ path = "h.lua", space = sp, strategy = { name = strat, options = opts, line = 1 },
                         budget = { trials = T, hours = 0, steps = 45 } }, seed * 7 + rep, {})
    local nr = rng.new(seed + 100 * rep)
    local best, best_c, oom = math.huge, nil, 0
    local full = {} -- H_REAL: key -> { c, sum, n } of full-step runs
    local MAXS, step_noise, steps_used = 45, tonumber(os.getenv("H_STEP_NOISE") or "0.02"), 0
    local SB = tonumber(os.getenv("H_STEP_BUDGET") or "0") -- stop at this many steps (halving)
    local i = 0
    if CEIL then best, best_c = coordinate_descent(seed, rep, order, sp, spaces[seed].cache, T); i = T + 1 end
    while not CEIL do
      i = i + 1
      if SB > 0 then if steps_used >= SB then break end elseif i > T then break end
      local p = h:ask(1)[1]
      if not p then break end
      local c = sp:decode_json(p.json)
      local r = evaluate(seed, order, c, spaces[seed].cache, sp)
      local s = (p.steps and p.steps > 0) and p.steps or MAXS
      steps_used = steps_used + s
      local v
      if REAL then
        v = r.value and measure(seed, seed * 7 + rep, order, c, s, i)
        if v and s >= MAXS then
          local k = sp:key(c)
          local f = full[k] or { c = c, sum = 0, n = 0 }
          full[k], f.sum, f.n = f, f.sum + v, f.n + 1
          best, best_c = math.huge, nil
          for _, g in pairs(full) do
            if g.sum / g.n < best or (g.sum / g.n == best and sp:key(g.c) < sp:key(best_c)) then
              best, best_c = g.sum / g.n, g.c
            end
          end
        end
      elseif r.value then
        if SB > 0 then v = r.value * (1 + step_noise / math.sqrt(math.max(1, s - 2)) * nr:normal())
        else v = r.value * (1 + noise * nr:normal()) end
      end
      if r.status ~= "ok" then oom = oom + 1 end
      if not REAL and v and s >= MAXS and v < best then best, best_c = v, c end
      if CURVE then -- the true regret of the best observation so far, after trial i
        local tv = best_c and evaluate(seed, order, best_c, spaces[seed].cache, sp).value
        CURVE[i] = CURVE[i] or {}
        table.insert(CURVE[i], tv and (tv / opt - 1) * 100 or math.huge)
      end
      local st = {}
      for k = 1, s do st[k] = v or 0 end
      h:tell(p.json, { status = r.status, value = v, steps = st, steps_budget = s, number = i })
    end
    T = i - 1
    local tv = best_c and evaluate(seed, order, best_c, spaces[seed].cache, sp).value or math.huge
    if os.getenv("H_ANALYSE") and best_c then
      -- Where the regret comes from: each parameter the optimum sets (the ones that matter)
      -- that the found best gets wrong, and what fixing it alone gains (or OOM).
      local o = sh(SIM .. " --landscape gen:" .. seed .. " --print-optimum")
      local want = {}
      for name, val in o:gmatch("%-%-([%w_]+)=(%S+)") do want[name] = val end
      for name, val in o:gmatch("\n([A-Z][A-Z0-9_]+)=(%S+)") do want[name] = val end
      local parts, wrong, gain = {}, { 0, 0 }, { 0, 0 }
      for _, q in ipairs(order) do
        local w = want[q.name]
        if w and render(best_c[q.name]) ~= w then
          local c2 = {}
          for k, v in pairs(best_c) do c2[k] = v end
          c2[q.name] = sp:decode_json(sp:encode_json(c2)) and (tonumber(w) or (w == "true" and true) or (w == "false" and false) or w)
          if math.type(c2[q.name]) == "float" and math.tointeger(c2[q.name]) and q.kind ~= "float" then c2[q.name] = math.tointeger(c2[q.name]) end
          local r2 = evaluate(seed, order, c2, spaces[seed].cache, sp)
          local core = CORE[q.name] and 1 or 2
          wrong[core] = wrong[core] + 1
          if r2.value and r2.value < tv then gain[core] = gain[core] + (1 - r2.value / tv) * 100 end
          parts[#parts + 1] = string.format("%s%s(%s)%s", core == 1 and "*" or "", q.name:gsub("^xla_gpu_", ""):sub(1, 22), q.kind,
            r2.value and string.format("%+.1f", (r2.value / tv - 1) * 100) or r2.status)
        end
      end
      print(string.format("seed %d n %d regret %.1f%% wrong %d core %d free %d fixgain core %.2f free %.2f: %s", seed, #order, (tv / opt - 1) * 100, #parts,
        wrong[1], wrong[2], gain[1], gain[2], table.concat(parts, " ")))
    end
    regrets[#regrets + 1] = (tv / opt - 1) * 100
    local fv = math.huge
    for _, g in pairs(full) do
      fv = math.min(fv, evaluate(seed, order, g.c, spaces[seed].cache, sp).value)
    end
    founds[#founds + 1] = REAL and (fv / opt - 1) * 100 or regrets[#regrets]
    ooms[#ooms + 1] = oom / T * 100
    STEPS = (STEPS or 0) + steps_used
    end
  end
  local sorted = {}
  for i, r in ipairs(regrets) do sorted[i] = r end
  table.sort(sorted)
  local mo = 0; for _, o in ipairs(ooms) do mo = mo + o end
  local per = {}
  for i, r in ipairs(regrets) do per[i] = string.format("%.2f", r) end
  print(string.format("steps/run %.0f", STEPS / #regrets))
  for i, rs in ipairs(CURVE or {}) do
    table.sort(rs)
    local fin, sum = 0, 0
    for _, r in ipairs(rs) do if r < math.huge then fin, sum = fin + 1, sum + r end end
    print(string.format("curve %s trial %d median %.2f%% mean %.2f%% (%d of %d with a result)",
      strat, i, rs[(#rs + 1) // 2], fin > 0 and sum / fin or 0 / 0, fin, #rs))
  end
  local fs = table.move(founds, 1, #founds, 1, {})
  table.sort(fs)
  print(string.format("%s %s T=%d median %.2f%% p90 %.2f%% worst %.2f%% mean %.2f%% found %.2f%% oom %.1f%%  [%s]", strat, os.getenv("H_OPTS") or "{}", T,
    sorted[(#sorted + 1) // 2], sorted[math.max(1, math.ceil(0.9 * #sorted))], sorted[#sorted], (function() local s=0 for _,r in ipairs(sorted) do s=s+r end return s/#sorted end)(), fs[(#fs + 1) // 2], mo / #ooms, table.concat(per, " ")))
  if REAL then
    local pf = {}
    for i, f in ipairs(founds) do pf[i] = string.format("%.2f", f) end
    print(string.format("found T=%d [%s]", T, table.concat(pf, " ")))
  end
  io.stdout:flush()
end
