-- lua/host.lua's replay of a history given as JSON (what src/luahost/strategy.c passes at resume and
-- for a warm start): each item becomes the strategy's entry itself instead of being copied
-- (a 10,000-trial resume held both). The strategy must see the same history as from items
-- given as decoded tables (the copying path): same proposals for a seeded strategy, on a
-- history of 700 trials with repeats of differing step counts (tpe{} weighs a repeat by its
-- steps), step budgets and numbers (halving{}'s brackets), failures, the baseline, a
-- partial configuration (a prior) and one that fits nothing.

local space = require("space")
local host = require("host")
local tap = require("tap")
local test, eq = tap.test, tap.eq

-- 2 * 14 * 4 * 6 * 2 = 1344 configurations.
local function big_space()
  return space.new({ xla_gpu_lhs = { kind = "bool" },
                     xla_gpu_thr = { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                     xla_tpu_foo = { kind = "int", lo = 1, hi = 4 } },
                   { MEM = { kind = "float", lo = 0.7, hi = 0.95, step = 0.05 },
                     PROTO = { kind = "choice", values = { "a", "b" } } }, {}, {}, "exp.lua")
end

local STATUS = { "ok", "ok", "ok", "oom", "ok", "timeout", "ok", "pruned", "ok", "crash" }

-- The history as flagtune stores it: JSON items, or (DECODED) the same with decoded tables.
local function history(sp, decoded)
  local hist, n = {}, 0
  local function add(json, status, value, steps, budget, number)
    n = n + 1
    local item = { status = status, value = value, steps = steps, steps_budget = budget,
                   number = number }
    if decoded then item.config = ft.json_decode(json) else item.json = json end
    hist[n] = item
  end
  add("{}", "ok", 100.0, { 100.0, 100.5 }, 0, 0)
  for i = 1, 700 do
    local k = (i * 389) % 1344 + 1
    if i % 7 == 0 then k = ((i // 7) * 389) % 1344 + 1 end -- a repeat of an earlier trial
    local status = STATUS[i % #STATUS + 1]
    local steps = {}
    for s = 1, 1 + (i * 5) % 9 do steps[s] = 50 + (i * 13 + s) % 41 end
    local value = status == "ok" and 50 + ((i * 37) % 400) / 10 or nil
    add(sp:key(sp:at(k)), status, value, status == "ok" and steps or {}, 5 * (1 + i % 3), i)
  end
  add('{"xla_gpu_lhs":true,"gone":3}', "ok", 61.0, { 61.0 }, 0, 701) -- a prior
  add('{"gone":1}', "ok", 40.0, { 40.0 }, 0, 702)                     -- fits nothing
  return hist
end

local function experiment_of(sp, name, options)
  return { path = "exp.lua", space = sp, strategy = { name = name, options = options, line = 30 },
           budget = { trials = 2000, hours = 8, steps = 15 } }
end

local drive

local function proposals(name, options, decoded, seed)
  local sp = big_space()
  return drive(host.new(experiment_of(sp, name, options), seed, history(sp, decoded)))
end

-- Up to 80 proposals of H, each told a result made from its JSON.
function drive(h)
  local out = {}
  for i = 1, 40 do
    local got = h:ask(2)
    if #got == 0 then break end
    for _, p in ipairs(got) do
      out[#out + 1] = p.json .. "@" .. p.steps
      local v = 50 + (#p.json * 7 + i) % 30
      h:tell(p.json, { status = i % 5 == 0 and "oom" or "ok", value = i % 5 ~= 0 and v or nil,
                       steps = { v, v }, steps_budget = p.steps, number = 1000 + #out })
    end
  end
  return table.concat(out, "\n"), h.n_partial
end

local function same_as_copied(name, options, seeded)
  local copied, np_copied = proposals(name, options, true, 7)
  local inplace, np_inplace = proposals(name, options, false, 7)
  assert(#copied > 0, name .. ": no proposals")
  eq(inplace, copied, name .. ": the same proposals from a history given as JSON")
  eq(np_inplace, np_copied, name .. ": the same prior")
  if seeded then
    local other = proposals(name, options, false, 8)
    assert(other ~= inplace, name .. ": another seed, other proposals (the test can tell)")
  end
end

-- The JSON items became the entries: their JSON is dropped, the decoded configuration kept.
local function test_items_reused()
  local sp = big_space()
  local hist = history(sp, false)
  local exp = { path = "exp.lua", space = sp, strategy = { name = "random", line = 30 },
                budget = { trials = 100 } }
  local h = host.new(exp, 1, hist)
  eq(hist[2].json, nil, "the item's JSON is dropped")
  eq(type(hist[2].config), "table", "the item holds its configuration")
  eq(sp:key(hist[2].config), sp:key(sp:at((1 * 389) % 1344 + 1)), "the right configuration")
  eq(hist[1].baseline, true, "the baseline is marked")
  eq(#hist[3].steps, #history(sp, true)[3].steps, "steps kept")
  eq(h.seen[ft.digest(sp:key(hist[2].config))], true, "marked seen")
end

-- A "seen"-level strategy given the stored texts as keys (Host:add_ids, what resume does when
-- the sweep's space digest is its space's) proposes what it proposes from the decoded history:
-- the same seen set. The texts are those of the history that fit the space (in a sweep whose
-- digest matches, every stored text is one of its keys).
local function same_by_keys(name)
  local sp = big_space()
  local h = host.open(experiment_of(sp, name, {}))
  eq(h.space_digest, sp:digest(), name .. ": the host knows its space's digest")
  local keys = {}
  for _, item in ipairs(history(sp, false)) do
    if not item.json:find("gone", 1, true) then keys[#keys + 1] = ft.digest(item.json) end
  end
  keys[#keys + 1] = ft.digest("{}") -- the baseline's, never marked
  h:add_ids(keys)
  local by_keys = drive(h:start(7))
  local decoded = proposals(name, {}, false, 7)
  assert(#decoded > 0, name .. ": no proposals")
  eq(by_keys, decoded, name .. ": the same proposals from the stored keys")
end

test("tpe", same_as_copied, "tpe", {}, true)
test("random by keys", same_by_keys, "random")
test("grid by keys", same_by_keys, "grid")
test("halving over tpe", same_as_copied, "halving", { min_steps = 5 }) -- promotes the history's
test("random", same_as_copied, "random", {}, true)
test("hill_climb", same_as_copied, "hill_climb", {}, true)
test("items reused", test_items_reused)
tap.finish()
