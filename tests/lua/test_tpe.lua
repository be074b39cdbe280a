-- search/tpe.lua through lua/host.lua: determinism under a seed, no duplicates, valid
-- configurations, ask(n) respected, history and repeats, the cost of one ask, and two
-- synthetic landscapes (pure Lua): one where half the space runs out of memory (tpe must
-- learn the region) and a smooth one (tpe must beat random at equal budget).

local space = require("space")
local host = require("host")
local tap = require("tap")
local heapcheck = require("heapcheck")
local test, eq = tap.test, tap.eq

-- Six parameters, 14 * 10 * 2 * 3 * 8 * 2 = 13440 configurations.
local function synth_space()
  return space.new({ xla_gpu_thr = { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                     xla_gpu_lhs = { kind = "bool" },
                     xla_gpu_level = { kind = "int", lo = 1, hi = 8 },
                     xla_gpu_db = { kind = "bool" } },
                   { MEM = { kind = "float", lo = 0.5, hi = 0.95, step = 0.05 },
                     PROTO = { kind = "choice", values = { "a", "b", "c" } } }, {}, {}, "exp.lua")
end

local function new_host(sp, name, options, seed, history, trials)
  local exp = { path = "exp.lua", space = sp,
                strategy = { name = name, options = options or {}, line = 30 },
                budget = { trials = trials or 100, hours = 0, steps = 50 } }
  return host.new(exp, seed or 1, history or {})
end

local function u(sp, name, v) return sp.by_name[name]:encode(v) end

-- OOM when the threshold is large for the memory fraction: half of the space. The optimum
-- sits next to the boundary, as in real life.
local function landscape(sp, c)
  local t, f = u(sp, "xla_gpu_thr", c.xla_gpu_thr), u(sp, "MEM", c.MEM)
  if t + (1 - f) > 1.0 then return "oom" end
  local v = 100 + 40 * (t - 0.55) ^ 2 + 25 * (f - 0.85) ^ 2
  v = v + (c.xla_gpu_lhs and 0 or 12) + (c.xla_gpu_db and 0 or 3)
  v = v + ({ a = 4, b = 0, c = 6 })[c.PROTO] + 2 * math.abs(c.xla_gpu_level - 6)
  return "ok", v
end

-- Runs a sequential sweep of TRIALS; returns the best value and the OOMs after SKIP trials.
local function run(sp, name, seed, trials, skip, options)
  local h = new_host(sp, name, options, seed, {}, trials)
  local best, ooms = math.huge, 0
  for i = 1, trials do
    local p = h:ask(1)[1]
    if not p then break end
    local c = sp:decode_json(p.json)
    local status, v = landscape(sp, c)
    if status == "oom" and i > skip then ooms = ooms + 1 end
    if v and v < best then best = v end
    h:tell(p.json, { status = status, value = v, steps = {}, number = i })
  end
  return best, ooms
end

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local function test_deterministic_and_valid()
  local sp = synth_space()
  local function trace(seed)
    local h, out = new_host(sp, "tpe", { startup = 5 }, seed), {}
    for i = 1, 25 do
      local got = h:ask(2)
      assert(#got == 2, "ask(2) gives two")
      for _, p in ipairs(got) do
        assert(sp:validate(sp:decode_json(p.json)))
        out[#out + 1] = p.json
        local status, v = landscape(sp, sp:decode_json(p.json))
        h:tell(p.json, { status = status, value = v, steps = {}, number = i })
      end
    end
    return table.concat(out, "\n")
  end
  local a, b, c = trace(3), trace(3), trace(4)
  eq(a, b, "same seed, same proposals")
  assert(a ~= c, "another seed, other proposals")
end

-- A space of 12: every configuration exactly once, then done() and nothing more.
local function test_exhausts_without_duplicates()
  local sp = space.new({ xla_gpu_a = { kind = "bool" }, xla_gpu_b = { kind = "int", lo = 1, hi = 3 } },
                       { V = { kind = "choice", values = { "x", "y" } } }, {}, {}, "exp.lua")
  local h = new_host(sp, "tpe", { startup = 3 }, 9)
  local seen, n = {}, 0
  for i = 1, 20 do
    local got = h:ask(3)
    assert(#got <= 3, "ask(3) respected")
    for _, p in ipairs(got) do
      assert(not seen[p.json], "duplicate " .. p.json)
      seen[p.json], n = true, n + 1
      h:tell(p.json, { status = (i % 3 == 0) and "oom" or "ok", value = i, steps = {} })
    end
  end
  eq(n, 12, "every configuration once")
  assert(h:done(), "done when exhausted")
  eq(#h:ask(4), 0, "nothing after exhaustion")
end

-- Asks while trials run (nothing told) never collapse onto one configuration, and
-- history (with unknown statuses) is skipped and learnt from.
local function test_pending_and_history()
  local sp = synth_space()
  local hist = {}
  for i = 1, 20 do
    local c = sp:sample(require("rng").new(i))
    local status, v = landscape(sp, c)
    hist[#hist + 1] = { config = c, status = (i == 7) and "lost" or status, value = v,
                        steps = {}, steps_budget = 50, number = i }
  end
  local h = new_host(sp, "tpe", { startup = 4 }, 5, hist)
  local seen = {}
  for _, it in ipairs(hist) do seen[sp:key(it.config)] = true end
  for _ = 1, 10 do
    for _, p in ipairs(h:ask(3)) do
      assert(not seen[p.json], "proposed a seen or pending configuration " .. p.json)
      seen[p.json] = true
    end
  end
  -- repeats of a configuration are averaged, not counted twice
  local p = h:ask(1)[1]
  h:tell(p.json, { status = "ok", value = 10, steps = {} })
  h:tell(p.json, { status = "ok", value = 20, steps = {} })
  local s = h.strategy
  local ob = s:observation(s.obs[ft.digest(p.json)]) -- observations are keyed by digest
  eq(ob.sum / ob.weight, 15, "repeats averaged")
  eq(ob.value, 15, "the mean")
  eq(ob.ran, 2, "two runs")
  eq(table.concat(s:vec(ob.id), ","), table.concat(s:indices(sp:decode_json(p.json)), ","),
    "its index vector")
end

-- The acceptance bar of the brief: 150 observations, 20 parameters, under the host's
-- 50M-instruction budget with room to spare.
local function test_cost_of_an_ask()
  local flags = {}
  for i = 1, 20 do
    local kinds = { { kind = "bool" }, { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                    { kind = "int", lo = 0, hi = 100 }, { kind = "choice", values = { "a", "b", "c" } },
                    { kind = "float", lo = 0, hi = 1, step = 0.001 } }
    flags[string.format("xla_gpu_p%02d", i)] = kinds[i % 5 + 1]
  end
  local sp = space.new(flags, {}, {}, {}, "exp.lua")
  local h = new_host(sp, "tpe", { startup = 10 }, 1)
  local r = require("rng").new(77)
  for i = 1, 150 do
    local p = h:ask(1)[1]
    local status = r:random() < 0.2 and "oom" or "ok"
    h:tell(p.json, { status = status, value = status == "ok" and r:random() * 100 or nil,
                     steps = {}, number = i })
  end
  local count = 0
  debug.sethook(function() count = count + 1 end, "", 1000)
  h:ask(1)
  debug.sethook()
  local instructions = count * 1000
  assert(instructions < 25e6, "one ask took " .. instructions .. " instructions")
  print(string.format("tpe: one ask at 150 observations x 20 parameters: %.1fM instructions",
    instructions / 1e6))
end

-- Half the space OOMs: after the start, tpe must hit the OOM region far less than random.
local function test_learns_the_oom_region()
  local sp = synth_space()
  local tpe_ooms, random_ooms = 0, 0
  for seed = 1, 4 do
    local _, a = run(sp, "tpe", seed, 50, 10, { startup = 10 })
    local _, b = run(sp, "random", seed, 50, 10)
    tpe_ooms, random_ooms = tpe_ooms + a, random_ooms + b
  end
  print(string.format("OOMs after the start (4 seeds x 40): tpe %d, random %d", tpe_ooms,
    random_ooms))
  assert(tpe_ooms * 3 < random_ooms, "tpe must avoid the OOM region")
end

local function test_beats_random()
  local sp = synth_space()
  local a, b = {}, {}
  for seed = 1, 7 do
    a[seed] = run(sp, "tpe", seed, 40, 0)
    b[seed] = run(sp, "random", seed, 40, 0)
  end
  local ma, mb = median(a), median(b)
  print(string.format("median best at 40 trials (7 seeds): tpe %.2f, random %.2f (optimum ~100)",
    ma, mb))
  assert(ma < mb, "tpe must beat random")
  assert(ma - 100 < 0.6 * (mb - 100), "by a clear margin")
end

-- Warm start across spaces: observations of an earlier sweep that searched only some of
-- these parameters (no MEM, no PROTO) reach the model through prior() and steer the first
-- model proposals; they are never taken as seen.
local function test_prior_from_another_space()
  local sp = synth_space()
  local r = require("rng").new(3)
  local hist = {}
  for i = 1, 40 do
    local c = sp:sample(r)
    local old = { xla_gpu_thr = c.xla_gpu_thr, xla_gpu_lhs = c.xla_gpu_lhs,
                  xla_gpu_level = c.xla_gpu_level, xla_gpu_db = c.xla_gpu_db, OLD_VAR = "1" }
    -- The earlier sweep (another model phase, say): lhs OFF was 30 % faster there, unlike
    -- this landscape, so only the prior can make tpe try lhs = false first.
    local _, v = landscape(sp, { xla_gpu_thr = c.xla_gpu_thr, xla_gpu_lhs = true,
                                 xla_gpu_level = c.xla_gpu_level, xla_gpu_db = c.xla_gpu_db,
                                 MEM = 0.5, PROTO = "b" })
    hist[i] = { config = old, status = "ok",
                value = (v or 200) * (c.xla_gpu_lhs and 1.0 or 0.7), number = i }
  end
  local function lhs_share(history)
    local h = new_host(sp, "tpe", { startup = 0 }, 9, history, 50)
    local off = 0
    for _ = 1, 6 do
      local p = h:ask(1)[1]
      local c = sp:decode_json(p.json)
      if not c.xla_gpu_lhs then off = off + 1 end
      local status, v = landscape(sp, c)
      h:tell(p.json, { status = status, value = v, steps = {} })
    end
    return off, h
  end
  local with, h = lhs_share(hist)
  local without = lhs_share({})
  print(string.format("lhs off in the first 6 proposals: %d with the prior, %d without", with,
    without))
  assert(with >= 4 and with > without, "the prior must steer tpe toward lhs = false")
  eq(h.n_partial, 40, "every earlier trial shares parameters")
  for k in pairs(h.seen) do assert(not k:find("OLD_VAR"), "a prior item was marked seen") end
end

-- A warm start's partial configurations ranked best (their values beat every trial here)
-- and the local phase on: a partial one has no neighbours (it lacks parameters), so the
-- local moves come from this space's own best; it used to raise in neighbours() (a nil
-- index) and fail the sweep.
local function test_local_phase_with_a_partial_best()
  local sp = synth_space()
  local r = require("rng").new(5)
  local hist = {}
  for i = 1, 20 do
    local c = sp:sample(r)
    hist[i] = { config = { xla_gpu_thr = c.xla_gpu_thr, xla_gpu_lhs = c.xla_gpu_lhs },
                status = "ok", value = 1 + i / 100, number = i }
  end
  local h = new_host(sp, "tpe", { startup = 3, local_share = 1, local_ramp = 0.01, surrogate = 0 },
    4, hist, 60)
  eq(h.n_partial, 20, "partial configurations taken")
  local seen = {}
  for i = 1, 30 do
    local p = h:ask(1)[1]
    assert(p and not seen[p.json], "a fresh proposal " .. i)
    seen[p.json] = true
    local status, v = landscape(sp, sp:decode_json(p.json))
    h:tell(p.json, { status = status, value = v, steps = {}, number = i })
  end
end

local function test_options()
  local sp = synth_space()
  local ok, err = pcall(new_host, sp, "tpe", { startup = -1 })
  assert(not ok and err:find("exp%.lua:30: strategy 'tpe': startup must be"), err)
  ok, err = pcall(new_host, sp, "tpe", { gama = 0.2 })
  assert(not ok and err:find("unknown option 'gama'"), err)
  ok, err = pcall(new_host, sp, "tpe", { gamma = 1.5 })
  assert(not ok and err:find("gamma must be"), err)
  -- the default start: max(8, 2 per parameter) = 12, at most a third of the trials
  eq(new_host(sp, "tpe", {}, 1, {}, 100).strategy.o.startup, 12, "default startup")
  eq(new_host(sp, "tpe", {}, 1, {}, 24).strategy.o.startup, 8, "startup capped by trials")
  eq(new_host(sp, "tpe", {}, 1, {}, 60).strategy.o.startup, 10, "startup a sixth of the trials")
  eq(new_host(sp, "tpe", {}, 1, {}, 15).strategy.o.startup, 5, "startup at least 5")
end

-- guide = 1: the first start point is the guides' configuration (lua/catalog.lua's
-- `recommended` where it is in the space, else the default where it is, else the middle
-- value); guide = 2 also takes the nearer end for a recommendation past the range. The rest
-- of the start is the Latin hypercube, one point shorter.
local function test_guide()
  local sp = space.new({ xla_gpu_enable_latency_hiding_scheduler = { kind = "bool" },   -- rec. true
                         xla_gpu_memory_limit_slop_factor = { kind = "int", lo = 80, hi = 100, step = 5 }, -- 95
                         xla_gpu_all_reduce_combine_threshold_bytes = { kind = "pow2", lo = 1 << 20, hi = 1 << 30 },
                         xla_gpu_autotune_level = { kind = "int", lo = 0, hi = 4 },      -- default 4
                         xla_gpu_not_in_catalog = { kind = "int", lo = 1, hi = 5 } },
                       { XLA_PYTHON_CLIENT_MEM_FRACTION = { kind = "float", lo = 0.5, hi = 0.95, step = 0.05 } },
                       {}, {}, "exp.lua")
  local function first(g)
    local h = new_host(sp, "tpe", { guide = g, startup = 6 }, 3, {}, 50)
    local c = sp:decode_json(h:ask(1)[1].json)
    return c, h
  end
  local c = first(1)
  eq(c.xla_gpu_enable_latency_hiding_scheduler, true, "recommended bool")
  eq(c.xla_gpu_memory_limit_slop_factor, 95, "recommended int")
  eq(c.XLA_PYTHON_CLIENT_MEM_FRACTION, 0.9, "recommended fraction")
  eq(c.xla_gpu_autotune_level, 4, "no recommendation: the default")
  eq(c.xla_gpu_not_in_catalog, 3, "not in the catalog: the middle")
  -- 8 GiB recommended, past 1 GiB; the default (30 MiB + 7) is no power of two: the middle
  eq(c.xla_gpu_all_reduce_combine_threshold_bytes, 1 << 25, "guide 1: the middle")
  local c2, h = first(2)
  eq(c2.xla_gpu_all_reduce_combine_threshold_bytes, 1 << 30, "guide 2: the nearer end")
  eq(h.strategy.o.startup, 6, "the start keeps its size")
  eq(#h.strategy.design, 6, "one guide point and five from the hypercube")
  local c0, h0 = first(0)
  assert(sp:key(c0) ~= sp:key(c), "guide = 0 starts from the hypercube")
  -- The recipe (the confirmation's floor, src/sweep/confirm.h): the guide point, through the host
  -- as the first proposal's JSON; none without the guides' start or with nothing they
  -- recommend in the space.
  local _, h1 = first(1)
  eq(h1:recipe(), sp:key(c), "recipe: the guides' point, the first proposal")
  eq(h0:recipe(), nil, "guide = 0: no recipe")
  local bare = space.new({ xla_gpu_not_in_catalog = { kind = "int", lo = 1, hi = 5 } }, {}, {},
                         {}, "exp.lua")
  eq(new_host(bare, "tpe", { startup = 4 }, 3, {}, 50):recipe(), nil,
     "nothing recommended: no recipe")
  eq(new_host(sp, "halving", { base = "tpe", min_steps = 2 }, 3, {}, 50):recipe(), sp:key(c),
     "halving: its base's recipe")
  for _, bad in ipairs({ -1, 3, 1.5 }) do
    local ok, err = pcall(new_host, sp, "tpe", { guide = bad })
    assert(not ok and err:find("guide must be 0, 1 or 2"), err)
  end
end

-- What tpe{} keeps per observation (docs/COST.md, Memory): 14 parameters named as long as
-- real XLA flags, so a configuration's canonical JSON is ~500 bytes. Keyed by that JSON it
-- held ~1.5 KB of live heap a trial; keyed by ft.digest with a table per observation (its
-- fields and its index vector) ~980 bytes; in parallel arrays with packed index vectors
-- ~300 (the host's seen set included). Measured from 600 to 1,200 trials, a doubling of
-- every table, so that their power-of-two sizes average out; the index vectors kept
-- unpacked between asks (a cache of at most 4 * window + 64) are dropped before each
-- measure.
local function test_memory_per_observation()
  local h = new_host(heapcheck.long_space(), "tpe", { window = 50 }, 3, {}, 2000)
  local s = h.strategy
  local per = heapcheck.bytes_per_trial(h, 600, 1200, function(i) return 1 + (i * 7919) % 97 end, {},
    function() s.hot, s.hot_n = {}, 0 end)
  io.stderr:write(string.format("tpe: %.0f bytes of live Lua heap an observation\n", per))
  assert(per < 450, string.format("%.0f bytes of live Lua heap an observation", per))
end

-- The packed index vectors (search/tpe.lua, T:init_store): one, two and three bytes a
-- parameter, chunks and the open chunk, a warm start's partial configurations (absent
-- parameters), each unpacked as its table was; and an ask that must unpack every vector
-- (nothing kept unpacked) proposes what one with them kept does.
local function test_packed_vectors()
  local sp = space.new({ xla_gpu_b = { kind = "bool" }, xla_gpu_t = { kind = "int", lo = 0, hi = 4096 },
                         xla_gpu_w = { kind = "int", lo = 0, hi = 65536 } },
                       { MEM = { kind = "float", lo = 0.5, hi = 0.95, step = 0.05 } }, {}, {}, "exp.lua")
  local partial, want = {}, {}
  local r = require("rng").new(4)
  for i = 1, 40 do
    local c = { xla_gpu_w = r:int(0, 65536), xla_gpu_b = (i % 2 == 0) or nil }
    partial[i] = { config = c, status = i % 5 == 0 and "oom" or "ok", value = 1 + r:random(),
                   steps = {} }
    want["prior:" .. ft.digest(sp:key(c))] = { c.xla_gpu_b ~= nil and sp.by_name.xla_gpu_b:index(c.xla_gpu_b)
      or nil, nil, sp.by_name.xla_gpu_w:index(c.xla_gpu_w) }
  end
  local function make()
    local h = new_host(sp, "tpe", { window = 30 }, 9, {}, 400)
    h.strategy:prior(partial)
    return h
  end
  local keep, cold = make(), make()
  local r1, r2 = require("rng").new(5), require("rng").new(5)
  for i = 1, 150 do
    cold.strategy.hot = {} -- every vector unpacked from its string
    local a, b = keep:ask(1)[1], cold:ask(1)[1]
    eq(b.json, a.json, "proposal " .. i)
    want[ft.digest(a.json)] = cold.strategy:indices(sp:decode_json(a.json))
    local st = r1:random() < 0.15 and "oom" or "ok"
    r2:random()
    local res = { status = st, value = st == "ok" and 1 + (i * 37) % 11 or nil, steps = {}, number = i }
    keep:tell(a.json, res)
    cold:tell(b.json, res)
  end
  local s = cold.strategy
  eq(s.xsize, 1 + 2 + 3 + 1, "bytes a vector")
  assert(#s.xs >= 2 and #s.xopen > 0, "closed chunks and an open one")
  s.hot = {}
  local n = 0
  for key, id in pairs(s.obs) do
    local x = s:vec(id)
    for dim = 1, 4 do eq(x[dim], want[key][dim], "id " .. id .. " dim " .. dim) end
    n = n + 1
  end
  assert(n > 150, "every observation checked: " .. n)
end

test("deterministic_and_valid", test_deterministic_and_valid)
test("memory_per_observation", test_memory_per_observation)
test("packed_vectors", test_packed_vectors)
test("exhausts_without_duplicates", test_exhausts_without_duplicates)
test("pending_and_history", test_pending_and_history)
test("options", test_options)
test("guide", test_guide)
-- The finish (search/tpe_finish.lua): the last trials of the budget move the best measured
-- configuration one parameter, or tie its combine thresholds to one of their values.
local function threshold_space()
  local th = { kind = "pow2", lo = 1 << 20, hi = 1 << 30 }
  return space.new({ xla_gpu_all_gather_combine_threshold_bytes = th,
                     xla_gpu_reduce_scatter_combine_threshold_bytes = th,
                     xla_gpu_all_reduce_combine_threshold_bytes = th,
                     xla_gpu_lhs = { kind = "bool" } },
                   { MEM = { kind = "float", lo = 0.5, hi = 0.95, step = 0.05 } }, {}, {},
                   "exp.lua")
end

local function threshold_value(sp, c)
  local v = 100 + (c.xla_gpu_lhs and 0 or 5) + 10 * (u(sp, "MEM", c.MEM) - 0.8) ^ 2
  for _, n in ipairs({ "all_gather", "reduce_scatter", "all_reduce" }) do
    v = v + 8 * (u(sp, "xla_gpu_" .. n .. "_combine_threshold_bytes",
                   c["xla_gpu_" .. n .. "_combine_threshold_bytes"]) - 0.6) ^ 2
  end
  return v
end

local function finish_moves(finish)
  local sp = threshold_space()
  local h = new_host(sp, "tpe", { finish = finish }, 3, {}, 30)
  local best, best_v, moves = nil, math.huge, 0
  for i = 1, 25 do
    local p = h:ask(1)[1]
    local c = sp:decode_json(p.json)
    if i >= 20 then -- 30 - 5 (the confirmation) - 6 (0.2 of 30): trials 20 to 25
      local diff, tied = {}, true
      for _, q in ipairs(sp.params) do
        if c[q.name] ~= best[q.name] then diff[#diff + 1] = q.name end
      end
      for _, n in ipairs(diff) do tied = tied and n:find("_combine_threshold_bytes$") ~= nil end
      if #diff == 1 or (tied and #diff >= 1) then moves = moves + 1 end
    end
    local v = threshold_value(sp, c)
    h:tell(p.json, { status = "ok", value = v, steps = {}, number = i })
    if v < best_v then best, best_v = c, v end
  end
  return moves
end

local function test_finish()
  eq(finish_moves(0.2), 6, "every finishing trial moves the best by one parameter or ties it")
  assert(finish_moves(0) < 6, "without the finish the model proposes elsewhere too")
  local sp = threshold_space()
  local x = {}
  for dim, p in ipairs(sp.params) do x[dim] = (p.n + 1) // 2 end
  local names = {}
  for dim, p in ipairs(sp.params) do names[p.name] = dim end
  local ag = names.xla_gpu_all_gather_combine_threshold_bytes
  local rs = names.xla_gpu_reduce_scatter_combine_threshold_bytes
  local ar = names.xla_gpu_all_reduce_combine_threshold_bytes
  x[ag], x[rs], x[ar] = 2, 5, 5
  local out = require("search.tpe_finish").tied_thresholds(sp.params, x, {})
  eq(#out, 2, "one variant per distinct threshold value")
  eq(out[1][ag] .. "," .. out[1][rs] .. "," .. out[1][ar], "2,2,2", "all at all_gather's")
  eq(out[2][ag] .. "," .. out[2][rs] .. "," .. out[2][ar], "5,5,5", "all at the others'")
  local ok, err = pcall(new_host, sp, "tpe", { finish = 0.9 })
  assert(not ok and err:find("finish must be a number from 0 to 0.5"), err)
end

test("finish", test_finish)
test("prior_from_another_space", test_prior_from_another_space)
test("local_phase_with_a_partial_best", test_local_phase_with_a_partial_best)
test("cost_of_an_ask", test_cost_of_an_ask)
test("learns_the_oom_region", test_learns_the_oom_region)
test("beats_random", test_beats_random)
