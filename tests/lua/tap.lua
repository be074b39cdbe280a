-- A small TAP-like harness for the Lua tests (the shape of luv's tests/tap.lua): each
-- test(name, fn) runs in its own xpcall, so one failing case reports its message and
-- traceback and the others still run. tests/lua/luatest.c makes this file loadable as
-- require("tap") and calls tap.finish() after the test file, which prints the summary
-- line; luatest exits non-zero when any case failed. Must not hold state a case could
-- leak into the next beyond the counters and the temporary files it removes at the end.

local tap = {}

local passed, failed, failures = 0, 0, {}
local temp_files = {}

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- Fails the calling test unless GOT == WANT. WHAT names the value in the message; the
-- types are added when the two print alike ("1" and 1).
function tap.eq(got, want, what)
  if got == want then return end
  local g, w = show(got), show(want)
  if g == w then
    g = g .. " (" .. (math.type(got) or type(got)) .. ")"
    w = w .. " (" .. (math.type(want) or type(want)) .. ")"
  end
  error(string.format("%s: got %s, want %s", what or "value", g, w), 2)
end

-- raises(FN, ...) or raises(PATTERN, FN, ...): FN(...) must raise (an error whose text
-- matches PATTERN, a Lua pattern). Returns the error's text.
function tap.raises(pattern, fn, ...)
  local args = table.pack(...)
  if type(pattern) == "function" then
    args = table.pack(fn, ...)
    pattern, fn = nil, pattern
  end
  local ok, err = pcall(fn, table.unpack(args, 1, args.n))
  if ok then error("expected an error" .. (pattern and (" matching " .. pattern) or ""), 2) end
  err = tostring(err)
  if pattern and not err:find(pattern) then
    error(string.format("error %q does not match %q", err, pattern), 2)
  end
  return err
end

-- Runs FN(...) as one case named NAME: "ok N - NAME" or "not ok N - NAME" with the error
-- and its traceback as "# " lines.
function tap.test(name, fn, ...)
  local n = passed + failed + 1
  local ok, err = xpcall(fn, function(e) return debug.traceback(tostring(e), 2) end, ...)
  if ok then
    passed = passed + 1
    print(string.format("ok %d - %s", n, name))
    return true
  end
  failed = failed + 1
  failures[#failures + 1] = name
  print(string.format("not ok %d - %s", n, name))
  for line in tostring(err):gmatch("[^\n]+") do print("#   " .. line) end
  return false
end

-- Writes TEXT to a new temporary file whose name ends in SUFFIX (a user strategy's ".lua");
-- returns its path. tap.finish removes it (and the empty file os.tmpname made).
function tap.temp_file(text, suffix)
  local base = os.tmpname()
  local path = base .. (suffix or "")
  temp_files[#temp_files + 1] = base
  temp_files[#temp_files + 1] = path
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- Prints the plan and the summary line; returns the number of failed cases.
function tap.finish()
  for _, path in ipairs(temp_files) do os.remove(path) end
  local total = passed + failed
  print(string.format("1..%d", total))
  if failed == 0 then
    print(string.format("# all %d tests passed", total))
  else
    print(string.format("# %d of %d tests failed: %s", failed, total, table.concat(failures, ", ")))
  end
  return failed
end

return tap
