#!/usr/bin/env bash
# A Lua C module that a user's strategy file requires (package.cpath; docs/STRATEGIES.md: the
# strategy file runs with the standard libraries). Such a module, like Debian's lua-* modules,
# is not linked against liblua: it finds the Lua API in the program that loads it. With Lua
# linked into flagtune (CMakeLists.txt, FLAGTUNE_STATIC_LUA) that works only because flagtune
# exports lua_*, luaL_* and luaopen_*, as Lua's own `lua` interpreter does (-Wl,-E); without
# the export the require fails ("ftcmod.so: undefined symbol: lua_setfield"). Skipped (77) where
# no C compiler or Lua headers are installed.
# Usage: test_lua_cmodule.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v cc > /dev/null || { echo "SKIP no C compiler"; exit 77; }
cflags=$(pkg-config --cflags lua5.4 2> /dev/null) || { echo "SKIP no lua5.4 headers"; exit 77; }
cat > ftcmod.c <<'C'
#include <lauxlib.h>
#include <lua.h>
static int twice(lua_State *L) {
  lua_pushinteger(L, 2 * luaL_checkinteger(L, 1));
  return 1;
}
int luaopen_ftcmod(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, twice);
  lua_setfield(L, -2, "twice");
  return 1;
}
C
# shellcheck disable=SC2086
cc -shared -fPIC $cflags -o ftcmod.so ftcmod.c || die "cannot build the C module"
ldd ftcmod.so > ldd.txt || die "ldd cannot read the C module"
check "the module does not link liblua (it needs the program's Lua API)" \
  lacks -q liblua ldd.txt
cat > s.lua <<LUA
package.cpath = "$work/?.so;" .. package.cpath
local cmod = require("ftcmod")
local M = {}
function M.new(space, options, history, rng) return setmetatable({}, { __index = M }) end
function M:ask(n)
  return { { V = cmod.twice(21) == 42 and "b" or "c" } }
end
function M:tell() end
return M
LUA
cat > e.lua <<LUA
return experiment {
  name = "cmod", model = "m", hardware = "h",
  command = { "$sim", "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c" } },
  budget = { trials = 2 },
  strategy = strategy_file("s.lua"),
}
LUA
# `check` runs no code that could change the world, and a C module is such code: it says so at
# the require's line (docs/CLI.md, "check"); `run` loads it.
"$ft" check e.lua > check.out 2>&1
check_eq "check of a strategy that requires a C module exits 2" "$?" 2
has check.out "s.lua:2: "
has check.out 'no C module is loaded by `flagtune check`'
"$ft" -q run e.lua > run.out 2>&1
check_eq "a run of it exits 0" "$?" 0
check_eq "the trial the module chose was run" \
  "$(val "SELECT count(*) FROM trials WHERE config LIKE '%\"b\"%'")" 1
finish
