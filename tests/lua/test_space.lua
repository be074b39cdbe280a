-- lua/space.lua and lua/rng.lua: sizes, enumeration, encodings, canonical JSON, rendering,
-- labels, name and value validation. Param descriptors are written as lua/dsl.lua's
-- constructors return them, so these tests do not depend on the DSL.

local space = require("space")
local rng = require("rng")
local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises

local function example()
  return space.new({
    xla_gpu_enable_latency_hiding_scheduler = { kind = "bool", line = 5 },
    xla_gpu_all_gather_combine_threshold_bytes = { kind = "pow2", lo = 1 << 20, hi = 8 << 30,
                                                   line = 6 },
    xla_tpu_foo = { kind = "int", lo = 1, hi = 4, step = 1, line = 7 },
  }, {
    XLA_PYTHON_CLIENT_MEM_FRACTION = { kind = "float", lo = 0.70, hi = 0.95, step = 0.05,
                                       line = 9 },
    NCCL_PROTO = { kind = "choice", values = { "LL,LL128,SIMPLE", "SIMPLE" }, line = 10 },
  }, { xla_gpu_autotune_level = 0, xla_dump_hlo_as_text = true, xla_tpu_bar = 0.5 },
  { PYTHONUNBUFFERED = "1", A_FIRST = "x" }, "exp.lua")
end

local function test_params_and_size()
  local sp = example()
  local names, targets = {}, {}
  for i, p in ipairs(sp.params) do names[i], targets[i] = p.name, p.target end
  eq(table.concat(names, " "), "xla_gpu_all_gather_combine_threshold_bytes " ..
    "xla_gpu_enable_latency_hiding_scheduler xla_tpu_foo NCCL_PROTO XLA_PYTHON_CLIENT_MEM_FRACTION",
    "params order")
  eq(table.concat(targets, " "), "xla xla tpu env env", "targets")
  eq(sp.by_name.xla_gpu_all_gather_combine_threshold_bytes.n, 14, "pow2 1MiB..8GiB")
  eq(sp.by_name.XLA_PYTHON_CLIENT_MEM_FRACTION.n, 6, "range 0.70..0.95 step 0.05")
  eq(sp:size(), 2.0 * 14 * 4 * 6 * 2, "size")
  eq(sp.by_name.xla_tpu_foo.line, 7, "line kept")
  eq(space.new({}, {}, {}, {}):size(), 1.0, "nothing searched: only the baseline")
end

local function test_value_lists()
  local sp = space.new({
    xla_a = { kind = "float", lo = 0.1, hi = 1.0, step = 0.1 },
    xla_b = { kind = "int", lo = 0, hi = 10, step = 3 },
    xla_c = { kind = "pow2", lo = 1000, hi = 5000 },
    xla_d = { kind = "float", lo = 0.70, hi = 0.95, step = 0.05 },
  }, {}, {}, {})
  local a = sp.by_name.xla_a
  eq(a.n, 10, "range(0.1, 1.0, 0.1) count")
  eq(a:value(3), 0.3, "no drift at 0.3")
  eq(a:value(10), 1.0, "ends at hi")
  eq(math.type(a:value(10)), "float", "range values are floats")
  local b = sp.by_name.xla_b
  eq(b.n, 4, "int(0, 10, 3) count")
  eq(b:value(4), 9, "int last")
  eq(b:index(6), 3, "int index")
  eq(b:index(7), nil, "off-step int")
  local c = sp.by_name.xla_c
  eq(c.n, 3, "pow2(1000, 5000) count")
  eq(c:value(1), 1024, "first power >= lo")
  eq(c:value(3), 4096, "last power <= hi")
  eq(c:index(3000), nil, "not a power of two")
  local d = sp.by_name.xla_d
  eq(d:value(6), 0.95, "0.95 exactly")
  eq(d:index(0.9500000001), 6, "tolerant index")
  eq(d:index(0.97), nil, "between values")
end

local function test_at_enumerates_each_once()
  local sp = example()
  local seen, n = {}, 0
  for k = 1, math.tointeger(sp:size()) do
    local c = sp:at(k)
    assert(sp:validate(c), "at() gives valid configurations")
    local key = sp:key(c)
    if seen[key] then error("at(" .. k .. ") repeats " .. key) end
    seen[key], n = true, n + 1
  end
  eq(n, 1344, "configurations")
  -- the last parameter varies fastest
  eq(sp:at(1).XLA_PYTHON_CLIENT_MEM_FRACTION, 0.7, "at(1) last param")
  eq(sp:at(2).XLA_PYTHON_CLIENT_MEM_FRACTION, 0.75, "at(2) last param")
  eq(sp:at(2).xla_gpu_all_gather_combine_threshold_bytes, 1 << 20, "at(2) first param")
  raises("outside", sp.at, sp, 0)
  raises("outside", sp.at, sp, 1345)
