/* The Lua host. Owns the lua_State, the loader for the embedded runtime (lua/, search/),
 * the `ft` helper table, the one protected-call path (lua.c's docall with a message
 * handler), the instruction budget, and the count of registry refs held by C.
 * Must not know what an experiment or a strategy is: those modules call in here. */
#include "lhost.h"

#include <assert.h>
#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "embed.h"
#include "json.h"
#include "units.h"

struct lhost {
  lua_State *L;
  int live_refs;
  long budget;   /* instructions allowed to the call in progress, 0: none */
  long used;     /* instructions counted so far in that call */
};

#define HOOK_STEP 1000 /* the count hook fires every HOOK_STEP instructions */

static lhost *host_of(lua_State *L) {
  lhost *h;
  lua_getallocf(L, (void **)&h);
  return h;
}

static void *host_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

/* ---- the embedded-module loader ---- */

/* "search.grid" -> "search/grid.lua"; "dsl" -> "lua/dsl.lua". */
static void module_path(const char *name, char *buf, size_t n) {
  const char *dot = strchr(name, '.');
  if (dot && strncmp(name, "search.", 7) == 0)
    snprintf(buf, n, "search/%s.lua", dot + 1);
  else
    snprintf(buf, n, "lua/%s.lua", name);
  for (char *p = buf + (dot && strncmp(name, "search.", 7) == 0 ? 7 : 4); *p; p++) {
    if (*p == '.' && strcmp(p, ".lua") != 0) *p = '/';
  }
}

/* A strategy file in $FLAGTUNE_SEARCH_PATH (a directory) overrides the embedded one. */
static char *override_path(const char *name) {
  const char *dir = getenv("FLAGTUNE_SEARCH_PATH");
  if (!dir || !*dir || strncmp(name, "search.", 7) != 0) return NULL;
  char *path = xasprintf("%s/%s.lua", dir, name + 7);
  struct stat st;
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return path;
  free(path);
  return NULL;
}

static int searcher_embedded(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  char *over = override_path(name);
  if (over) {
    int rc = luaL_loadfilex(L, over, "t");
    free(over);
    if (rc != LUA_OK) return lua_error(L);
    lua_pushstring(L, name);
    return 2;
  }
  char path[512];
  module_path(name, path, sizeof path);
  const embed_file *f = embed_find(path);
  if (!f) {
    lua_pushfstring(L, "no embedded module '%s'", path);
    return 1;
  }
  char chunk[520];
  snprintf(chunk, sizeof chunk, "@%s", path);
  if (luaL_loadbufferx(L, f->data, f->len, chunk, "t") != LUA_OK) return lua_error(L);
  lua_pushstring(L, path);
  return 2;
}

/* Put the embedded searcher first so flagtune's own modules never come from disk. */
static void install_searcher(lua_State *L) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers"); /* [package, searchers] */
  lua_Integer n = (lua_Integer)luaL_len(L, -1);
  for (lua_Integer i = n; i >= 1; i--) {
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushcfunction(L, searcher_embedded);
  lua_rawseti(L, -2, 1);
  lua_pop(L, 2);
}

/* ---- the ft table ---- */

static int ft_parse_bytes(lua_State *L) {
  const char *s = luaL_checkstring(L, 1);
  int64_t v;
  const char *why = NULL;
  if (units_parse_bytes(s, &v, &why) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, why ? why : "not a byte size");
    return 2;
  }
  lua_pushinteger(L, (lua_Integer)v);
  return 1;
}

static int ft_parse_duration(lua_State *L) {
  const char *s = luaL_checkstring(L, 1);
  double v;
  const char *why = NULL;
  if (units_parse_duration(s, &v, &why) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, why ? why : "not a duration");
    return 2;
  }
  lua_pushnumber(L, v);
  return 1;
}

static int ft_format_bytes(lua_State *L) {
  char buf[64];
  units_format_bytes((int64_t)luaL_checkinteger(L, 1), buf, sizeof buf);
  lua_pushstring(L, buf);
  return 1;
}

static int ft_json_decode(lua_State *L) {
  const char *text = luaL_checkstring(L, 1);
  if (json_push_lua(L, text) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, "invalid JSON");
    return 2;
  }
  return 1;
}

