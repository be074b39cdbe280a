-- The embedded runtime is precompiled at build time (tools/embed.c: lua_dump with its debug
-- info): a module still carries its own file name and line numbers, so an error raised in it
-- says "lua/x.lua:N:" (a dump stripped of it would say "?").

local tap = require("tap")
local test, eq, raises = tap.test, tap.eq, tap.raises
local util = require("util")

test("an embedded function keeps its file name and lines", function()
  local info = debug.getinfo(util.levenshtein, "S")
  eq(info.source, "@lua/util.lua", "source")
  eq(info.what, "Lua", "what")
  eq(info.linedefined, 9, "linedefined (lua/util.lua: function util.levenshtein)")
end)

test("an error raised in an embedded module names its file and line", function()
  -- #nil inside util.levenshtein: a runtime error located by the chunk's line info
  raises("^lua/util%.lua:%d+: ", util.levenshtein, nil, "b")
end)

-- tools/embed.c drops the local variables' and upvalues' names from the dump (they cost each
-- start an interned string apiece) but keeps "_ENV": ldebug.c names a global by it.
test("embedded functions keep _ENV's name and no other upvalue's", function()
  local names = {}
  for _, f in pairs(util) do
    if type(f) == "function" then
      for i = 1, 255 do
        local n = debug.getupvalue(f, i)
        if not n then break end
        names[n] = true
      end
    end
  end
  eq(names._ENV, true, "an upvalue named _ENV")
  eq(names["(no name)"], true, "an upvalue without its name")
  for n in pairs(names) do
    if n ~= "_ENV" and n ~= "(no name)" then error("an upvalue kept its name: " .. n) end
  end
end)

test("an error on a global in an embedded module still names the global", function()
  local saved = math
  math = nil -- luacheck: ignore (util.levenshtein reads math.min)
  local ok, err = pcall(util.levenshtein, "ab", "b")
  math = saved -- luacheck: ignore
  eq(ok, false, "levenshtein without math")
  if not err:find("^lua/util%.lua:%d+: attempt to index a nil value %(global 'math'%)") then
    error("got: " .. err)
  end
end)