end

local function test_encode_decode_round_trips()
  local sp = example()
  for _, p in ipairs(sp.params) do
    for i = 1, p.n do
      local v = p:value(i)
      eq(p:index(v), i, p.name .. " index")
      local u = p:encode(v)
      assert(u >= 0 and u <= 1, p.name .. " encodes into [0, 1]")
      eq(p:decode(u), v, p.name .. " decode(encode(v))")
    end
    eq(p:decode(-3), p:value(1), p.name .. " clamps below")
    eq(p:decode(7), p:value(p.n), p.name .. " clamps above")
  end
  local b = sp.by_name.xla_gpu_enable_latency_hiding_scheduler
  eq(b:encode(false), 0, "bool false")
  eq(b:encode(true), 1, "bool true")
  local ch = sp.by_name.NCCL_PROTO
  eq(ch:encode("SIMPLE"), 0.75, "choice (i - 0.5) / n")
  local pw = sp.by_name.xla_gpu_all_gather_combine_threshold_bytes
  eq(pw:encode(1 << 20), 0.0, "pow2 lo")
  eq(pw:encode(8 << 30), 1.0, "pow2 hi")
end

local function test_canonical_json()
  local sp = example()
  local a, b = {}, {}
  local order = {}
  for _, p in ipairs(sp.params) do order[#order + 1] = p end
  for i = 1, #order do a[order[i].name] = order[i]:value(order[i].n) end
  for i = #order, 1, -1 do b[order[i].name] = order[i]:value(order[i].n) end
  eq(sp:encode_json(a), sp:encode_json(b), "stable under key order")
  eq(sp:encode_json(a), '{"NCCL_PROTO":"SIMPLE","XLA_PYTHON_CLIENT_MEM_FRACTION":0.95,' ..
    '"xla_gpu_all_gather_combine_threshold_bytes":8589934592,' ..
    '"xla_gpu_enable_latency_hiding_scheduler":true,"xla_tpu_foo":4}', "canonical text")
  eq(sp:key(a), sp:encode_json(a), "key is the canonical JSON")
  eq(sp:encode_json({}), "{}", "baseline")
  -- a round trip through the C JSON parser is exact
  for k = 1, math.tointeger(sp:size()), 97 do
    local c = sp:at(k)
    local back = assert(sp:decode_json(sp:encode_json(c)))
    for name, v in pairs(c) do
      eq(back[name], v, "round trip " .. name)
      eq(math.type(back[name]), math.type(v), "round trip type " .. name)
    end
  end
end

local function test_json_strings_and_coercion()
  local odd = 'a"b\\c\nd\1e\127f é'
  local sp = space.new({ xla_s = { kind = "choice", values = { odd, "plain", 2.5, 3, false } },
                         xla_r = { kind = "float", lo = 0, hi = 2, step = 0.5 } }, {}, {}, {})
  local json = sp:encode_json({ xla_s = odd, xla_r = 1 })
  eq(json, '{"xla_r":1,"xla_s":"a\\"b\\\\c\\nd\\u0001e\\u007ff é"}', "escapes")
  local back = assert(sp:decode_json(json))
  eq(back.xla_s, odd, "string round trip")
  eq(back.xla_r, 1.0, "integral float coerced")
  eq(math.type(back.xla_r), "float", "range value decodes as a float")
  back = assert(sp:decode({ xla_s = 3.0, xla_r = 0.5 }))
  eq(math.type(back.xla_s), "integer", "choice number keeps the listed form")
  eq(sp:decode({ xla_s = "plain", xla_r = 0.7 }), nil, "off-grid float refused")
  local ok, msg = sp:decode({ xla_s = "plain", xla_nope = 1, xla_r = 0.5 })
  eq(ok, nil, "unknown key refused")
  assert(msg:find("unknown parameter"), msg)
  ok, msg = sp:decode_json("not json")
  eq(ok, nil, "bad JSON")
  assert(msg:find("invalid JSON"), msg)
end

local function test_render_and_label()
  local sp = example()
  local c = { xla_gpu_enable_latency_hiding_scheduler = true,
              xla_gpu_all_gather_combine_threshold_bytes = 8 << 30, xla_tpu_foo = 3,
              XLA_PYTHON_CLIENT_MEM_FRACTION = 0.9500000001, NCCL_PROTO = "SIMPLE" }
  local got = {}
  for i, s in ipairs(sp:render(c)) do got[i] = s.target .. ":" .. s.name .. "=" .. s.value end
  eq(table.concat(got, " "), table.concat({
    "xla:xla_dump_hlo_as_text=true", "xla:xla_gpu_autotune_level=0", "tpu:xla_tpu_bar=0.5",
    "xla:xla_gpu_all_gather_combine_threshold_bytes=8589934592",
    "xla:xla_gpu_enable_latency_hiding_scheduler=true", "tpu:xla_tpu_foo=3",
    "env:A_FIRST=x", "env:PYTHONUNBUFFERED=1",
    "env:NCCL_PROTO=SIMPLE", "env:XLA_PYTHON_CLIENT_MEM_FRACTION=0.95" }, " "), "render")
  local base = {}
  for i, s in ipairs(sp:render({})) do base[i] = s.name end
  eq(table.concat(base, " "), "xla_dump_hlo_as_text xla_gpu_autotune_level xla_tpu_bar " ..
    "A_FIRST PYTHONUNBUFFERED", "baseline renders only fixed settings")
  eq(sp:label(c), "all_gather_combine_threshold_bytes=8GiB enable_latency_hiding_scheduler=true " ..
    "xla_tpu_foo=3 NCCL_PROTO=SIMPLE XLA_PYTHON_CLIENT_MEM_FRACTION=0.95", "label")
  eq(sp:label({}), "baseline", "baseline label")
end

-- XLA's setter for xla_gpu_disable_async_collectives refuses '' (it splits at commas and
-- every piece must name a collective: openxla/xla at 1ff3f7d, xla/debug_options_flags.cc,
-- setter_for_xla_gpu_disable_async_collectives; jaxlib 0.11.2 on an H100 refused it), so the
-- catalog's candidate '' (all collectives async, XLA's default) leaves the flag out. An empty
-- command-buffer list is a real setting (command buffers off: the H100 ran it) and stays.
local function test_render_leaves_out_refused_empty()
  local sp = space.new({
    xla_gpu_disable_async_collectives = { kind = "choice", values = { "", "allreduce" }, line = 3 },
    xla_gpu_enable_command_buffer = { kind = "choice", values = { "", "FUSION" }, line = 4 },
  }, {}, { xla_fuel = "" }, {})
  local function rendered(c)
    local got = {}
    for i, s in ipairs(sp:render(c)) do got[i] = s.name .. "=" .. s.value end
    return table.concat(got, " ")
  end
  eq(rendered({ xla_gpu_disable_async_collectives = "", xla_gpu_enable_command_buffer = "" }),
     "xla_gpu_enable_command_buffer=", "'' left out, command buffers off kept")
  eq(rendered({ xla_gpu_disable_async_collectives = "allreduce", xla_gpu_enable_command_buffer = "FUSION" }),
     "xla_gpu_disable_async_collectives=allreduce xla_gpu_enable_command_buffer=FUSION", "set")
  eq(sp:label({ xla_gpu_disable_async_collectives = "", xla_gpu_enable_command_buffer = "" }),
     "disable_async_collectives= enable_command_buffer=", "the label still names the choice")
  eq(space.left_out("xla_gpu_disable_async_collectives", ""), true, "left_out")
  eq(space.left_out("xla_gpu_disable_async_collectives", "ALLREDUCE"), false, "a value is set")
  eq(space.left_out("xla_no_such_flag", ""), false, "unknown flags are passed as written")
