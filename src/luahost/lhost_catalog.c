/* The flag catalog read from C (lhost_catalog.h): one Lua host holding lua/catalog.lua's
 * array at the bottom of its stack. Knows the catalog's field names, not the command that
 * shows them. */
#include "lhost_catalog.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "json.h"
#include "lhost.h"

/* Budget for the catalog's load and the did-you-mean search (both well under it). */
#define LUA_BUDGET 50000000L

struct lcatalog {
  lhost *h;
  int cat; /* the catalog array's stack index */
  int n;
};

int lcatalog_open(lcatalog **out, char **err) {
  *out = NULL;
  lhost *h = NULL;
  int rc = lhost_new(&h, err);
  if (rc == 0) rc = lhost_require(h, "catalog", err);
  if (rc == 0 && lua_type(lhost_state(h), -1) != LUA_TTABLE)
    rc = diag_set(err, FT_ELUA, "lua/catalog.lua did not return a table");
  if (rc != 0) {
    lhost_free(h);
    return rc;
  }
  lcatalog *c = xcalloc(1, sizeof *c);
  c->h = h;
  c->cat = lua_gettop(lhost_state(h));
  c->n = (int)lua_rawlen(lhost_state(h), c->cat);
  *out = c;
  return 0;
}

void lcatalog_free(lcatalog *c) {
  if (!c) return;
  lhost_free(c->h);
  free(c);
}

int lcatalog_count(const lcatalog *c) {
  return c->n;
}

/* T[KEY] as display text (new string), as lcatalog_field says. */
static char *field_text(lua_State *L, int t, const char *key) {
  int type = lua_getfield(L, t, key);
  char *out = NULL;
  if (type == LUA_TBOOLEAN) {
    out = xstrdup(lua_toboolean(L, -1) ? "true" : "false");
  } else if (type == LUA_TNUMBER && lua_isinteger(L, -1)) {
    out = xasprintf("%lld", (long long)lua_tointeger(L, -1));
  } else if (type == LUA_TNUMBER) {
    out = xasprintf("%.10g", lua_tonumber(L, -1));
  } else if (type == LUA_TSTRING) {
    out = xstrdup(*lua_tostring(L, -1) ? lua_tostring(L, -1) : "''");
  } else if (type == LUA_TTABLE) {
    out = xstrdup("");
    int n = (int)lua_rawlen(L, -1), top = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
      lua_rawgeti(L, top, i);
      const char *v = lua_type(L, -1) == LUA_TBOOLEAN ? (lua_toboolean(L, -1) ? "true" : "false")
                                                      : luaL_tolstring(L, -1, NULL);
      char *next = xasprintf("%s%s%s", out, i > 1 ? " | " : "", *v ? v : "''");
      free(out);
      out = next;
      lua_settop(L, top);
    }
  }
  lua_pop(L, 1);
  return out;
}

char *lcatalog_field(lcatalog *c, int i, const char *key) {
  lua_State *L = lhost_state(c->h);
  lua_rawgeti(L, c->cat, i);
  char *v = lua_istable(L, -1) ? field_text(L, lua_gettop(L), key) : NULL;
  lua_pop(L, 1);
  return v;
}

int lcatalog_find(lcatalog *c, const char *name) {
  lua_State *L = lhost_state(c->h);
  for (int i = 1; i <= c->n; i++) {
    lua_rawgeti(L, c->cat, i);
    lua_getfield(L, -1, "name");
    int same = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), name) == 0;
    lua_pop(L, 2);
    if (same) return i;
  }
  return 0;
}

cJSON *lcatalog_json(lcatalog *c, int i) {
  lua_State *L = lhost_state(c->h);
  lua_rawgeti(L, c->cat, i);
  cJSON *o = json_from_lua(L, lua_gettop(L));
  lua_pop(L, 1);
  return o;
}

char *lcatalog_suggest(lcatalog *c, const char *name) {
  lua_State *L = lhost_state(c->h);
  int top = lua_gettop(L);
  char *err = NULL, *hint = NULL;
  if (lhost_require(c->h, "util", &err) == 0) {
    lua_getfield(L, -1, "did_you_mean");
    lua_pushstring(L, name);
    lua_newtable(L);
    for (int i = 1; i <= c->n; i++) {
      lua_rawgeti(L, c->cat, i);
      lua_getfield(L, -1, "name");
      lua_rawseti(L, -3, i);
      lua_pop(L, 1);
    }
    /* [util, did_you_mean, name, names] */
    if (lhost_pcall(c->h, 2, 1, LUA_BUDGET, &err) == 0 && lua_type(L, -1) == LUA_TSTRING)
      hint = xstrdup(lua_tostring(L, -1));
  }
  free(err);
  lua_settop(L, top);
  return hint;
}

