-- util.locate_key reads an experiment's text for the line of each key (Lua keeps no line for
-- a table key). Its index finds each `=` by a plain search and reads the key back from it
-- (docs/COST.md, Start-up); these cases hold it to the pattern scan it replaced, kept below
-- as the reference, on chosen lines and on thousands of random ones. Fails by raising.

local util = require "util"
local tap = require("tap")
local test, eq = tap.test, tap.eq

-- The index as it was: a pattern tried at every byte of each line.
local function reference_index(text)
  local index = {}
  local function note(key, i)
    local at = index[key]
    if not at then index[key] = { i } elseif at[#at] ~= i then at[#at + 1] = i end
  end
  local i = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    i = i + 1
    for pre, key, post in line:gmatch("()([%a_][%w_]*)%s*=()") do
      if line:sub(post, post) ~= "=" and (pre == 1 or line:sub(pre - 1, pre - 1):find("[%s{,;]"))
      then
        note(key, i)
      end
    end
    for key, post in line:gmatch("%[%s*[\"']([^\"']*)[\"']%s*%]%s*=()") do
      if line:sub(post, post) ~= "=" then note(key, i) end
    end
  end
  return index, i
end

-- Every key either index knows, at every starting line, located by both.
local function same_as_reference(text, what)
  local ref, nlines = reference_index(text)
  local keys = { "nothing_here", "" }
  for k in pairs(ref) do keys[#keys + 1] = k end
  for _, k in ipairs(keys) do
    for from = 1, nlines + 1 do
      local want = from
      local at = ref[k]
      if at then
        want = at[1]
        for _, l in ipairs(at) do if l >= from then want = l break end end
      end
      eq(util.locate_key(text, k, from), want, what .. ": key " .. string.format("%q", k)
         .. " from line " .. from .. " in " .. string.format("%q", text))
    end
  end
end

local function test_chosen_lines()
  local lines = {
    "return experiment {", "  name = \"x\",", "name=1", "a = b = c", "x == y", "a==b = c",
    "x.y = 1", "f(x=1)", "12ab = 3", "_1 = 2", "a1 =\t2", "{k=1,l=2;m=3}", "a <= b", "a ~= b",
    "a >= b", "a===b", "  [\"quoted\"] = 1", "t['q'] = 2", "[ 'sp' ]  =  3", "[\"eq\"] == 4",
    "-- comment = 5", "s = \"k = v\"", "=", "==", "x =", "= y", "  flags = { xla_gpu_a = int(0, 4) },",
    "\tvars={XLA_X=range(0.1,0.9,0.1)}", "a\v= 1", "é = 1", "a =\r",
  }
  same_as_reference(table.concat(lines, "\n"), "chosen")
  for _, l in ipairs(lines) do same_as_reference(l, "one line") end
end

local function test_random_lines()
  local alphabet = { "a", "b", "k", "Z", "_", "1", "9", " ", " ", "\t", "=", "=", "{", ",",
                     ";", ".", "[", "]", "\"", "'", "(", "-", "<", "~", "\r" }
  local seed = 12345
  local function rand(n) -- a small LCG: the cases are the same at every run
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n + 1
  end
  for _ = 1, 400 do
    local lines = {}
    for l = 1, rand(4) do
      local t = {}
      for c = 1, rand(24) - 1 do t[c] = alphabet[rand(#alphabet)] end
      lines[l] = table.concat(t)
    end
    same_as_reference(table.concat(lines, "\n"), "random")
  end
end

test("locate_key finds the lines the pattern scan found, on chosen lines", test_chosen_lines)
test("locate_key finds the lines the pattern scan found, on random lines", test_random_lines)