end

local function test_validate()
  local sp = example()
  local c = sp:at(5)
  assert(sp:validate(c))
  assert(sp:validate({}), "baseline is valid")
  local bad = {}
  for k, v in pairs(c) do bad[k] = v end
  bad.NCCL_PROTO = nil
  local ok, msg = sp:validate(bad)
  eq(ok, nil, "partial config")
  eq(msg, "missing parameter NCCL_PROTO", "missing message")
  bad.NCCL_PROTO, bad.xla_tpu_foo = "SIMPLE", 9
  ok, msg = sp:validate(bad)
  eq(msg, "xla_tpu_foo = 9 is not a value of int(1, 4, 1)", "bad value message")
  bad.xla_tpu_foo, bad.EXTRA = 1, 1
  ok, msg = sp:validate(bad)
  eq(msg, 'unknown parameter "EXTRA"', "unknown message")
  ok, msg = sp:validate(42)
  eq(ok, nil, "not a table")
end

local function test_errors_are_located()
  raises('^exp%.lua:3: "XLA_FOO" is not an XLA flag name',
    space.new, { XLA_FOO = { kind = "bool", line = 3 } }, {}, {}, {}, "exp.lua")
  raises('^exp%.lua:4: "1BAD" is not an environment variable name',
    space.new, {}, { ["1BAD"] = { kind = "bool", line = 4 } }, {}, {}, "exp.lua")
  raises("^exp%.lua:5: xla_a: choice{} lists \"x\" twice",
    space.new, { xla_a = { kind = "choice", values = { "x", "y", "x" }, line = 5 } }, {}, {}, {},
    "exp.lua")
  raises("^exp%.lua:6: xla_a: choice{} needs at least one value",
    space.new, { xla_a = { kind = "choice", values = {}, line = 6 } }, {}, {}, {}, "exp.lua")
  raises("^exp%.lua:7: xla_a: pow2%(3000, 4000%) holds no power of two",
    space.new, { xla_a = { kind = "pow2", lo = 3000, hi = 4000, line = 7 } }, {}, {}, {},
    "exp.lua")
  raises("^exp%.lua:8: xla_a is both fixed",
    space.new, { xla_a = { kind = "bool", line = 8 } }, {}, { xla_a = true }, {}, "exp.lua")
  raises("^exp%.lua:9: XLA_FLAGS is assembled by flagtune",
    space.new, {}, { XLA_FLAGS = { kind = "bool", line = 9 } }, {}, {}, "exp.lua")
  raises("^exp%.lua:2: XLA_FLAGS is assembled by flagtune",
    space.new, {}, {}, {}, { XLA_FLAGS = "--xla_foo" }, "exp.lua", { env = 2 })
  raises("^exp%.lua:10: xla_a: int%(5, 1%): lo is above hi",
    space.new, { xla_a = { kind = "int", lo = 5, hi = 1, line = 10 } }, {}, {}, {}, "exp.lua")
  raises("^exp%.lua:11: xla_a: expected bool",
    space.new, { xla_a = { kind = "wat", line = 11 } }, {}, {}, {}, "exp.lua")