/* T[KEY] as the text XLA_FLAGS would carry (new string): a boolean, number or string; NULL
 * when absent or a table. */
static char *scalar_text(lua_State *L, int t, const char *key) {
  int type = lua_getfield(L, t, key);
  char *v = NULL;
  if (type == LUA_TBOOLEAN)
    v = xstrdup(lua_toboolean(L, -1) ? "true" : "false");
  else if (type == LUA_TNUMBER && lua_isinteger(L, -1))
    v = xasprintf("%lld", (long long)lua_tointeger(L, -1));
  else if (type == LUA_TNUMBER)
    v = xasprintf("%.10g", lua_tonumber(L, -1));
  else if (type == LUA_TSTRING)
    v = xstrdup(lua_tostring(L, -1));
  lua_pop(L, 1);
  return v;
}

/* A value NAME's XLA parses, so that only an unknown name can fail the run: the catalog's
 * `probe` value, else its default, else one by type. A malformed value makes XLA die on it
 * before its unknown-flag check (and older XLAs skip that check). By type, from
 * xla/debug_options_flags.cc of a recent openxla/xla tree (SetterForRepeatedEnum is newer
 * than openxla/xla@1ff3f7d7):
 *   bool  "false": a setter may refuse true where the build lacks the feature
 *         (xla_gpu_enable_libnvptxcompiler's returns false for true unless
 *         IsLibNvPtxCompilerSupported(); jaxlib 0.11.2's wheel refused "true" on an H100);
 *   list  "": SetterForRepeatedEnum clears the list on an empty input and parses "true" as
 *         the enum value <PREFIX>TRUE, which does not exist (jaxlib 0.11.2 refused
 *         xla_gpu_experimental_autotune_backends=true);
 *   enum  its first catalog value; int, bytes, float "0"; string, path "" (a string whose
 *         "" does not parse gives `probe`: the thunk id ranges' ParseIntRangeInclusive,
 *         xla/debug_options_parsers.cc, refuses "").
 * A name the catalog lacks gets "true". */
char *lcatalog_probe_value(lcatalog *c, const char *name) {
  int i = lcatalog_find(c, name);
  if (!i) return xstrdup("true");
  lua_State *L = lhost_state(c->h);
  lua_rawgeti(L, c->cat, i);
  int e = lua_gettop(L);
  char *v = scalar_text(L, e, "probe");
  if (!v) v = scalar_text(L, e, "default");
  if (!v) {
    char *type = field_text(L, e, "type");
    const char *t = type ? type : "";
    if (strcmp(t, "bool") == 0) {
      v = xstrdup("false");
    } else if (strcmp(t, "enum") == 0) {
      lua_getfield(L, e, "values");
      if (lua_istable(L, -1)) {
        lua_rawgeti(L, -1, 1);
        if (lua_type(L, -1) == LUA_TSTRING) v = xstrdup(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    } else if (strcmp(t, "int") == 0 || strcmp(t, "bytes") == 0 || strcmp(t, "float") == 0) {
      v = xstrdup("0");
    } else if (strcmp(t, "list") == 0 || strcmp(t, "string") == 0 || strcmp(t, "path") == 0) {
      v = xstrdup("");
    }
    free(type);
  }
  lua_pop(L, 1);
  return v ? v : xstrdup("true");
}

char **lcatalog_flags(lcatalog *c, int *n) {
  char **out = xcalloc((size_t)c->n + 1, sizeof *out);
  *n = 0;
  for (int i = 1; i <= c->n; i++) {
    char *name = lcatalog_field(c, i, "name");
    char *kind = lcatalog_field(c, i, "kind");
    char *backend = lcatalog_field(c, i, "backend");
    if (name && kind && strcmp(kind, "flag") == 0 && !(backend && strcmp(backend, "tpu") == 0))
      out[(*n)++] = name;
    else
      free(name);
    free(kind), free(backend);
  }
  return out;
}
