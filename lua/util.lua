-- Small helpers shared by the experiment DSL (and anyone else in lua/): edit distance and
-- "did you mean", locating a key's line in the source text, describing values in error
-- messages, and raising located errors. Must not know the experiment file's keys or run
-- user code; everything here is a pure function except `fail`, which raises.

local util = {}

-- Levenshtein distance between two strings (bytes), two rows at a time.
function util.levenshtein(a, b)
  local la, lb = #a, #b
  if la == 0 then return lb end
  if lb == 0 then return la end
  local prev, cur = {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur[0] = i
    local ca = a:byte(i)
    for j = 1, lb do
      local cost = (ca == b:byte(j)) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev, cur = cur, prev
  end
  return prev[lb]
end

-- The candidate closest to WORD: edit distance <= 2 wins (smallest, then alphabetical);
-- otherwise a candidate that WORD is a prefix of, or that is a prefix of WORD (at least 3
-- characters, shortest first). Returns nil when nothing is close enough to help.
function util.did_you_mean(word, candidates)
  if type(word) ~= "string" then return nil end
  local lw = word:lower()
  local best, best_d
  for _, c in ipairs(candidates) do
    local d = util.levenshtein(lw, c:lower())
    if d <= 2 and d < #c and (not best_d or d < best_d or (d == best_d and c < best)) then
      best, best_d = c, d
    end
  end
  if best then return best end
  if #word < 3 then return nil end
  for _, c in ipairs(candidates) do
    local lc = c:lower()
    local prefix = lc:sub(1, #lw) == lw or (#lc >= 3 and lw:sub(1, #lc) == lc)
    if prefix and (not best or #c < #best or (#c == #best and c < best)) then best = c end
  end
  return best
end

-- Candidates as a sorted array of the keys of a set table.
function util.sorted_keys(set)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out, function(x, y) return tostring(x) < tostring(y) end)
  return out
end

local function escape_pattern(s)
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"))
end
util.escape_pattern = escape_pattern

local function split_lines(text)
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return lines
end

-- Adds line I to the assignments of KEY in INDEX (each key's lines in order, once each).
local function note(index, key, i)
  local at = index[key]
  if not at then
    index[key] = { i }
  elseif at[#at] ~= i then
    at[#at + 1] = i
  end
end

-- The key assigned by the `=` at byte Q of LINE, or nil: the word just before it (spaces
-- between allowed), starting with a letter or `_`, at the line's start or after a space,
-- `{`, `,` or `;`; not `==`. R is LINE reversed, so that the word is one anchored match.
local function key_before(line, r, q)
  if line:byte(q + 1) == 61 then return nil end -- "=="
  local n = #line
  local _, e, word = r:find("^%s*([%w_]*)", n - q + 2)
  if word == "" or not word:find("^[%w_]*[%a_]$") then return nil end
  local before = n - e -- the byte before the word, 0 at the line's start
  if before > 0 and not line:find("^[%s{,;]", before) then return nil end
  return word:reverse()
end

-- Every line where each key is assigned: `KEY =` at the start, after a space, `{`, `,` or
-- `;`, or written `["KEY"] =` (`==` is a comparison, not an assignment). Built once per text,
-- so locating every key of a large file stays linear in its size. Each `=` is found by a
-- plain search and the key read back from it: a pattern tried at every byte of the file cost
-- a `check` of a 6-line experiment 0.2 M instructions (docs/COST.md, Start-up).
local function key_index(text)
  local index = {}
  for i, line in ipairs(split_lines(text)) do
    local q = line:find("=", 1, true)
    local r = q and line:reverse()
    while q do
      local key = key_before(line, r, q)
      if key then note(index, key, i) end
      q = line:find("=", q + 1, true)
    end
    if r and line:find("[", 1, true) then
      for key, post in line:gmatch("%[%s*[\"']([^\"']*)[\"']%s*%]%s*=()") do
        if line:sub(post, post) ~= "=" then note(index, key, i) end
      end
    end
  end
  return index
end

local cached_text, cached_index

-- The line where KEY is written: the first at or after FROM_LINE, else the first in the
-- file (a table built before the `experiment` call), else FROM_LINE. Lua keeps no line
-- numbers for table keys, so this reads the text; a key assigned twice reports the first.
function util.locate_key(text, key, from_line)
  from_line = from_line or 1
  if type(key) ~= "string" or type(text) ~= "string" then return from_line end
  if cached_text ~= text then cached_text, cached_index = text, key_index(text) end
  local at = cached_index[key]
  if not at then return from_line end
  local lo, hi = 1, #at -- the first assignment at or after FROM_LINE
  while lo < hi do
    local mid = (lo + hi) // 2
    if at[mid] < from_line then lo = mid + 1 else hi = mid end
  end
  if at[lo] >= from_line then return at[lo] end
  return at[1]
end

-- The line of the first `return NAME {` or `return NAME (` in TEXT (comments ignored),
-- else of the first `NAME {` / `NAME (`, else 1: where a tail-called constructor was
-- written, since a tail call leaves no line on the stack.
function util.find_call(text, name)
  local lines = split_lines(text)
  local call = "%f[%w_]" .. escape_pattern(name) .. "%s*[{(\"']"
  for _, prefix in ipairs({ "%f[%w_]return%s+", "" }) do
    for i, l in ipairs(lines) do
      if l:gsub("%-%-.*$", ""):find(prefix .. call) then return i end
    end
  end
  return 1
end

-- The number of the last line that holds something other than blanks and comments.
function util.last_line(text)
  local lines = split_lines(text)
  for i = #lines, 1, -1 do
    local l = lines[i]:gsub("%-%-.*$", "")
    if l:find("%S") then return i end
  end
  return math.max(#lines, 1)
end

-- Index just past the set starting at P[i] == "[", or nil when it is not closed.
local function skip_set(p, i)
  local j = i + 1
  if p:sub(j, j) == "^" then j = j + 1 end
  repeat
    if j > #p then return nil end
    local c = p:sub(j, j)
    j = j + (c == "%" and 2 or 1)
  until p:sub(j, j) == "]"
  return j + 1
end

-- Counts the captures of Lua pattern P: values, positions; or nil and what is wrong.
function util.pattern_captures(p)
  local i, depth, values, positions = 1, 0, 0, 0
  while i <= #p do
    local c, nx = p:sub(i, i), p:sub(i + 1, i + 1)
    if c == "%" then
      if nx == "" then return nil, "it ends with '%'" end
      if nx == "b" then
        if #p < i + 3 then return nil, "'%b' needs two characters" end
        i = i + 4
      elseif nx == "f" then
        if p:sub(i + 2, i + 2) ~= "[" then
          return nil, "'%f' must be followed by a set like [%a]"
        end
        i = skip_set(p, i + 2)
      else
        i = i + 2
      end
    elseif c == "[" then
      i = skip_set(p, i)
    elseif c == "(" and nx == ")" then
      positions, i = positions + 1, i + 2
    elseif c == "(" then
      values, depth, i = values + 1, depth + 1, i + 1
    elseif c == ")" then
      depth, i = depth - 1, i + 1
      if depth < 0 then return nil, "a ')' closes nothing" end
    else
      i = i + 1
    end
    if not i then return nil, "missing ']'" end
  end
  if depth ~= 0 then return nil, "a '(' is not closed" end
  return values, positions
end

-- A value's type as an error message names it: "boolean", "table", and for flagtune's
-- own objects what the user wrote ("a space constructor", "a strategy").
function util.typename(v)
  local mt = type(v) == "table" and getmetatable(v)
  if mt and mt.__name == "flagtune.param" then return "a space constructor" end
  if mt and mt.__name == "flagtune.strategy" then return "a strategy" end
  return type(v)
end

-- A value as an error message shows it: strings quoted, numbers as Lua prints them,
-- anything else by its type ("got boolean").
function util.describe(v)
  local t = type(v)
  if t == "string" then
    return (string.format("%q", v):gsub("\\\n", "\\n"))
  elseif t == "number" then
    return tostring(v)
  end
  return util.typename(v)
end

-- An integer value (3 or 3.0) as a Lua integer, or nil.
function util.to_int(v)
  if math.type(v) == "integer" then return v end
  if math.type(v) == "float" then return math.tointeger(v) end
  return nil
end

function util.is_finite(v)
  return type(v) == "number" and v == v and v > -math.huge and v < math.huge
end

-- Whether T is a plain list: keys exactly 1..#t.
function util.is_list(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or ""
end

-- P relative to the directory of the file at PATH, unless P is absolute.
function util.relative_to(path, p)
  local dir = dirname(path)
  if p:sub(1, 1) == "/" or dir == "" then return p end
  return dir .. "/" .. p
end

-- "path:line: message".
function util.where(path, line, msg)
  return string.format("%s:%d: %s", path, line or 0, msg)
end

-- Raises "path:line: message" at level 0, so Lua adds no position of its own. FMT is
-- always a format string: a literal '%' is written '%%'.
function util.fail(path, line, fmt, ...)
  error(util.where(path, line, fmt:format(...)), 0)
end

return util
