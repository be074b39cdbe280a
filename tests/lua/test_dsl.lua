-- Tests for lua/dsl.lua and lua/util.lua inside the embedded runtime: the space and
-- strategy constructors, the defaults dsl.load fills in, the sandbox the experiment file
-- runs in, and the helpers behind "did you mean" and key lines. Fails by raising.

local dsl = require "dsl"
local util = require "util"
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

-- The message of the error F raises, or an error when it raises none.
local THIS = debug.getinfo(1, "S").source:sub(2) -- the chunk name luatest gave this file

local function test_pow2()
  local p = dsl.pow2("1MiB", "8GiB")
  eq(p.kind, "pow2", "pow2 kind")
  eq(#p.values, 14, "pow2 1MiB..8GiB count")
  eq(p.n, 14, "pow2 n")
  eq(p.values[1], 1048576, "pow2 first")
  eq(p.values[14], 8589934592, "pow2 last")
  for i = 2, #p.values do eq(p.values[i], p.values[i - 1] * 2, "pow2 doubling") end
  eq(math.type(p.values[1]), "integer", "pow2 integers")
  -- Bounds that are not powers of two: from the first power >= lo to the last <= hi.
  local q = dsl.pow2(1000, 5000)
  eq(#q.values, 3, "pow2(1000, 5000) count")
  eq(q.values[1], 1024, "pow2(1000, 5000) first")
  eq(q.values[3], 4096, "pow2(1000, 5000) last")
  eq(dsl.pow2("64KiB", "64KiB").n, 1, "pow2 one value")
end

local function test_range()
  local r = dsl.range(0.7, 0.95, 0.05)
  eq(r.kind, "float", "range kind")
  eq(#r.values, 6, "range count")
  local want = { "0.7", "0.75", "0.8", "0.85", "0.9", "0.95" }
  for i, v in ipairs(r.values) do
    eq(tostring(v), want[i], "range value " .. i)
    eq(string.format("%.17g", v), string.format("%.17g", tonumber(want[i])), "range exact " .. i)
  end
  eq(r.values[6], 0.95, "range last is exactly 0.95")
  eq(#dsl.range(0, 1, 0.1).values, 11, "range(0, 1, 0.1) count")
  eq(dsl.range(0, 1, 0.1).values[4], 0.3, "range(0, 1, 0.1) has 0.3 exactly")
  eq(#dsl.range(1, 2, 0.3).values, 4, "range stops at or below hi")
end

local function test_bool_choice_int()
  local b = dsl.bool()
  eq(b.kind, "bool", "bool kind")
  eq(b.values[1], false, "bool first")
  eq(b.values[2], true, "bool second")
  local c = dsl.choice { "LL", "SIMPLE", 3, true }
  eq(c.kind, "choice", "choice kind")
  eq(c.n, 4, "choice n")
  eq(c.values[3], 3, "choice keeps numbers")
  local i = dsl.int(0, 10, 3)
  eq(i.kind, "int", "int kind")
  eq(i.lo, 0, "int lo")
  eq(i.hi, 10, "int hi")
  eq(i.step, 3, "int step")
  eq(i.n, 4, "int n")
  eq(dsl.int(1, 4).step, 1, "int default step")
  eq(dsl.is_param(b), true, "is_param")
  eq(dsl.is_param({ kind = "bool" }), false, "a plain table is no param")
end

local function test_constructor_errors()
  local line = debug.getinfo(1, "l").currentline + 1
  local err = raises(function() local p = dsl.int(5, 2); return p end)
  eq(err, THIS .. ":" .. line .. ": int(lo, hi[, step]): lo (5) is greater than hi (2)",
     "int error")
  line = debug.getinfo(1, "l").currentline + 1
  err = raises(function() local p = dsl.choice { "a", "a" }; return p end)
  eq(err, THIS .. ":" .. line .. ': choice value 2 repeats "a"', "choice error")
  line = debug.getinfo(1, "l").currentline + 1
  err = raises(function() local p = dsl.pow2("1MiB", "1KiB"); return p end)
  eq(err, THIS .. ":" .. line .. ": pow2(lo, hi): lo (1048576) is greater than hi (1024)",
     "pow2 order")
  -- A decimal unit that is not a power of two would drop a candidate silently ("8GB" < 2^33).
  line = debug.getinfo(1, "l").currentline + 1
  err = raises(function() local p = dsl.pow2("64MiB", "8GB"); return p end)
  eq(err, THIS .. ":" .. line .. ': pow2(lo, hi): "8GB" is 8000000000 bytes (GB is a power of '
     .. 'ten), not a power of two; did you mean "8GiB"?', "pow2 decimal unit")
  eq(dsl.pow2("1.024KB", "2048").n, 2, "pow2: a decimal unit that is a power of two is fine")
  err = raises(function() local p = dsl.range(0, 1, 0); return p end)
  assert(err:find("step must be positive", 1, true), err)
  err = raises(function() local p = dsl.choice "a"; return p end)
  assert(err:find("choice takes a list of values", 1, true), err)
  err = raises(function() local p = dsl.bool(true); return p end)
  assert(err:find("bool() takes no arguments", 1, true), err)
end

local function test_strategies()
  local t = dsl.tpe { startup = 10 }
  eq(t.__strategy, true, "strategy marker")
  eq(t.name, "tpe", "tpe name")
  eq(t.options.startup, 10, "tpe option")
  eq(t.desc, "tpe{startup=10}", "tpe desc")
  eq(t.path, nil, "built-in has no path")
  local h = dsl.halving { base = dsl.tpe {}, eta = 3, min_steps = 10 }
  eq(h.desc, "halving{base=tpe{},eta=3,min_steps=10}", "halving desc")
  eq(h.options.base.name, "tpe", "halving base")
  eq(dsl.grid {}.desc, "grid{}", "grid desc")
  eq(dsl.random().desc, "random{}", "random() without a table")
end

local MINIMAL = [[
return experiment {
  command = { "python3", "train.py", 3 },
  metric = { json = "step_ms" },
  vars = { A = bool() },
}
]]

local function test_defaults()
  local x = dsl.load("some/dir/bench.lua", MINIMAL)
  eq(x.name, "bench", "name from the file name")
  eq(x.model, "bench", "model defaults to name")
  eq(x.hardware, "auto", "hardware")
  eq(x.command[3], "3", "numbers in command become strings")
  eq(x.workdir, nil, "workdir")
  eq(next(x.env), nil, "env")
  eq(next(x.fixed_flags), nil, "fixed_flags")
  eq(next(x.flags), nil, "flags")
  eq(x.vars.A.kind, "bool", "vars")
  eq(x.metric.kind, "json", "metric kind")
  eq(x.metric.field, "step_ms", "metric field")
  eq(x.metric.skip, 0, "metric skip")
  eq(x.metric.reduce, "median", "metric reduce")
  eq(x.metric.scale, 1, "metric scale")
  eq(x.metric.min_steps, 1, "metric min_steps")
  eq(x.budget.trials, 20, "budget trials")
  eq(x.budget.hours, 0, "budget hours")
  eq(x.budget.steps, 0, "budget steps")
  eq(x.parallel, 1, "parallel")
  eq(x.gpus_per_trial, 0, "gpus_per_trial")
  eq(x.timeout, 0, "timeout")
  eq(x.grace, 10, "grace")
  eq(x.seed, nil, "seed")
  eq(x.strategy.name, "random", "strategy")
  eq(next(x.strategy.options), nil, "strategy options")
  eq(#x.oom_patterns, 0, "oom_patterns")
  eq(#x.invalid_patterns, 0, "invalid_patterns")
  eq(x.lines.command, 2, "lines.command")
  eq(x.lines.vars, 4, "lines.vars")
  eq(x.lines.experiment, 1, "lines.experiment")
  eq(x.space:size(), 2, "space size")
end

local function test_values_converted()
  local x = dsl.load("d/x.lua", [[
local base = { steps = 50 }
local e = experiment {
  command = { "./run", "{steps}" },
  metric = { pattern = "took ([%d.]+) us", unit = "us", skip = 2 },
  flags = { xla_gpu_autotune_level = int(0, 4) },
  fixed_flags = { xla_gpu_enable_triton_gemm = false },
  env = { OMP_NUM_THREADS = 8, TAG = "x" },
  budget = { trials = 30, hours = "90m", steps = base.steps },
  timeout = "1h30m", grace = 2.5, seed = 42.0,
  strategy = "grid",
  workdir = "work",
}
return e
]])
  eq(x.metric.kind, "pattern", "pattern kind")
  eq(x.metric.scale, 0.001, "unit us")
  eq(x.metric.min_steps, 3, "min_steps = skip + 1")
  eq(x.env.OMP_NUM_THREADS, "8", "env numbers become strings")
  eq(x.fixed_flags.xla_gpu_enable_triton_gemm, false, "fixed flag")
  eq(x.budget.hours, 1.5, "hours from a duration")
  eq(x.budget.steps, 50, "steps")
  eq(x.timeout, 5400, "timeout")
  eq(x.grace, 2.5, "grace")
  eq(math.type(x.seed), "integer", "seed is an integer")
  eq(x.seed, 42, "seed")
  eq(x.strategy.name, "grid", "strategy by name")
  eq(x.workdir, "d/work", "workdir relative to the file")
  eq(x.lines.experiment, 2, "experiment line from a non-tail call")
  eq(x.lines.metric, 4, "lines.metric")
  local m = dsl.matcher(x.metric.pattern)
  eq(m("step 3 took 1500.5 us"), 1500.5, "matcher")
  eq(m("nothing here"), nil, "matcher without a match")
end

local function test_sandbox()
  local x = dsl.load("s.lua", [[
LEAKED = true
local seen = tostring(io) .. tostring(require) .. tostring(ft) .. tostring(debug) .. tostring(load)
string.upper = nil
return experiment {
  name = seen,
  command = { "a", os.getenv("HOME") and "home" or "nohome" },
  metric = { json = "ms" },
  vars = { A = choice { math.floor(2.5), string.rep("x", 2) } },
}
]])
  eq(x.name, "nilnilnilnilnil", "io, require, ft, debug and load are hidden")
  eq(rawget(_G, "LEAKED"), nil, "globals stay in the file's environment")
  eq(type(string.upper), "function", "the host's string table is untouched")
  eq(x.vars.A.values[1], 2, "math is there")
end

local function test_load_errors()
  local err = raises(function() return dsl.load("e.lua", "return experiment { nmae = 'x' }") end)
  eq(err, "e.lua:1: unknown key 'nmae' (did you mean 'name'?)", "typo")
  err = raises(function() return dsl.load("e.lua", "return 42") end)
  eq(err, "e.lua:1: the file must end with `return experiment { ... }`", "no experiment")
  err = raises(function() return dsl.load("e.lua", "return experiment 'x'") end)
  eq(err, "e.lua:1: experiment takes one table: return experiment { ... }", "experiment 'x'")
  err = raises(function()
    return dsl.load("e.lua", MINIMAL:gsub("vars = { A = bool%(%) }", "vars = { A = true }"))
  end)
  eq(err, "e.lua:4: 'A' has a single value: move it to `env`, or search it with bool(), "
      .. "choice { ... }, int(lo, hi), range(lo, hi, step) or pow2(lo, hi)", "single value var")
  err = raises(function()
    return dsl.load("e.lua", MINIMAL:gsub("step_ms\" }", "step_ms\", reduce = \"avg\" }"))
  end)
  eq(err, "e.lua:3: 'metric.reduce' must be \"median\", \"mean\" or \"min\", got \"avg\"", "reduce")
  err = raises(function()
    return dsl.load("e.lua", MINIMAL:gsub("  metric = { json = \"step_ms\" },\n", ""))
  end)
  eq(err, 'e.lua:1: metric is required: metric = { json = "step_time_ms" } or '
      .. '{ pattern = "step %d+: ([%d.]+) ms" }', "metric missing")
end

local function test_util()
  eq(util.levenshtein("kitten", "sitting"), 3, "levenshtein")
  eq(util.levenshtein("", "abc"), 3, "levenshtein empty")
  eq(util.did_you_mean("tiemout", { "timeout", "grace", "name" }), "timeout", "transposition")
  eq(util.did_you_mean("gpus", { "gpus_per_trial", "grace" }), "gpus_per_trial", "prefix")
  eq(util.did_you_mean("zzzzzz", { "timeout", "grace" }), nil, "nothing close")
  eq(util.did_you_mean("ab", { "abc" }), "abc", "short words by distance")
  local text = "a = 1\nreturn experiment {\n  name = 'x',\n  metric = { json = 'y',\n"
               .. "    skip = 2 },\n  [\"budget\"] = {},\n  if_x == 3,\n}\n"
  eq(util.locate_key(text, "name", 2), 3, "locate name")
  eq(util.locate_key(text, "skip", 4), 5, "locate nested")
  eq(util.locate_key(text, "json", 2), 4, "locate after {")
  eq(util.locate_key(text, "budget", 2), 6, "locate [\"key\"] =")
  eq(util.locate_key(text, "if_x", 2), 2, "== is no assignment")
  eq(util.locate_key(text, "a", 2), 1, "found before the call")
  eq(util.locate_key(text, "missing", 2), 2, "fallback")
  eq(util.find_call(text, "experiment"), 2, "find_call")
  eq(util.last_line("x\ny\n\n-- c\n\n"), 2, "last_line")
  eq(util.pattern_captures("step (%d+)"), 1, "one capture")
  eq(select(2, util.pattern_captures("()x")), 1, "position capture")
  eq(util.pattern_captures("[%]](a)"), 1, "escaped ] in a set")
  eq(util.pattern_captures("%b()"), 0, "%b() is no capture")
  eq(util.pattern_captures("(a"), nil, "unclosed capture")
end

test("pow2", test_pow2)
test("range", test_range)
test("bool_choice_int", test_bool_choice_int)
test("constructor_errors", test_constructor_errors)
test("strategies", test_strategies)
test("defaults", test_defaults)
test("values_converted", test_values_converted)
test("sandbox", test_sandbox)
test("load_errors", test_load_errors)
test("util", test_util)
