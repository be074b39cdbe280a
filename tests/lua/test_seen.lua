-- The seen sets' memory (lua/kit.lua, lua/host.lua): keys held by ft.digest (src/luahost/lhost.c),
-- MurmurHash3_x64_128 against the published vectors, digests distinct over a whole space,
-- and the Lua heap a long random{} sweep keeps per trial.

local space = require("space")
local host = require("host")
local kit = require("kit")
local tap = require("tap")
local heapcheck = require("heapcheck")
local test, eq = tap.test, tap.eq

local function unhex(h) return (h:gsub("..", function(b) return string.char(tonumber(b, 16)) end)) end

test("digest: MurmurHash3_x64_128 (seed 0) of the published vectors", function()
  -- Guava's HashTestUtils / Boost.Hash2's murmur3_128 vectors, hex of the 16 bytes h1 h2
  -- little-endian, as ft.digest stores them after its 0x01 marker.
  local vectors = {
    ["The quick brown fox jumps over the lazy dog"] = "6c1b07bc7bbc4be347939ac4a93c437a",
    ["The quick brown fox jumps over the lazy dog."] = "c902e99e1f4899cde7b68789a3a15d69",
    ["The quick brown fox jumps over the lazy cog"] = "9a2685ff70a98c653e5c8ea6eae3fe43",
  }
  for s, h in pairs(vectors) do eq(ft.digest(s), "\1" .. unhex(h), s) end
end)

test("digest: short keys as they are, long ones 17 bytes, no two alike over a space", function()
  eq(ft.digest("{}"), "{}", "the baseline's key")
  eq(ft.digest("0123456789abcdef"), "0123456789abcdef", "16 bytes: kept")
  eq(#ft.digest("0123456789abcdefg"), 17, "17 bytes: digested")
  eq(ft.digest(string.rep("x", 1000)), ft.digest(string.rep("x", 1000)), "deterministic")
  -- 2 * 14 * 4 * 6 * 2 * 7 = 9408 configurations: every key's digest distinct, and every
  -- length from 17 to 47 (each tail of the 16-byte blocks) hashed.
  local sp = space.new({ xla_gpu_lhs = { kind = "bool" },
                         xla_gpu_thr = { kind = "pow2", lo = 1 << 20, hi = 8 << 30 },
                         xla_tpu_foo = { kind = "int", lo = 1, hi = 4 } },
                       { MEM = { kind = "float", lo = 0.7, hi = 0.95, step = 0.05 },
                         PROTO = { kind = "choice", values = { "a", "b" } },
                         N = { kind = "int", lo = 1, hi = 7 } }, {}, {}, "exp.lua")
  local ids, n = {}, 0
  for k = 1, math.tointeger(sp:size()) do
    local id = ft.digest(sp:key(sp:at(k)))
    eq(ids[id], nil, "digest of configuration " .. k)
    ids[id] = true
    n = n + 1
  end
  eq(n, 9408, "configurations")
  local base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
  for len = 17, #base do
    local id = ft.digest(base:sub(1, len))
    eq(ids[id], nil, "prefix of " .. len)
    ids[id] = true
  end
end)

test("kit.seen marks by key, whatever the key's length", function()
  local sp = space.new({ xla_gpu_a = { kind = "bool" } }, {}, {}, {}, "exp.lua")
  local seen = kit.seen(sp, { { config = { xla_gpu_a = true } } })
  eq(seen.n, 1, "history marked")
  eq(seen:has(sp:key({ xla_gpu_a = true })), true, "history seen")
  eq(seen:has(sp:key({ xla_gpu_a = false })), false, "other not seen")
  eq(seen:mark(sp:key({ xla_gpu_a = false })), true, "first mark")
  eq(seen:mark(sp:key({ xla_gpu_a = false })), false, "second mark")
  eq(seen:has("{}"), true, "the baseline is seen from the start")
  eq(seen.n, 2, "the baseline is not counted")
end)

-- 14 parameters named as long as real XLA flags: each canonical JSON key is about 500
-- bytes. Two seen sets of them (the host's and random{}'s) cost ~1,070 bytes of live heap
-- a trial; by digest, ~130 (one 18-byte string, two hash slots, doubling).
test("a 3,000-trial random{} sweep keeps under 300 bytes of Lua heap a trial", function()
  local sp = heapcheck.long_space()
  local h = host.new({ path = "exp.lua", space = sp, strategy = { name = "random", options = {}, line = 1 },
                       budget = { trials = 4000, hours = 0, steps = 0 } }, 1, {})
  local per_trial = heapcheck.bytes_per_trial(h, 1000, 3000, function(i) return 1 + i % 7 end,
                                              { 1.5, 1.5, 1.5, 1.5, 1.5 })
  if per_trial >= 300 then error(string.format("%.0f bytes of live Lua heap a trial", per_trial)) end
end)

