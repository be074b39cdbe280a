/* The Lua host. Owns the lua_State (the loader for the embedded runtime and the `ft` helper
 * table are installed from lhost_runtime.c), the one protected-call path (lua.c's docall with a
 * message handler), the limits on user code (an instruction budget and a memory cap that a Lua
 * `pcall` cannot catch, and a second SIGINT/SIGTERM that ends a Lua call stuck in C), and
 * the count of registry refs held by C.
 * Must not know what an experiment or a strategy is: those modules call in here. */
#include "lhost.h"

#include <assert.h>
#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <lualib.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arena.h"
#include "diag.h"
#include "embed.h"
#include "lhost_state.h"

/* ---- error() and assert() that remember where user code raised ---- */

/* An error raised without a location (error(msg, 0), error({}), assert(false, {})) loses
 * the user's line by the time it reaches C: handlers and re-raises in lua/ run after the
 * user's frames are gone. Remember the user's line now, with the message as lhost_pcall
 * will see it, so that it can put the line back. */
static void note_raise(lua_State *L) {
  lhost *h = lhost_of(L);
  char where[WHERE_MAX];
  if (h->depth == 0 || !lhost_where_user(L, 1, where, sizeof where)) return;
  memcpy(h->raise_where, where, sizeof where);
  if (lua_type(L, 1) == LUA_TSTRING)
    snprintf(h->raise_msg, sizeof h->raise_msg, "%s", lua_tostring(L, 1));
  else
    snprintf(h->raise_msg, sizeof h->raise_msg, "(error object is a %s value)",
             luaL_typename(L, 1));
}

/* lbaselib.c's error(), plus note_raise for messages it leaves without a location. */
static int ft_error(lua_State *L) {
  int level = (int)luaL_optinteger(L, 2, 1);
  lua_settop(L, 1);
  if (lua_type(L, 1) == LUA_TSTRING && level > 0) {
    luaL_where(L, level);
    lua_pushvalue(L, 1);
    lua_concat(L, 2);
  } else {
    note_raise(L);
  }
  return lua_error(L);
}

/* lbaselib.c's assert(), through ft_error. */
static int ft_assert(lua_State *L) {
  if (lua_toboolean(L, 1)) return lua_gettop(L);
  luaL_checkany(L, 1);
  lua_remove(L, 1);
  lua_pushliteral(L, "assertion failed!");
  lua_settop(L, 1);
  return ft_error(L);
}

/* ---- xpcall and debug.sethook, so that user code cannot switch the budget off ---- */

/* True when the function calling the running C function is one of the embedded files. */
static int called_from_runtime(lua_State *L) {
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "S", &ar)) return 0;
  return ar.source[0] == '@' && embed_find(ar.source + 1) != NULL;
}

/* The message handler a user's xpcall gets: the user's own (upvalue 1), except for a broken
 * limit. The hook raises that from inside the hook, where Lua runs no hooks, so a user's
 * handler that looped would never be stopped. */
static int guarded_handler(lua_State *L) {
  if (lhost_of(L)->fault != FAULT_NONE) return 1; /* the fault's message, as it is */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* lbaselib.c's finishpcall and xpcall; a user's handler goes through guarded_handler. The
 * runtime's own xpcalls (lua/dsl.lua, lua/host.lua) keep theirs as they are: their handlers
 * read the stack at fixed levels, and they end. */
static int finish_xpcall(lua_State *L, int status, lua_KContext extra) {
  if (status != LUA_OK && status != LUA_YIELD) {
    lua_pushboolean(L, 0);
    lua_pushvalue(L, -2);
    return 2;
  }
  return lua_gettop(L) - (int)extra;
}

static int ft_xpcall(lua_State *L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  if (!called_from_runtime(L)) {
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);
  }
  lua_pushboolean(L, 1); /* [f, msgh, args..., true] */
  lua_pushvalue(L, 1);
  lua_rotate(L, 3, 2); /* [f, msgh, true, f, args...] */
  int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_xpcall);
  return finish_xpcall(L, status, 2);
}