end

local function test_rng()
  local a, b = rng.new(42), rng.new(42)
  -- xoshiro256** seeded by splitmix64(42): checked against the reference C code
  eq(a:next64(), 1546998764402558742, "first word")
  eq(a:next64(), 6990951692964543102, "second word")
  eq(a:next64(), -5902157311460992607, "third word")
  b:next64(); b:next64(); b:next64()
  for _ = 1, 100 do
    local x = a:random()
    assert(x >= 0 and x < 1, "random in [0, 1)")
    eq(x, b:random(), "same seed, same stream")
  end
  local counts = {}
  for _ = 1, 6000 do
    local k = a:int(1, 6)
    counts[k] = (counts[k] or 0) + 1
  end
  for k = 1, 6 do assert(counts[k] > 850 and counts[k] < 1150, "int(1, 6) uniform-ish") end
  local sum, sq = 0, 0
  for _ = 1, 4000 do
    local z = a:normal()
    sum, sq = sum + z, sq + z * z
  end
  assert(math.abs(sum / 4000) < 0.1 and math.abs(sq / 4000 - 1) < 0.1, "normal(0, 1)")
  local t = a:shuffle({ 1, 2, 3, 4, 5, 6, 7, 8 })
  table.sort(t)
  eq(table.concat(t, ","), "1,2,3,4,5,6,7,8", "shuffle permutes")
  eq(rng.new(7):choice({}), nil, "choice of nothing")
  local c, d = rng.new(1):split(), rng.new(1):split()
  eq(c:next64(), d:next64(), "split is deterministic")
  raises("seed must be an integer", rng.new, "x")
end

local function test_sample()
  local sp = example()
  local r1, r2 = rng.new(9), rng.new(9)
  for _ = 1, 50 do
    local c = sp:sample(r1)
    assert(sp:validate(c))
    eq(sp:key(c), sp:key(sp:sample(r2)), "sample is deterministic")
  end
end

