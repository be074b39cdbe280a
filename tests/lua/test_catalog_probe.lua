-- The catalog against what a real jaxlib said: tests/data/probe_jaxlib_0.11.2_h100.txt is the
-- unedited output of `flagtune flags probe --command "python3 -c 'import jax; jax.devices()'"
-- --catalog --timeout 60` (every non-TPU flag of the catalog, 343, in 74 runs and 104 s), run
-- with jax and jaxlib 0.11.2 on one NVIDIA H100 80GB HBM3 (driver 580.159.04, CUDA 13.0) on
-- 2026-11-26 (docs/GPU.md). Its six value refusals were the catalog's: four enum defaults
-- spelled as proto names (DETECTION_MODE_NONE where the flag takes `none`), and an empty
-- value, which XLA refuses for xla_gpu_disable_async_collectives and xla_fuel (now `empty =
-- "unset"`: an empty value leaves the flag out of XLA_FLAGS). Every flag it lists as refused as unknown must be marked absent
-- from jaxlib 0.11.2 (a `jax` range that excludes 0.11.2, or `until_`, which makes `check`
-- warn), and no flag it lists as accepted or with a refused value (XLA knows the name) may
-- be. Fails by raising.

local catalog = require "catalog"
local checks = require "checks"
local tap = require("tap")
local test, eq = tap.test, tap.eq

local DATA = "tests/data/probe_jaxlib_0.11.2_h100.txt"
local V = checks.version("0.11.2")

local by_name = {}
for _, e in ipairs(catalog) do by_name[e.name] = e end

-- { name, verdict = "accepted" | "unknown" | "value" } per flag line of the probe's output.
local function verdicts()
  local out = {}
  for line in io.lines(DATA) do
    local name, rest = line:match("^(%l[%w_]+)%s+(.+)$")
    if name then
      local v = rest == "accepted" and "accepted"
        or rest:find("^REFUSED %(unknown") and "unknown"
        or rest:find("^VALUE REFUSED") and "value" or nil
      assert(v, DATA .. ": cannot read the verdict in '" .. line .. "'")
      out[#out + 1] = { name = name, verdict = v }
    end
  end
  return out
end

local function marked_absent(e)
  return e.until_ ~= nil or checks.absent_from(e, V) ~= nil
end

local function test_the_file()
  local n, count = 0, { accepted = 0, unknown = 0, value = 0 }
  for _, r in ipairs(verdicts()) do
    n = n + 1
    count[r.verdict] = count[r.verdict] + 1
  end
  -- Its summary line: "40 of 343 refused, 6 known with a value refused".
  eq(n, 343, "flags in the probe's output")
  eq(count.unknown, 40, "refused as unknown")
  eq(count.value, 6, "value refused")
  eq(count.accepted, 297, "accepted")
end

local function test_refused_are_marked()
  local bad = {}
  for _, r in ipairs(verdicts()) do
    local e = by_name[r.name]
    if not e then
      bad[#bad + 1] = r.name .. " (not in the catalog)"
    elseif r.verdict == "unknown" and not marked_absent(e) then
      bad[#bad + 1] = r.name .. " (refused as unknown, not marked)"
    elseif r.verdict ~= "unknown" and marked_absent(e) then
      bad[#bad + 1] = r.name .. " (known to jaxlib 0.11.2, marked absent)"
    end
  end
  eq(table.concat(bad, ", "), "", "catalog entries that disagree with jaxlib 0.11.2")
end

-- `check` warns about a flag with a release range that excludes the installed jaxlib.
local function test_check_warns()
  local e = by_name.xla_gpu_fused_attention_use_cudnn_rng
  eq(checks.absent_from(e, V), "jax 0.11.2 no longer has it", "0.11.2")
  eq(checks.absent_from(e, checks.version("0.11.1")), nil, "0.11.1: not known")
  eq(checks.status_warning(by_name.xla_gpu_experimental_use_raft_select_k),
     "'xla_gpu_experimental_use_raft_select_k' is gone from recent XLA (refused as unknown by "
       .. "jaxlib 0.11.2 (flags probe on an H100, 2026-11-26)): newer jaxlibs refuse it",
     "until_ only")
end

-- Each value jaxlib 0.11.2 refused is no longer what the catalog offers: an enum's default is
-- one of its values, and an empty default is marked to be left out.
local function test_refused_values_are_fixed()
  local bad = {}
  for _, r in ipairs(verdicts()) do
    local e = by_name[r.name]
    if r.verdict == "value" then
      local ok = e.empty == "unset" and e.default == ""
      for _, v in ipairs(e.values or {}) do ok = ok or v == e.default end
      if not ok then bad[#bad + 1] = r.name .. " = " .. tostring(e.default) end
    end
  end
  eq(table.concat(bad, ", "), "", "catalog defaults that jaxlib 0.11.2 refused")
end

test("the recorded probe output", test_the_file)
test("refused values are fixed", test_refused_values_are_fixed)
test("refused flags are marked, accepted ones are not", test_refused_are_marked)
test("check warns", test_check_warns)