/* debug.sethook (upvalue 1) outside budgeted calls only: inside one it would remove the
 * count hook that is the budget. Tests use it to count instructions. */
static int ft_sethook(lua_State *L) {
  if (lhost_of(L)->budget > 0)
    return luaL_error(L, "debug.sethook is not available to experiment and strategy code");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static void install_guards(lua_State *L) {
  lua_register(L, "error", ft_error);
  lua_register(L, "assert", ft_assert);
  lua_register(L, "xpcall", ft_xpcall);
  lua_getglobal(L, "debug");          /* [debug] */
  lua_getfield(L, -1, "sethook");     /* [debug, sethook] */
  lua_pushcclosure(L, ft_sethook, 1); /* [debug, guarded] */
  lua_setfield(L, -2, "sethook");
  lua_pop(L, 1);
}

/* The collector: incremental with a pause of 150 (a cycle starts when the heap is 1.5x what
 * the last one left; Lua's default, 200, lets it double), unless FLAGTUNE_LUA_GC (a measuring
 * aid, tests/bench/bench_memory.sh) says "gen" (generational) or "inc,PAUSE,STEPMUL". On a
 * real 10,000-trial tpe{} sweep (docs/COST.md "Memory") the pause of 150 cut the peak RSS
 * from 35.3 to 28.2 MiB at the same CPU; generational mode held a larger heap, not a smaller
 * one: a tpe{} ask's temporaries outlive the minor collections run during it, grow old, and
 * wait for a major one. */
static void set_collector(lua_State *L) {
  const char *gc = getenv("FLAGTUNE_LUA_GC");
  int pause = 150, stepmul = 100;
  if (gc && strcmp(gc, "gen") == 0) {
    lua_gc(L, LUA_GCGEN, 0, 0);
    return;
  }
  if (gc && !(sscanf(gc, "inc,%d,%d", &pause, &stepmul) == 2 && pause > 0 && stepmul > 0))
    pause = 150, stepmul = 100;
  lua_gc(L, LUA_GCINC, pause, stepmul, 0);
}

/* Set by lhost_exit_follows: the process ends once the command in progress returns. The
 * states left open stay reachable from here (valgrind counts them as still reachable). */
static int exit_follows;
static lhost *kept;

/* ---- `flagtune check`: user code runs, but changes nothing ---- */

static int check_only;

void lhost_check_only(void) {
  check_only = 1;
}

/* Raises "path:line: NAME is not run by ..." at the caller's line (level 1: the Lua code that
 * called the refused function). */
static int check_refuse(lua_State *L, const char *name) {
  luaL_where(L, 1);
  lua_pushfstring(L,
                  "%s is not run by `flagtune check`, which only checks (`flagtune run` runs "
                  "it); keep side effects out of what loading and the first ask() do",
                  name);
  lua_concat(L, 2);
  return lua_error(L);
}

static int check_refused(lua_State *L) {
  return check_refuse(L, lua_tostring(L, lua_upvalueindex(1)));
}

/* io.open for reading goes on (upvalue 1: the real one); any other mode is refused. */
static int check_io_open(lua_State *L) {
  const char *mode = luaL_optstring(L, 2, "r");
  if (mode[0] != 'r' || strchr(mode, '+')) return check_refuse(L, "io.open for writing");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* io.output() with no argument only says which file is the output; with one it opens it. */
static int check_io_output(lua_State *L) {
  if (!lua_isnoneornil(L, 1)) return check_refuse(L, "io.output to a file");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 0, 1);
  return 1;
}

/* A searcher in place of the C loaders: says why, as searchers do, so that require reports
 * every place it looked. */
static int check_no_c_module(lua_State *L) {
  lua_pushstring(L, "\n\tno C module is loaded by `flagtune check` (package.cpath)");
  return 1;
}

static void refuse_in(lua_State *L, const char *lib, const char *const *names) {
  lua_getglobal(L, lib); /* [lib] */
  for (; *names; names++) {
    lua_pushfstring(L, "%s.%s", lib, *names);
    lua_pushcclosure(L, check_refused, 1);
    lua_setfield(L, -2, *names);
  }
  lua_pop(L, 1);
}

static void wrap_in(lua_State *L, const char *lib, const char *name, lua_CFunction f) {
  lua_getglobal(L, lib);     /* [lib] */
  lua_getfield(L, -1, name); /* [lib, real] */
  lua_pushcclosure(L, f, 1);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static void install_check_only(lua_State *L) {
  static const char *const os_names[] = {"execute", "remove", "rename", "exit", "tmpname", NULL};
  static const char *const io_names[] = {"popen", "tmpfile", NULL};
  static const char *const package_names[] = {"loadlib", NULL};
  refuse_in(L, "os", os_names);
  refuse_in(L, "io", io_names);
  refuse_in(L, "package", package_names);
  wrap_in(L, "io", "open", check_io_open);
  wrap_in(L, "io", "output", check_io_output);
  /* package.searchers 4 and 5 (after the embedded one install_searcher put first) load C
   * modules from package.cpath: native code, not loaded at check. */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers"); /* [package, searchers] */
  for (int i = 4; i <= 5; i++) {
    lua_pushcfunction(L, check_no_c_module);
    lua_rawseti(L, -2, i);
  }
  lua_pop(L, 2);
}

int lhost_new(lhost **out, char **err) {
  lhost *h = xcalloc(1, sizeof *h);
  h->mem_limit = lhost_memory_limit();
  h->copy_limit = h->mem_limit * COPY_PER_MEMORY;
  h->copy_check = SIZE_MAX;
  h->seconds = lhost_time_limit();
  arena_open(&h->arena);
  h->L = lua_newstate(lhost_alloc, h);
  if (!h->L) {
    arena_close(&h->arena);
    free(h);
    return diag_set(err, FT_ESYS, "cannot create a Lua state");
  }
  set_collector(h->L);
  luaL_openlibs(h->L);
  install_guards(h->L);
  lhost_install_searcher(h->L);
  lhost_install_ft(h->L);
  if (check_only) install_check_only(h->L);
  if (exit_follows) { /* a short life: no collection until it holds GC_HOLD_BYTES */
    lua_gc(h->L, LUA_GCSTOP);
    h->gc_held = 1;
  }
  *out = h;
  return 0;
}

void lhost_free(lhost *h) {
  if (!h) return;
  lhost_watch_remove();
#ifdef FLAGTUNE_DEBUG_REFS
  if (h->live_refs != 0)
    fprintf(stderr, "flagtune: %d Lua refs still live at exit\n", h->live_refs);
  assert(h->live_refs == 0);
#endif
  /* The exit frees it all at once. Without an arena (AddressSanitizer, FLAGTUNE_LUA_ARENA=0)
   * the state is closed, so that LeakSanitizer and valgrind see every block freed. */
  if (exit_follows && arena_active(&h->arena)) {
    h->kept = kept;
    kept = h;
    return;
  }
  lua_close(h->L);
  arena_close(&h->arena);
  free(h);
}

void lhost_exit_follows(void) {
  exit_follows = 1;
}

lua_State *lhost_state(lhost *h) {
  return h->L;
}

/* ---- protected calls ---- */

/* lua.c's msghandler: keep "path:line: message"; add a traceback only with -v. */
static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  if (diag_verbose) {
    luaL_traceback(L, L, msg, 1);
  } else {
    lua_pushstring(L, msg);
  }
  return 1;
}

/* True when MSG starts like "path:line:", as Lua's error() writes it. */
static int located(const char *msg) {
  const char *p = msg;
  while (*p && *p != ':' && *p != '\n') p++;
  if (*p != ':' || p == msg || p[1] < '0' || p[1] > '9') return 0;
  for (p++; *p >= '0' && *p <= '9'; p++) {
  }
  return *p == ':';
}

/* The error message of a failed call into *ERR: a broken limit as the fault (whatever the
 * handlers in lua/ made of it), an unlocated error with the user's line put back. */
static void call_failed(lhost *h, int rc, char **err) {
  lua_State *L = h->L;
  const char *msg = rc != LUA_OK ? lua_tostring(L, -1) : NULL;
  if (h->fault != FAULT_NONE) {
    char text[WHERE_MAX + 64];
    lhost_fault_text(h, text, sizeof text);
    diag_set(err, FT_ELUA, "%s", text);
  } else if (msg && !located(msg) && h->raise_where[0] && strstr(msg, h->raise_msg)) {
    diag_set(err, FT_ELUA, "%s%s", h->raise_where, msg);
  } else {
    diag_set(err, FT_ELUA, "%s", msg ? msg : "Lua error");
  }
}

int lhost_pcall(lhost *h, int nargs, int nresults, long budget, char **err) {
  lua_State *L = h->L;
  lhost_release_gc(h);
  int base = lua_gettop(L) - nargs; /* the function's index */
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  int outer = h->depth++ == 0;
  if (outer) {
    h->fault = FAULT_NONE;
    h->refused = 0;
    h->fault_where[0] = h->raise_where[0] = '\0';
  }
  long saved_budget = h->budget, saved_used = h->used;
  int owner = budget > 0 && saved_budget <= 0; /* nested calls run under the outer budget */
  if (owner) {
    h->budget = budget;
    h->used = 0;
    lua_sethook(L, lhost_budget_hook, LUA_MASKCOUNT, HOOK_STEP);
    lhost_limits_start(h);
    lhost_watch_signals();
  }
  int rc = lua_pcall(L, nargs, nresults, base);
  if (owner) {
    lhost_unwatch_signals();
    lhost_limits_end(h);
    lua_sethook(L, NULL, 0, 0);
  }
  /* A fault caught by a pcall in user code still fails the call. */
  if (rc != LUA_OK || h->fault != FAULT_NONE) {
    call_failed(h, rc, err);
    lua_settop(L, base - 1);
    rc = FT_ELUA;
  } else {
    lua_remove(L, base);
  }
  if (owner) {
    h->budget = saved_budget;
    h->used = saved_used;
  }
  h->depth--;
  if (outer) h->fault = FAULT_NONE;
  return rc;
}

int lhost_require(lhost *h, const char *name, char **err) {
  lua_getglobal(h->L, "require");
  lua_pushstring(h->L, name);
  return lhost_pcall(h, 1, 1, 0, err);
}

char *lhost_call_text(lhost *h, const char *module, const char *fn, int arg_ref, char **err) {
  lua_State *L = h->L;
  int top = lua_gettop(L);
  char *out = NULL;
  if (lhost_require(h, module, err) == 0) { /* [module] */
    lua_getfield(L, -1, fn);                /* [module, fn] */
    lhost_push_ref(h, arg_ref);             /* [module, fn, arg] */
    if (lhost_pcall(h, 1, 1, 0, err) == 0 && lua_type(L, -1) == LUA_TSTRING)
      out = xstrdup(lua_tostring(L, -1));
  }
  lua_settop(L, top);
  return out;
}

void lhost_collect(lhost *h) {
  lua_gc(h->L, LUA_GCCOLLECT, 0);
}

/* ---- counted refs ---- */

_Static_assert(LHOST_NOREF == LUA_NOREF, "lhost.h's LHOST_NOREF is Lua's LUA_NOREF");

int lhost_ref(lhost *h) {
  int ref = luaL_ref(h->L, LUA_REGISTRYINDEX);
  if (ref != LUA_REFNIL && ref != LUA_NOREF) h->live_refs++;
  return ref;
}

void lhost_push_ref(lhost *h, int ref) {
  lua_rawgeti(h->L, LUA_REGISTRYINDEX, ref);
}

void lhost_unref(lhost *h, int ref) {
  if (ref == LUA_REFNIL || ref == LUA_NOREF) return;
  luaL_unref(h->L, LUA_REGISTRYINDEX, ref);
  h->live_refs--;
}

int lhost_live_refs(const lhost *h) {
  return h->live_refs;
}

size_t lhost_memory(const lhost *h) {
  return h->mem;
}