static int ft_has_module(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  char *over = override_path(name);
  if (over) {
    free(over);
    lua_pushboolean(L, 1);
    return 1;
  }
  char path[512];
  module_path(name, path, sizeof path);
  lua_pushboolean(L, embed_find(path) != NULL);
  return 1;
}

static void install_ft(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"parse_bytes", ft_parse_bytes}, {"parse_duration", ft_parse_duration},
      {"format_bytes", ft_format_bytes}, {"json_decode", ft_json_decode},
      {"has_module", ft_has_module},     {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_pushstring(L, FLAGTUNE_VERSION);
  lua_setfield(L, -2, "version");
  lua_setglobal(L, "ft");
}

int lhost_new(lhost **out, char **err) {
  lhost *h = xcalloc(1, sizeof *h);
  h->L = lua_newstate(host_alloc, h);
  if (!h->L) {
    free(h);
    return diag_set(err, FT_ESYS, "cannot create a Lua state");
  }
  luaL_openlibs(h->L);
  install_searcher(h->L);
  install_ft(h->L);
  *out = h;
  return 0;
}

void lhost_free(lhost *h) {
  if (!h) return;
#ifdef FLAGTUNE_DEBUG_REFS
  if (h->live_refs != 0) fprintf(stderr, "flagtune: %d Lua refs still live at exit\n", h->live_refs);
  assert(h->live_refs == 0);
#endif
  lua_close(h->L);
  free(h);
}

lua_State *lhost_state(lhost *h) { return h->L; }

/* ---- protected calls ---- */

/* The count hook: past the budget, fail the call with the current line. */
static void budget_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lhost *h = host_of(L);
  h->used += HOOK_STEP;
  if (h->budget > 0 && h->used > h->budget) {
    lua_sethook(L, NULL, 0, 0);
    /* Level 0: inside a hook that is the Lua function running, not its caller. */
    luaL_where(L, 0);
    lua_pushfstring(L, "instruction budget of %d exceeded", (int)h->budget);
    lua_concat(L, 2);
    lua_error(L);
  }
}

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

int lhost_pcall(lhost *h, int nargs, int nresults, long budget, char **err) {
  lua_State *L = h->L;
  int base = lua_gettop(L) - nargs; /* the function's index */
  lua_pushcfunction(L, msghandler);
  lua_insert(L, base);
  long saved_budget = h->budget, saved_used = h->used;
  int nested = saved_budget > 0;
  if (budget > 0 && !nested) {
    h->budget = budget;
    h->used = 0;
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, HOOK_STEP);
  }
  int rc = lua_pcall(L, nargs, nresults, base);
  if (budget > 0 && !nested) {
    lua_sethook(L, NULL, 0, 0);
    h->budget = saved_budget;
    h->used = saved_used;
  }
  lua_remove(L, base);
  if (rc != LUA_OK) {
    diag_set(err, FT_ELUA, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "Lua error");
    lua_pop(L, 1);
    return FT_ELUA;
  }
  return 0;
}

int lhost_dostring(lhost *h, const char *path, const char *text, size_t len, int nresults,
                   char **err) {
  char *chunk = xasprintf("@%s", path);
  int rc = luaL_loadbufferx(h->L, text, len, chunk, "t");
  free(chunk);
  if (rc != LUA_OK) {
    diag_set(err, FT_ELUA, "%s", lua_tostring(h->L, -1));
    lua_pop(h->L, 1);
    return FT_ELUA;
  }
  return lhost_pcall(h, 0, nresults, 0, err);
}

int lhost_require(lhost *h, const char *name, char **err) {
  lua_getglobal(h->L, "require");
  lua_pushstring(h->L, name);
  return lhost_pcall(h, 1, 1, 0, err);
}

/* ---- counted refs ---- */

int lhost_ref(lhost *h) {
  int ref = luaL_ref(h->L, LUA_REGISTRYINDEX);
  if (ref != LUA_REFNIL && ref != LUA_NOREF) h->live_refs++;
  return ref;
}

void lhost_push_ref(lhost *h, int ref) { lua_rawgeti(h->L, LUA_REGISTRYINDEX, ref); }

void lhost_unref(lhost *h, int ref) {
  if (ref == LUA_REFNIL || ref == LUA_NOREF) return;
  luaL_unref(h->L, LUA_REGISTRYINDEX, ref);
  h->live_refs--;
}

int lhost_live_refs(const lhost *h) { return h->live_refs; }
