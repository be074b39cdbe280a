-- A quick, in-process harness for choosing the winner under noise (issue 12): a strategy runs
-- through lua/host.lua in this process; every trial is a real flagtune-sim run (its JSON steps,
-- the median past the 2 skipped, the sim's seeded per-process and per-step noise, as a sweep
-- measures it); then several confirmation policies are applied to the SAME search and scored
-- by the true regret of the winner each exports. Not the benchmark (bench_search.py runs
-- real sweeps); a paired comparison of choice rules in seconds per landscape. Training only.
--   H_SEEDS=1-40 H_TRIALS=25,50 H_REPS=2 H_STRAT=tpe [H_NOISEPCT=100] [H_VARIANTS=1] \
--     [H_Z=1,2] [H_ADAPT=3x2,5x1] [H_NOBASE=1] [H_DUMP=runs.txt] build/tests/luatest \
--     tests/bench/bench_confirm_quick.lua
-- H_Z: the adaptive confirmation of src/sweep/confirm.c at each z (its give-back is exact: the search
-- is the same strategy with the same budget, so giving K trials back is its prefix K longer);
-- H_NOBASE: also z = 2 without the baseline's re-run. H_DUMP: one line a run and policy (trials,
-- landscape, tuner seed, policy, regret %, found %) for paired comparisons. C in the output:
-- confirmation trials used, the mean over the runs.
package.path = "tests/lua/?.lua;tests/bench/?.lua;" .. package.path
local host = require("host")
local gen = require("genspace")
local SIM, sh, load_space = gen.SIM, gen.sh, gen.load_space
local STEPS, SKIP = 45, 2
local NOISEPCT = os.getenv("H_NOISEPCT") or "100" -- the sim's noise, percent of the landscape's

local function cmdline(seed, order, c)
  local xf, env = gen.settings(order, c)
  return "env XLA_FLAGS='" .. table.concat(xf, " ") .. "' " .. table.concat(env, " ") .. " "
end

local truth = {}
local function true_value(seed, order, c, sp)
  local key = seed .. sp:key(c)
  if truth[key] == nil then
    local out = sh(cmdline(seed, order, c) .. SIM .. " --landscape gen:" .. seed .. " --true-value")
    truth[key] = tonumber(out:match("^[%d%.]+")) or false
  end
  return truth[key]
end