test("params_and_size", test_params_and_size)
test("value_lists", test_value_lists)
test("at_enumerates_each_once", test_at_enumerates_each_once)
test("encode_decode_round_trips", test_encode_decode_round_trips)
test("canonical_json", test_canonical_json)
test("json_strings_and_coercion", test_json_strings_and_coercion)
test("render_and_label", test_render_and_label)
test("render_leaves_out_refused_empty", test_render_leaves_out_refused_empty)
test("validate", test_validate)
test("errors_are_located", test_errors_are_located)
test("rng", test_rng)
test("sample", test_sample)

-- Space:decode_key (a history's replay) is Space:decode and Space:key at once: the same
-- configuration and key for every stored text, canonical or not, and nil for every one
-- decode refuses (a missing or unknown name, a value off the list, not an object).
local function test_decode_key_is_decode_then_key()
  local sp = example()
  local texts = { "{}", "[]", "3", '{"gone":1}' }
  for k = 1, sp:size(), 7 do
    local c = sp:at(k)
    texts[#texts + 1] = sp:key(c)
    local extra, missing, off = {}, {}, {}
    for name, v in pairs(c) do extra[name], missing[name], off[name] = v, v, v end
    extra.gone = 1
    missing[sp.params[1].name] = nil
    off[sp.params[#sp.params].name] = "nonsense"
    local near = {} -- values a hair off, an integer written as a float: canonical again
    for name, v in pairs(c) do near[name] = v end
    near.XLA_PYTHON_CLIENT_MEM_FRACTION = near.XLA_PYTHON_CLIENT_MEM_FRACTION + 1e-12
    near.xla_tpu_foo = near.xla_tpu_foo + 0.0
    for _, t in ipairs({ extra, missing, off, near }) do
      local parts = {}
      for name, v in pairs(t) do
        parts[#parts + 1] = string.format("%q: %s", name, type(v) == "string" and
          string.format("%q", v) or tostring(v))
      end
      texts[#texts + 1] = "{" .. table.concat(parts, ", ") .. "}"
    end
  end
  local fits = 0
  for _, text in ipairs(texts) do
    local tbl = ft.json_decode(text)
    local want = sp:decode(tbl)
    local got, key = sp:decode_key(tbl)
    eq(got ~= nil, want ~= nil, "fits alike: " .. text)
    if want then
      fits = fits + 1
      eq(key, sp:key(want), "the same key: " .. text)
      eq(sp:key(got), sp:key(want), "the same configuration: " .. text)
      for name, v in pairs(want) do eq(got[name], v, "canonical " .. name .. ": " .. text) end
    end
  end
  assert(fits > 3 and fits < #texts, "both kinds were tried")
end
test("decode_key_is_decode_then_key", test_decode_key_is_decode_then_key)

-- Space:digest names the keys a space makes: the same for the same parameters however they
-- are written, another one for any change to a key (a name, a kind, a value or a bound) or to
-- the canonical form's version.
local function test_digest()
  local sp = example()
  local d = sp:digest()
  eq(type(d), "string", "a string")
  assert(d:find("^%x+$"), "hex: " .. d)
  eq(example():digest(), d, "the same space, the same digest")
  local same = example()
  same.fixed = {}
  eq(same:digest(), d, "fixed settings make no key")
  local function with(flags)
    return space.new(flags, {}, {}, {}):digest()
  end
  local base = with({ xla_a = { kind = "float", lo = 0.5, hi = 0.9, step = 0.1 } })
  local others = {
    with({ xla_b = { kind = "float", lo = 0.5, hi = 0.9, step = 0.1 } }),
    with({ xla_a = { kind = "float", lo = 0.5, hi = 0.9, step = 0.05 } }),
    with({ xla_a = { kind = "float", lo = 0.5 + 1e-15, hi = 0.9, step = 0.1 } }),
    with({ xla_a = { kind = "choice", values = { 0.5, 0.6, 0.7, 0.8, 0.9 } } }),
    with({ xla_a = { kind = "choice", values = { "0.5", "0.6", "0.7", "0.8", "0.9" } } }),
    with({ xla_a = { kind = "float", lo = 0.5, hi = 0.9, step = 0.1 }, xla_c = { kind = "bool" } }),
  }
  for i, o in ipairs(others) do assert(o ~= base, "change " .. i .. " makes another digest") end
  local version = space.CANON_VERSION
  space.CANON_VERSION = version + 1
  local raised = with({ xla_a = { kind = "float", lo = 0.5, hi = 0.9, step = 0.1 } })
  space.CANON_VERSION = version
  assert(raised ~= base, "another canonical form, another digest")
end
test("digest", test_digest)
