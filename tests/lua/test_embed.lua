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