-- One noisy measurement: the sim's steps at trial number TRIAL, median past SKIP.
local function measure(seed, tseed, order, c, sp, trial)
  if not true_value(seed, order, c, sp) then return nil end
  local out = sh(cmdline(seed, order, c) .. "FLAGTUNE_TRIAL=" .. trial .. " " .. SIM ..
    " --landscape gen:" .. seed .. " --steps " .. STEPS .. " --time-scale 0 --noise " .. NOISEPCT ..
    " --seed " .. tseed ..
    " --format json 2>/dev/null")
  local st = {}
  for v in out:gmatch('"step_time_ms": ([%d%.]+)') do st[#st + 1] = tonumber(v) end
  local xs = {}
  for i = SKIP + 1, #st do xs[#xs + 1] = st[i] end
  table.sort(xs)
  local n = #xs
  if n == 0 then return nil end
  return n % 2 == 1 and xs[(n + 1) // 2] or (xs[n // 2] + xs[n // 2 + 1]) / 2
end

local function median(xs)
  local s = table.move(xs, 1, #xs, 1, {})
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

local function ranges(spec)
  local out = {}
  for a, b in spec:gmatch("(%d+)%-?(%d*)") do
    for s = tonumber(a), tonumber(b ~= "" and b or a) do out[#out + 1] = s end
  end
  return out
end

-- ---- policies: each gets the search (prefix of S trials), the model's estimates at S, and
-- conf(c, r), the r-th confirmation measurement of config key c; returns the winner key ----
local TAU0 = tonumber(os.getenv("H_TAU0") or "0.015") -- the old prior's sd (log), 2 pseudo-df
local VFLOOR = tonumber(os.getenv("H_VFLOOR") or "0.25")

-- The pooled within-configuration sum of squares of the log values, and its degrees of freedom.
local function within(pairs_)
  local ss, df = 0, 0
  for _, vs in ipairs(pairs_) do
    if #vs >= 2 then
      local m = 0
      for _, v in ipairs(vs) do m = m + math.log(v) end
      m = m / #vs
      for _, v in ipairs(vs) do ss = ss + (math.log(v) - m) ^ 2 end
      df = df + #vs - 1
    end
  end
  return ss, df
end

-- The noise variance of one measurement as src/sweep/confirm.c's confirm_noise has it: the posterior
-- mean of sigma^2 under a log-uniform prior on sigma from 0.05 % to 5 % (TAU0 a number: the old
-- rule, a prior of TAU0 worth 2 degrees of freedom, for comparison).
local function noise_var(pairs_, tau0)
  local ss, df = within(pairs_)
  if tau0 then return (2 * tau0 * tau0 + ss) / (2 + df) end
  return ft.noise_posterior(ss, df) -- src/sweep/confirm.c's confirm_noise_posterior
end

-- Posterior mean of log value: measurements VS (each variance TAU2) and the model prior.
local function shrunk(vs, est, tau2, vfloor)
  local n, m = #vs, 0
  for _, v in ipairs(vs) do m = m + math.log(v) end
  m = m / n
  if not est then return m end
  local V = math.max(est.sd ^ 2 - tau2, (vfloor or VFLOOR) * tau2)
  local a, b = n / tau2, 1 / V
  return (a * m + b * est.mean) / (a + b)
end

local POLICIES = {}
local function policy(name, f) POLICIES[#POLICIES + 1] = { name = name, f = f } end

-- select: "raw" | "shrink"; win: "median" | "shrink"; top, C = confirm trials
local function make(sel, win, top, reps, tau0, vfloor)
  return function(P)
    local S = P.S
    local base_vals = { P.base }
    local ok = {}
    for i = 1, S do
      local t = P.trials[i]
      if t.value then ok[#ok + 1] = t end
    end
    local tau2 = noise_var({}, tau0)
    local score = {}
    for _, t in ipairs(ok) do
      score[t.key] = sel == "raw" and math.log(t.value) or shrunk({ t.value }, P.est[S][t.key], tau2, vfloor)
    end
    table.sort(ok, function(a, b) return score[a.key] < score[b.key] end)
    local cands = {}
    for k = 1, math.min(top, #ok) do cands[k] = ok[k] end
    local vals = {}
    for _, t in ipairs(cands) do vals[t.key] = { t.value } end
    for r = 1, reps do
      base_vals[#base_vals + 1] = P.conf("{}", r)
      for _, t in ipairs(cands) do
        local v = P.conf(t.key, r)
        if v then table.insert(vals[t.key], v) end
      end
    end
    local groups = { base_vals }
    for _, t in ipairs(cands) do groups[#groups + 1] = vals[t.key] end
    tau2 = noise_var(groups, tau0)
    local best, bk
    for _, t in ipairs(cands) do
      local s = win == "median" and math.log(median(vals[t.key])) or
        shrunk(vals[t.key], P.est[S][t.key], tau2, vfloor)
      if not best or s < best then best, bk = s, t.key end
    end
    return bk
  end
end

-- The adaptive confirmation of src/sweep/confirm.c (confirm_plan with a z): of the TOP candidates by
-- shrunk estimate, the leader and those whose re-run can still change the answer (the gap to
-- the leader under Z times the sd by which REPS re-runs of both can move it); the trials not
-- needed go back to the search (a longer prefix: the same search went on), then the plan is
-- made again, until it needs every trial left. BASE: the baseline is re-run (REPS times).
-- Returns the winner and the search trials used.
local function adaptive(top, reps, z, base_rerun)
  return function(P)
    local T1 = P.T - 1
    local left = reps * (top + (base_rerun and 1 or 0))
    local S = T1 - left
    local tau2 = noise_var({})
    local keep, score
    while true do
      local ok = {}
      for i = 1, S do
        local t = P.trials[i]
        if t.value then ok[#ok + 1] = t end
      end
      score = {}
      local pv = {}
      for _, t in ipairs(ok) do
        local e = P.est[S][t.key]
        score[t.key] = shrunk({ t.value }, e, tau2)
        local prior = e and 1 / math.max(e.sd ^ 2 - tau2, VFLOOR * tau2) or 0
        -- the variance by which REPS more measurements move the posterior mean
        pv[t.key] = 1 / (1 / tau2 + prior) - 1 / ((1 + reps) / tau2 + prior)
      end
      table.sort(ok, function(a, b) return score[a.key] < score[b.key] end)
      keep = {}
      for k = 1, math.min(top, #ok) do
        local t, L = ok[k], ok[1]
        if k == 1 or score[t.key] - score[L.key] <= z * math.sqrt(pv[t.key] + pv[L.key]) then
          keep[#keep + 1] = t
        end
      end
      local need = reps * (#keep + (base_rerun and 1 or 0))
      if need >= left or S >= T1 then break end
      S, left = S + (left - need), need
    end
    P.used = P.used + left
    local vals = {}
    for _, t in ipairs(keep) do vals[t.key] = { t.value } end
    local groups = { { P.base } }
    for r = 1, reps do
      if base_rerun then table.insert(groups[1], P.conf("{}", r)) end
      for _, t in ipairs(keep) do
        local v = P.conf(t.key, r)
        if v then table.insert(vals[t.key], v) end
      end
    end
    for _, t in ipairs(keep) do groups[#groups + 1] = vals[t.key] end
    tau2 = noise_var(groups)
    local best, bk
    for _, t in ipairs(keep) do
      local s = shrunk(vals[t.key], P.est[S][t.key], tau2)
      if not best or s < best then best, bk = s, t.key end
    end
    return bk, S
  end
end

policy("raw-median-3x1", { C = 4, f = make("raw", "median", 3, 1) })
policy("raw-shrink-3x1", { C = 4, f = make("raw", "shrink", 3, 1) })
policy("shrink-median-3x1", { C = 4, f = make("shrink", "median", 3, 1) })
policy("shrink-shrink-3x1", { C = 4, f = make("shrink", "shrink", 3, 1) })
if os.getenv("H_VARIANTS") then
  policy("ss-3x1-tau0=0.015", { C = 4, f = make("shrink", "shrink", 3, 1, TAU0) })
  policy("ss-3x1-tau0=0.01", { C = 4, f = make("shrink", "shrink", 3, 1, 0.01) })
  policy("ss-3x1-tau0=0.025", { C = 4, f = make("shrink", "shrink", 3, 1, 0.025) })
  policy("ss-3x1-vfloor=1", { C = 4, f = make("shrink", "shrink", 3, 1, nil, 1) })
  policy("ss-3x1-vfloor=0.05", { C = 4, f = make("shrink", "shrink", 3, 1, nil, 0.05) })
  policy("ss-5x1", { C = 6, f = make("shrink", "shrink", 5, 1) })
end
policy("shrink-shrink-2x1", { C = 3, f = make("shrink", "shrink", 2, 1) })
policy("raw-median-2x1", { C = 3, f = make("raw", "median", 2, 1) })
policy("shrink-none", { C = 0, f = make("shrink", "shrink", 1, 0) })
policy("raw-none", { C = 0, f = make("raw", "median", 1, 0) })
policy("baseline-only", { C = 1, f = make("raw", "median", 1, 0) })
policy("shrink-shrink-1x1", { C = 2, f = make("shrink", "shrink", 1, 1) })
for z in (os.getenv("H_Z") or "1,2"):gmatch("[%d%.]+") do
  policy("adaptive-z=" .. z, { C = 4, adaptive = true, f = adaptive(3, 1, tonumber(z), true) })
end
-- H_ADAPT=3x2,5x1: the adaptive confirmation at z = 2 with other TOPxREPS (C = REPS x (TOP + 1)).
for top, r in (os.getenv("H_ADAPT") or ""):gmatch("(%d+)x(%d+)") do
  top, r = tonumber(top), tonumber(r)
  policy("adaptive-" .. top .. "x" .. r, { C = r * (top + 1), adaptive = true, f = adaptive(top, r, 2, true) })
end
if os.getenv("H_NOBASE") then
  policy("adaptive-nobase-z=2", { C = 3, adaptive = true, f = adaptive(3, 1, 2, false) })
end

local seeds = ranges(os.getenv("H_SEEDS") or "1-4")
local budgets = ranges(os.getenv("H_TRIALS") or "25")
local reps = tonumber(os.getenv("H_REPS") or "2")
local strat = os.getenv("H_STRAT") or "tpe"
local opts = load("return " .. (os.getenv("H_OPTS") or "{}"))()
local dump = os.getenv("H_DUMP") and assert(io.open(os.getenv("H_DUMP"), "w"))
local spaces = {}
local rows = {}
local used
for _, T in ipairs(budgets) do
  local res = {}
  for _, p in ipairs(POLICIES) do res[p.name] = {} end
  res.found = {}
  used = {}
  for _, seed in ipairs(seeds) do
    spaces[seed] = spaces[seed] or { load_space(seed) }
    local sp, order, opt = table.unpack(spaces[seed])
    for rep = 1, reps do
      local h = host.new({ path = "h.lua", space = sp, strategy = { name = strat, options = opts, line = 1 },
                           budget = { trials = T, hours = 0, steps = STEPS } }, rep, {})
      local base = measure(seed, rep, order, {}, sp, 0)
      local function st(v) local s = {} for k = 1, STEPS - SKIP do s[k] = v end return s end
      h:tell("{}", { status = "ok", value = base, steps = st(base), steps_budget = STEPS, number = 0 })
      local trials, est, configs = {}, {}, {}
      local need = {}
      for _, p in ipairs(POLICIES) do
        if p.f.adaptive then for i = T - 1 - p.f.C, T - 1 do need[i] = true end end
        need[T - 1 - p.f.C] = true
      end
      for i = 1, T - 1 do
        local p = h:ask(1)[1]
        if not p then break end
        local c = sp:decode_json(p.json)
        local v = measure(seed, rep, order, c, sp, i)
        local status = v and "ok" or "oom"
        trials[i] = { key = p.json, config = c, value = v, truth = true_value(seed, order, c, sp) }
        if os.getenv("H_DEBUG") then print(i, v, trials[i].truth) end
        h:tell(p.json, { status = status, value = v, steps = v and st(v) or {}, steps_budget = STEPS, number = i })
        if need[i] then
          local keys = {}
          for k = 1, i do if trials[k].value then keys[#keys + 1] = trials[k].key end end
          local got = h:estimate(keys)
          est[i] = {}
          for k, key in ipairs(keys) do est[i][key] = got[k] or nil end
        end
      end
      local cc = {}
      local function conf(key, r)
        local id = key .. "#" .. r
        if cc[id] == nil then
          cc[id] = measure(seed, rep, order, sp:decode_json(key), sp, 1000 * r + 7) or false
        end
        return cc[id] or nil
      end
      for _, p in ipairs(POLICIES) do
        local S = math.min(T - 1 - p.f.C, #trials)
        local P = { S = S, T = T, trials = trials, est = est, base = base, conf = conf, used = 0 }
        local bk, S2 = p.f.f(P)
        S = S2 or S
        used[p.name] = (used[p.name] or 0) + (S2 and P.used or p.f.C)
        local tv = bk and true_value(seed, order, sp:decode_json(bk), sp) or math.huge
        local found = math.huge
        for k = 1, S do if trials[k].truth and trials[k].truth < found then found = trials[k].truth end end
        table.insert(res[p.name], { regret = (tv / opt - 1) * 100, found = (found / opt - 1) * 100 })
        if dump then
          dump:write(string.format("%d %d %d %s %.6f %.6f\n", T, seed, rep, p.name,
                                   (tv / opt - 1) * 100, (found / opt - 1) * 100))
        end
      end
    end
  end
  local function pct(xs, q) local s = table.move(xs, 1, #xs, 1, {}) table.sort(s) return s[math.max(1, math.ceil(q * #s))] end
  for _, p in ipairs(POLICIES) do
    local rg, fd, gap = {}, {}, {}
    local mean = 0
    for i, r in ipairs(res[p.name]) do rg[i], fd[i], gap[i] = r.regret, r.found, r.regret - r.found; mean = mean + r.regret end
    print(string.format("T=%d %-20s C=%.2f median %.2f p90 %.2f worst %.2f mean %.2f | found med %.2f | gap med %.2f mean %.2f",
      T, p.name, used[p.name] / #rg, pct(rg, 0.5), pct(rg, 0.9), pct(rg, 1), mean / #rg, pct(fd, 0.5), pct(gap, 0.5),
      (function() local s = 0 for _, g in ipairs(gap) do s = s + g end return s / #gap end)()))
  end
  io.stdout:flush()
end
