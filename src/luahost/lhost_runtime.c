/* The Lua host's runtime: the embedded-module loader (`require` of lua/ and search/, a
 * $FLAGTUNE_SEARCH_PATH override) and the `ft` helper table (units, JSON, the embedded
 * files, ft.digest, tpe's C models installed at their first read). Installed into a new state
 * by lhost.c; calls back into neither lhost.c nor lhost_limits.c. */
#include <lauxlib.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "confirm.h"
#include "diag.h"
#include "embed.h"
#include "json.h"
#include "lhost_state.h"
#include "parzen.h"
#include "ridge.h"
#include "units.h"

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
  /* Precompiled at build time (tools/embed.c): bytecode only, with the file's name and lines. */
  if (luaL_loadbufferx(L, f->data, f->len, chunk, "b") != LUA_OK) return lua_error(L);
  lua_pushstring(L, path);
  return 2;
}

/* Put the embedded searcher first so flagtune's own modules never come from disk. */
void lhost_install_searcher(lua_State *L) {
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

/* ft.load_embedded(PATH, OFFSET, LEN): the bytecode chunk at bytes [OFFSET, OFFSET + LEN)
 * of the embedded file PATH as a function (chunk name "=PATH"; lua/catindex.lua loads the
 * catalog's entries from "lua/catalog.entries" so). nil and a message when there is no such
 * file or the range is outside it; a chunk that is not bytecode raises. */
static int ft_load_embedded(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer off = luaL_checkinteger(L, 2), len = luaL_checkinteger(L, 3);
  const embed_file *f = embed_find(path);
  if (!f) {
    lua_pushnil(L);
    lua_pushfstring(L, "no embedded file '%s'", path);
    return 2;
  }
  if (off < 0 || len <= 0 || (size_t)off > f->len || (size_t)len > f->len - (size_t)off) {
    lua_pushnil(L);
    lua_pushfstring(L, "bytes %I+%I are outside the embedded file '%s'", off, len, path);
    return 2;
  }
  char chunk[520];
  snprintf(chunk, sizeof chunk, "=%s", path);
  if (luaL_loadbufferx(L, f->data + off, (size_t)len, chunk, "b") != LUA_OK) return lua_error(L);
  return 1;
}

/* ---- ft.digest: a 16-byte identity for a long key ---- */

static uint64_t rotl64(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

static uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

/* MurmurHash3_x64_128 (Austin Appleby, public domain; SMHasher's MurmurHash3.cpp), seed 0,
 * little-endian reads. */
static void murmur3_128(const unsigned char *data, size_t len, uint64_t out[2]) {
  const uint64_t c1 = 0x87c37b91114253d5ULL, c2 = 0x4cf5ad432745937fULL;
  uint64_t h1 = 0, h2 = 0;
  size_t nblocks = len / 16;
  for (size_t i = 0; i < nblocks; i++) {
    uint64_t k1, k2;
    memcpy(&k1, data + 16 * i, 8);
    memcpy(&k2, data + 16 * i + 8, 8);
    k1 *= c1, k1 = rotl64(k1, 31), k1 *= c2, h1 ^= k1;
    h1 = rotl64(h1, 27), h1 += h2, h1 = h1 * 5 + 0x52dce729;
    k2 *= c2, k2 = rotl64(k2, 33), k2 *= c1, h2 ^= k2;
    h2 = rotl64(h2, 31), h2 += h1, h2 = h2 * 5 + 0x38495ab5;
  }
  const unsigned char *tail = data + 16 * nblocks;
  uint64_t k1 = 0, k2 = 0;
  switch (len & 15) {
    case 15:
      k2 ^= (uint64_t)tail[14] << 48; /* fall through */
    case 14:
      k2 ^= (uint64_t)tail[13] << 40; /* fall through */
    case 13:
      k2 ^= (uint64_t)tail[12] << 32; /* fall through */
    case 12:
      k2 ^= (uint64_t)tail[11] << 24; /* fall through */
    case 11:
      k2 ^= (uint64_t)tail[10] << 16; /* fall through */
    case 10:
      k2 ^= (uint64_t)tail[9] << 8; /* fall through */
    case 9:
      k2 ^= (uint64_t)tail[8];
      k2 *= c2, k2 = rotl64(k2, 33), k2 *= c1, h2 ^= k2;
      /* fall through */
    case 8:
      k1 ^= (uint64_t)tail[7] << 56; /* fall through */
    case 7:
      k1 ^= (uint64_t)tail[6] << 48; /* fall through */
    case 6:
      k1 ^= (uint64_t)tail[5] << 40; /* fall through */
    case 5:
      k1 ^= (uint64_t)tail[4] << 32; /* fall through */
    case 4:
      k1 ^= (uint64_t)tail[3] << 24; /* fall through */
    case 3:
      k1 ^= (uint64_t)tail[2] << 16; /* fall through */
    case 2:
      k1 ^= (uint64_t)tail[1] << 8; /* fall through */
    case 1:
      k1 ^= (uint64_t)tail[0];
      k1 *= c1, k1 = rotl64(k1, 31), k1 *= c2, h1 ^= k1;
  }
  h1 ^= (uint64_t)len, h2 ^= (uint64_t)len;
  h1 += h2, h2 += h1;
  h1 = fmix64(h1), h2 = fmix64(h2);
  h1 += h2, h2 += h1;
  out[0] = h1;
  out[1] = h2;
}

/* ft.digest(S): S itself when it is short (up to 16 bytes), else a 17-byte string: a marker
 * byte (0x01) and S's 128-bit MurmurHash3. Both are short strings, which Lua 5.4 interns:
 * every table keyed by a configuration's digest shares one 18-byte object per
 * configuration, where its canonical JSON (hundreds of bytes, not interned) was copied into
 * each seen set. Distinct keys of 17 bytes or more collide with probability about n^2 /
 * 2^129 (1e-29 at 100,000 keys); a short S, kept as it is, is never a digest (whose length
 * it does not have). */
size_t lhost_digest(const char *s, size_t len, char out[LHOST_DIGEST_MAX]) {
  if (len <= 16) {
    memcpy(out, s, len);
    return len;
  }
  uint64_t h[2];
  murmur3_128((const unsigned char *)s, len, h);
  out[0] = 1;
  memcpy(out + 1, h, 16);
  return 17;
}

static int ft_digest(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  char out[LHOST_DIGEST_MAX];
  lua_pushlstring(L, out, lhost_digest(s, len, out));
  return 1;
}

/* ft.noise_posterior(ss, df): the measurement noise's variance given the repeated runs'
 * within sum of squares SS (log values) and DF degrees of freedom, confirm_noise_posterior
 * (src/sweep/confirm.c), so that tpe's ranking under noise uses the confirmation's own rule. */
static int ft_noise_posterior(lua_State *L) {
  double ss = luaL_checknumber(L, 1);
  lua_Integer df = luaL_checkinteger(L, 2);
  luaL_argcheck(L, ss >= 0 && df >= 0 && df <= INT_MAX, 1, "a sum of squares and a count >= 0");
  lua_pushnumber(L, confirm_noise_posterior(ss, (int)df));
  return 1;
}

/* ft's __index until tpe's helpers are installed: ft.parzen_kernels, ft.parzen_points
 * (search/parzen.c), ft.ridge_new (search/ridge.c) and ft.noise_posterior are made at the first
 * read of one of them, and ft loses its metatable: their metatables and method tables cost
 * every start 28 K instructions, and only search/tpe.lua uses them (docs/COST.md,
 * Start-up). */
static int ft_install_models(lua_State *L) {
  const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;
  if (!k || (strcmp(k, "parzen_kernels") != 0 && strcmp(k, "parzen_points") != 0 &&
             strcmp(k, "ridge_new") != 0 && strcmp(k, "noise_posterior") != 0))
    return 0;
  lua_settop(L, 2);
  lua_pushvalue(L, 1); /* [ft, key, ft] */
  parzen_install(L);
  ridge_install(L);
  lua_pushcfunction(L, ft_noise_posterior);
  lua_setfield(L, -2, "noise_posterior");
  lua_pop(L, 1); /* [ft, key] */
  lua_pushnil(L);
  lua_setmetatable(L, 1);
  lua_rawget(L, 1); /* [ft, ft[key]] */
  return 1;
}

void lhost_install_ft(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"parse_bytes", ft_parse_bytes},     {"parse_duration", ft_parse_duration},
      {"format_bytes", ft_format_bytes},   {"json_decode", ft_json_decode},
      {"has_module", ft_has_module},       {"digest", ft_digest},
      {"load_embedded", ft_load_embedded}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_pushstring(L, FLAGTUNE_VERSION);
  lua_setfield(L, -2, "version");
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, ft_install_models);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_setglobal(L, "ft");
}
