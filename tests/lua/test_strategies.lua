-- search/random.lua, search/grid.lua and the protocol checks of lua/host.lua: determinism
-- under a seed, no duplicates, exhaustion and done(), history skipping, and a fake user
-- strategy that breaks the protocol in every way the host must catch.

local space = require("space")
local host = require("host")
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

-- 2 * 3 * 2 = 12 configurations.
local function small_space()
  return space.new({ xla_gpu_a = { kind = "bool", line = 3 },
                     xla_gpu_b = { kind = "int", lo = 1, hi = 3, line = 4 } },
                   { V = { kind = "choice", values = { "x", "y" }, line = 5 } },
                   { xla_fixed = 1 }, { E = "1" }, "exp.lua")
end

-- 2 * 14 * 4 * 6 * 2 = 1344 configurations.
local function big_space()
  return space.new({ xla_gpu_lhs = { kind = "bool" },
                     xla_gpu_thr = { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                     xla_tpu_foo = { kind = "int", lo = 1, hi = 4 } },
                   { MEM = { kind = "float", lo = 0.7, hi = 0.95, step = 0.05 },
                     PROTO = { kind = "choice", values = { "a", "b" } } }, {}, {}, "exp.lua")
end

local function experiment(sp, strategy)
  return { path = "exp.lua", space = sp, strategy = strategy,
           budget = { trials = 100, hours = 8, steps = 50 } }
end

local function new_host(sp, name, options, seed, history)
  return host.new(experiment(sp, { name = name, options = options or {}, line = 30 }), seed or 1,
    history or {})
end

local function jsons(list)
  local out = {}
  for i, p in ipairs(list) do out[i] = p.json end
  return table.concat(out, " ")
end

-- Asks in batches of BATCH until the strategy stops offering; every JSON seen once.
local function drain(h, batch)
  local seen, order = {}, {}
  for _ = 1, 1000 do
    local got = h:ask(batch)
    if #got == 0 then break end
    for _, p in ipairs(got) do
      if seen[p.json] then error("proposed twice: " .. p.json) end
      seen[p.json] = true
      order[#order + 1] = p.json
    end
  end
  return order, seen
end

local function test_random_deterministic()
  local a = jsons(new_host(big_space(), "random", {}, 42):ask(20))
  local b = jsons(new_host(big_space(), "random", {}, 42):ask(20))
  local c = jsons(new_host(big_space(), "random", {}, 43):ask(20))
  eq(a, b, "same seed, same proposals")
  assert(a ~= c, "another seed, other proposals")
end

local function test_random_exhausts_without_repeats()
  local h = new_host(small_space(), "random", {}, 7)
  eq(h:done(), false, "not done at start")
  local order = drain(h, 5)
  eq(#order, 12, "every configuration once")
  eq(h:done(), true, "done when all were proposed")
  eq(#h:ask(3), 0, "nothing more")
  -- the larger space exhausts through the enumerated pool in bounded time too
  local big = new_host(big_space(), "random", {}, 3)
  eq(#drain(big, 64), 1344, "1344 configurations, none twice")
  eq(big:done(), true, "big space done")
end

local function test_proposal_shape()
  local h = new_host(small_space(), "random", {}, 1)
  local p = h:ask(1)[1]
  assert(p.json:find('^{"V":"[xy]","xla_gpu_a":[a-z]+,"xla_gpu_b":[123]}$'), p.json)
  eq(p.steps, 0, "default steps")
  assert(p.label:find("^a=%a+ b=%d V=%a$"), p.label)
  local names = {}
  for i, s in ipairs(p.settings) do names[i] = s.target .. ":" .. s.name end
  eq(table.concat(names, " "), "xla:xla_fixed xla:xla_gpu_a xla:xla_gpu_b env:E env:V", "settings")
end

local function history_of(sp, keys)
  local hist = {}
  for i, k in ipairs(keys) do
    hist[i] = { json = sp:key(sp:at(k)), status = i % 2 == 0 and "oom" or "ok", value = 10.0 + i,
                steps = { 1.0, 2.0 }, steps_budget = 50, number = i }
  end
  hist[#hist + 1] = { json = "{}", status = "ok", value = 12.5, steps = {}, number = 0 }
  hist[#hist + 1] = { json = '{"gone":1}', status = "ok", value = 1, number = 99 }
  hist[#hist + 1] = { json = '{"V":"x","xla_gpu_a":true,"xla_gpu_b":7}', status = "ok",
                      number = 98 }
  return hist
end

local function test_history_skipped(name)
  local sp = small_space()
  local hist = history_of(sp, { 1, 4, 9, 12 })
  local h = new_host(sp, name, {}, 5, hist)
  local order, seen = drain(h, 3)
  eq(#order, 8, name .. ": 12 minus 4 already run")
  for _, k in ipairs({ 1, 4, 9, 12 }) do
    eq(seen[sp:key(sp:at(k))], nil, name .. ": history configuration proposed again")
  end
  eq(h:done(), true, name .. " done")
end

local function test_grid_order_and_shuffle()
  local sp = big_space()
  local h = new_host(sp, "grid")
  local first = h:ask(3)
  for k = 1, 3 do eq(first[k].json, sp:key(sp:at(k)), "grid follows at(k)") end
  local s1 = jsons(new_host(big_space(), "grid", { shuffle = true }, 11):ask(30))
  local s2 = jsons(new_host(big_space(), "grid", { shuffle = true }, 11):ask(30))
  local s3 = jsons(new_host(big_space(), "grid", { shuffle = true }, 12):ask(30))
  eq(s1, s2, "shuffled grid deterministic under a seed")
  assert(s1 ~= s3, "another seed, another order")
  local g = new_host(small_space(), "grid", { shuffle = true }, 4)
  eq(#drain(g, 5), 12, "shuffled grid covers the space")
  eq(g:done(), true, "grid done")
  eq(#g:ask(1), 0, "exhausted grid offers nothing")
end

local function test_grid_refuses_large_space()
  raises("^exp%.lua:30: strategy 'grid': the space has 1344 configurations, more than grid's " ..
    "max of 100; use random{} or tpe{}", new_host, big_space(), "grid", { max = 100 })
  raises("^exp%.lua:30: strategy 'grid': unknown option 'shufle' %(did you mean 'shuffle'%? grid{} " ..
    "takes ", new_host, small_space(), "grid", { shufle = true })
  raises("^exp%.lua:30: strategy 'random': unknown option 'x'", new_host, small_space(), "random",
    { x = 1 })
  raises("^exp%.lua:30: unknown strategy 'nope'", new_host, small_space(), "nope")
end

-- ---- a fake user strategy ----

local function write_file(text) return tap.temp_file(text, ".lua") end

-- A user strategy whose ask() returns whatever `script` (a global set by the test) says.
local FAKE = [[
local M = {}
function M.new(space, options, history, rng)
  FAKE_SEEN = { space = space, options = options, history = history, rng = rng, told = {} }
  return setmetatable({ space = space }, { __index = M })
end
function M:ask(n)
  return FAKE_SCRIPT(self.space, n)
end
function M:tell(config, result)
  local t = FAKE_SEEN.told
  t[#t + 1] = { config = config, result = result }
end
function M:prior(items)
  FAKE_SEEN.prior = items
end
return M
]]

local function fake_host(script, history)
  local path = write_file(FAKE)
  FAKE_SCRIPT = script
  local exp = experiment(small_space(), { name = "fake", path = path, options = { k = 1 },
                                          line = 30 })
  return host.new(exp, 1, history or {}), path
end

local function test_fake_protocol()
  local sp = small_space()
  local c1, c2 = sp:at(1), sp:at(2)
  local h = fake_host(function() return { c1, { config = c2, steps = 10 } } end,
    history_of(sp, { 5 }))
  eq(FAKE_SEEN.options.k, 1, "options passed")
  eq(FAKE_SEEN.options.budget.steps, 50, "budget passed in options")
  eq(#FAKE_SEEN.history, 2, "history: one config and the baseline, stale ones skipped")
  eq(FAKE_SEEN.history[1].status, "ok", "history status")
  eq(FAKE_SEEN.history[1].config.xla_gpu_b, sp:at(5).xla_gpu_b, "history decoded")
  eq(FAKE_SEEN.history[2].baseline, true, "baseline marked")
  -- {"V":"x","xla_gpu_a":true,"xla_gpu_b":7}: b = 7 is outside 1..3, the rest is shared;
  -- {"gone":1} shares nothing.
  eq(#FAKE_SEEN.prior, 1, "prior: the partial configuration of a differing space")
  eq(FAKE_SEEN.prior[1].config.V, "x", "prior keeps a shared parameter")
  eq(FAKE_SEEN.prior[1].config.xla_gpu_a, true, "prior keeps a shared flag")
  eq(FAKE_SEEN.prior[1].config.xla_gpu_b, nil, "prior drops a value the space does not allow")
  eq(FAKE_SEEN.prior[1].number, 98, "prior keeps the trial's fields")
  local got = h:ask(2)
  eq(got[1].steps, 0, "plain config")
  eq(got[2].steps, 10, "steps kept")
  h:tell(got[2].json, { status = "oom", value = 0 / 0, steps = { 3.0 }, number = 2 })
  local told = FAKE_SEEN.told[1]
  eq(told.config.xla_gpu_b, c2.xla_gpu_b, "tell decodes the config")
  eq(told.result.status, "oom", "tell status")
  eq(told.result.value, nil, "NaN value becomes nil")
  eq(told.result.steps[1], 3.0, "tell steps")
  raises("^strategy 'fake' proposed configuration " .. sp:key(c1):gsub("%p", "%%%0") .. " twice",
    h.ask, h, 2)
end

local function test_fake_refusals()
  local sp = small_space()
  local h = fake_host(function() return { { xla_gpu_a = true } } end)
  raises("^strategy 'fake' proposed an invalid configuration: missing parameter", h.ask, h, 1)
  h = fake_host(function(s) return { s:at(3), s:at(3) } end)
  raises("^strategy 'fake' proposed configuration .* twice", h.ask, h, 2)
  h = fake_host(function(s) return { s:at(3), { config = s:at(3), repeat_ok = true } } end)
  eq(#h:ask(2), 2, "repeat_ok allows a repeat")
  h = fake_host(function() return nil end)
  raises("^strategy 'fake': ask%(%) must return a list of configurations, got nil$", h.ask, h, 1)
  h = fake_host(function(s) return { s:at(1), s:at(2), s:at(3) } end)
  raises("^strategy 'fake': ask%(2%) returned 3 configurations", h.ask, h, 2)
  h = fake_host(function() return { {} } end)
  raises("^strategy 'fake' proposed the baseline", h.ask, h, 1)
  h = fake_host(function(s) return { { config = s:at(1), steps = 2.5 } } end)
  raises("steps must be a positive integer", h.ask, h, 1)
  -- an in-trial rung: K steps below the trial's, a positive value in ms
  h = fake_host(function(s) return { { config = s:at(1), steps = 9, rung = { steps = 3,
                                                                       value = 88.5 } } } end)
  local p = h:ask(1)[1]
  eq(p.rung_steps, 3, "the rung's steps")
  eq(p.rung_value, 88.5, "the rung's value")
  h = fake_host(function(s) return { s:at(1) } end)
  eq(h:ask(1)[1].rung_steps, 0, "no rung")
  for _, bad in ipairs({ { steps = 9, value = 1 }, { steps = 0, value = 1 }, { value = 1 },
                         { steps = 2.5, value = 1 }, 3 }) do
    h = fake_host(function(s) return { { config = s:at(1), steps = 9, rung = bad } } end)
    raises("rung%.steps must be a positive integer below the trial's steps %(9%)", h.ask, h, 1)
  end
  h = fake_host(function(s) return { { config = s:at(1), steps = 9, rung = { steps = 1,
                                                                       value = 1 } } } end)
  h.exp.metric = { skip = 1 }
  raises("rung%.steps %(1%) leaves no step time past metric%.skip %(1%)", h.ask, h, 1)
  for _, bad in ipairs({ -1, 0, 0 / 0, math.huge, "1" }) do
    h = fake_host(function(s) return { { config = s:at(1), steps = 9,
                                         rung = { steps = 3, value = bad } } } end)
    raises("rung%.value must be a positive number of ms", h.ask, h, 1)
  end
  h = fake_host(function() return { "xla_gpu_a" } end)
  raises("proposal 1 is a string", h.ask, h, 1)
  h = fake_host(function() error("no luck", 0) end)
  raises("^strategy 'fake': no luck$", h.ask, h, 1)
  local path
  h, path = fake_host(function() local t = nil; return t.x end)
  -- the error is located in this test file (the script runs here), not in the host
  raises("test_strategies%.lua:%d+: attempt to index", h.ask, h, 1)
  assert(path)
  eq(sp:size(), 12.0, "space untouched")
end

local function test_user_file_errors()
  local sp = small_space()
  local function exp_with(text)
    return experiment(sp, { name = "mine", path = write_file(text), options = {}, line = 30 })
  end
  local e = exp_with("local M = {}\nfunction M.new()\n  error('broken')\nend\nreturn M\n")
  raises("^" .. e.strategy.path:gsub("%p", "%%%0") .. ":3: broken", host.new, e, 1, {})
  e = exp_with("local M = {}\nfunction M.new() error('bad option x', 0) end\nreturn M\n")
  raises("^exp%.lua:30: strategy 'mine': bad option x$", host.new, e, 1, {})
  e = exp_with("return {\n  new = function( end }\n")
  raises("^" .. e.strategy.path:gsub("%p", "%%%0") .. ":2:", host.new, e, 1, {})
  e = exp_with("return 42\n")
  raises("^exp%.lua:30: strategy 'mine' must return a table with a new", host.new, e, 1, {})
  e = exp_with("return { new = function() return {} end }\n")
  raises("^exp%.lua:30: strategy 'mine': new%(%) must return an object with an ask", host.new, e,
    1, {})
  e = experiment(sp, { name = "gone", path = "/nonexistent/strategy.lua", line = 30 })
  raises("^exp%.lua:30: cannot load strategy file", host.new, e, 1, {})
end

-- The kit (lua/kit.lua) from a user's strategy file: search/hill_climb.lua, the example of
-- docs/STRATEGIES.md, loaded as strategy_file(...) requires it like any user file would.
local function test_kit_in_a_user_file()
  local f = assert(io.open("search/hill_climb.lua"))
  local text = f:read("a")
  f:close()
  local sp = small_space()
  local e = experiment(sp, { name = "mine", path = write_file(text), options = { startup = 3 },
                             line = 30 })
  local history = history_of(sp, { 1 })
  local h = host.new(e, 5, history)
  local got = drain(h, 2)
  eq(#got, 11, "every configuration but the history's, once")
  e.strategy.options = { startup = -1 }
  raises("^exp%.lua:30: strategy 'mine': startup must be an integer >= 0, got %-1$", host.new,
    e, 1, {})
  e.strategy.options = { steps = 3 }
  raises("^exp%.lua:30: strategy 'mine': unknown option 'steps' %(hill_climb{} takes startup%)$",
    host.new, e, 1, {})
end

-- A module's `history` field says what new() gets: "steps" (the default) every entry with
-- its step times, "results" the entries with n_steps instead, "seen" no entry, a seen set
-- holding every configuration of the history that fits (the baseline's not counted), which
-- kit.seen hands back; the host marks the same ones either way. Anything else is refused at
-- the strategy line. The history may come in parts (host.open, add, start).
local function test_history_levels()
  local sp = small_space()
  local got
  local function exp_with(level)
    _G.FT_TEST_GOT = function(history) got = history end
    local text = string.format("local kit = require('kit')\nlocal M = { history = %s }\n" ..
      "function M.new(space, options, history) FT_TEST_GOT(history)\n" ..
      "  return { seen = kit.seen(space, history), ask = function() return {} end } end\n" ..
      "return M\n", level and string.format("%q", level) or "nil")
    return experiment(sp, { name = "mine", path = write_file(text), options = {}, line = 30 })
  end
  local keys = { 1, 4, 9, 4 } -- a repeat: marked once
  local h = host.new(exp_with(nil), 1, history_of(sp, keys))
  eq(#got, 5, "steps: every entry that fits, the baseline's too")
  eq(#got[1].steps, 2, "steps: with the step times")
  eq(h.strategy.seen.n, 3, "steps: kit.seen marks the entries")
  h = host.new(exp_with("results"), 1, history_of(sp, keys))
  eq(#got, 5, "results: every entry that fits")
  eq(got[1].steps, nil, "results: no step times")
  eq(got[1].n_steps, 2, "results: their count")
  eq(got[1].status, "ok", "results: the outcome")
  eq(got[2].status, "oom", "results: a failure is kept")
  local e = exp_with("seen")
  h = host.open(e)
  eq(h.level, "seen", "the level is read before the history")
  local hist = history_of(sp, keys)
  h:add({ hist[1], hist[2] })
  h:add({ table.unpack(hist, 3) })
  h:start(1)
  eq(#got, 0, "seen: no entry")
  eq(h.strategy.seen, got.seen, "seen: kit.seen hands the history's set back")
  eq(got.seen.n, 3, "seen: the configurations that fit, once each, the baseline not counted")
  for _, k in ipairs(keys) do
    eq(got.seen:has(sp:key(sp:at(k))), true, "seen: marked")
    eq(h.seen[ft.digest(sp:key(sp:at(k)))], true, "the host marked it too")
  end
  eq(got.seen:has(sp:key(sp:at(2))), false, "seen: nothing else")
  eq(got.seen:mark(sp:key(sp:at(2))), true, "the strategy's own set: it marks on")
  eq(h.seen[ft.digest(sp:key(sp:at(2)))], nil, "without marking the host's")
  raises('^exp%.lua:30: strategy \'mine\': history must be "steps", "results" or "seen", ' ..
    "got all$", host.new, exp_with("all"), 1, {})
  _G.FT_TEST_GOT = nil
end

-- kit.unseen gives each configuration of a small space once and then nil (the walk over the
-- rest starts when the samples collide); kit.seen counts the space's configurations, not the
-- baseline; the option checks' texts.
local function test_kit_unseen()
  local kit = require("kit")
  local sp = small_space()
  local seen = kit.seen(sp, { { config = {} } })
  eq(seen.n, 0, "the baseline is not counted")
  local u = kit.unseen(sp, require("rng").new(3))
  local fresh = function(key) return seen:mark(key) end
  for i = 1, 12 do assert(u:take(fresh), "configuration " .. i) end
  eq(seen.n, 12, "all seen")
  eq(u:take(fresh), nil, "nothing left")
  eq(u:enumerating(), true, "the walk over the rest ran when the samples collided")
  raises("^unknown option 'x' %(t{} takes none%)$", kit.check_options, { x = 1 }, "t", {})
  kit.check_options({ budget = {}, metric = {} }, "t", {})
  raises("^gamma must be a number in %(0, 1%), got 1$", kit.number, { gamma = 1 }, "gamma", 0.25,
    function(g) return g > 0 and g < 1 end, "a number in (0, 1)")
  raises("^b must be true or false, got 1$", kit.bool, { b = 1 }, "b", false)
  eq(kit.int({}, "n", 7, 1), 7, "default")
  raises("^unknown strategy 'nope'$", kit.load, { name = "nope" })
end

local function test_render()
  local sp = small_space()
  local h = new_host(sp, "grid")
  local base = assert(h:render("{}"))
  eq(base.json, "{}", "baseline json")
  eq(base.label, "baseline", "baseline label")
  eq(#base.settings, 2, "baseline renders the fixed settings")
  local p = assert(h:render('{"xla_gpu_b":2,"V":"y","xla_gpu_a":false}'))
  eq(p.json, '{"V":"y","xla_gpu_a":false,"xla_gpu_b":2}', "re-rendered canonically")
  local none, msg = h:render('{"xla_gpu_b":9,"V":"y","xla_gpu_a":false}')
  eq(none, nil, "stale config")
  assert(msg:find("no longer fits the experiment's space"), msg)
  -- rendering is not proposing: the grid still offers every configuration once
  eq(#drain(h, 4), 12, "render leaves the seen set alone")
  -- a finished re-run is told, and then the grid skips it
  local g = new_host(sp, "grid")
  g:tell(p.json, { status = "ok", value = 1.5, steps = {}, number = 3 })
  eq(#drain(g, 4), 11, "told configuration skipped")
end

test("random_deterministic", test_random_deterministic)
test("random_exhausts_without_repeats", test_random_exhausts_without_repeats)
test("proposal_shape", test_proposal_shape)
test("history_skipped random", test_history_skipped, "random")
test("history_skipped grid", test_history_skipped, "grid")
test("grid_order_and_shuffle", test_grid_order_and_shuffle)
test("grid_refuses_large_space", test_grid_refuses_large_space)
test("fake_protocol", test_fake_protocol)
test("fake_refusals", test_fake_refusals)
test("user_file_errors", test_user_file_errors)
test("render", test_render)
test("kit_in_a_user_file", test_kit_in_a_user_file)
test("kit_unseen", test_kit_unseen)
test("history_levels", test_history_levels)

