/* JSON between C, Lua and the database, on top of cJSON, and text for people: every --json
 * output (valid UTF-8 whatever the database holds) and strings made safe for a terminal.
 * Owns only conversions; never decides what the JSON means. */
#include "json.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

#define JSON_MAX_DEPTH 64

static void push_value(lua_State *L, const cJSON *j, int depth);

static void push_object(lua_State *L, const cJSON *j, int depth) {
  lua_createtable(L, 0, 0);
  for (const cJSON *c = j->child; c; c = c->next) {
    if (cJSON_IsNull(c)) continue;
    push_value(L, c, depth + 1);
    lua_setfield(L, -2, c->string);
  }
}

static void push_array(lua_State *L, const cJSON *j, int depth) {
  lua_createtable(L, cJSON_GetArraySize(j), 0);
  lua_Integer i = 1;
  for (const cJSON *c = j->child; c; c = c->next) {
    push_value(L, c, depth + 1);
    lua_rawseti(L, -2, i++);
  }
}

/* Numbers that are whole and fit become Lua integers, so 536870912 stays an integer. */
static void push_number(lua_State *L, double d) {
  if (d == floor(d) && fabs(d) < 9007199254740992.0)
    lua_pushinteger(L, (lua_Integer)d);
  else
    lua_pushnumber(L, d);
}

static void push_value(lua_State *L, const cJSON *j, int depth) {
  luaL_checkstack(L, 4, "JSON too deep");
  if (depth > JSON_MAX_DEPTH || cJSON_IsNull(j)) {
    lua_pushnil(L);
  } else if (cJSON_IsBool(j)) {
    lua_pushboolean(L, cJSON_IsTrue(j));
  } else if (cJSON_IsNumber(j)) {
    push_number(L, j->valuedouble);
  } else if (cJSON_IsString(j)) {
    lua_pushstring(L, j->valuestring);
  } else if (cJSON_IsArray(j)) {
    push_array(L, j, depth);
  } else {
    push_object(L, j, depth);
  }
}

int json_push_lua(lua_State *L, const char *text) {
  cJSON *j = cJSON_Parse(text);
  if (!j) return -1;
  push_value(L, j, 0);
  cJSON_Delete(j);
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static cJSON *from_lua(lua_State *L, int idx, int depth);

/* A table is an array when its keys are exactly 1..n (an empty table is an object). */
static int is_sequence(lua_State *L, int idx) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
  if (n == 0) return 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    count++;
  }
  return count == n;
}

static cJSON *table_to_object(lua_State *L, int idx, int depth) {
  int cap = 16, n = 0;
  char **keys = xmalloc(sizeof(char *) * (size_t)cap);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) continue;
    if (n == cap) keys = xrealloc(keys, sizeof(char *) * (size_t)(cap *= 2));
    keys[n++] = xstrdup(lua_tostring(L, -1));
  }
  qsort(keys, (size_t)n, sizeof(char *), cmp_str);
  cJSON *obj = cJSON_CreateObject();
  for (int i = 0; i < n; i++) {
    lua_getfield(L, idx, keys[i]);
    cJSON *v = from_lua(L, lua_gettop(L), depth + 1);
    lua_pop(L, 1);
    if (v) cJSON_AddItemToObject(obj, keys[i], v);
    free(keys[i]);
  }
  free(keys);
  return obj;
}

static cJSON *table_to_array(lua_State *L, int idx, int depth) {
  cJSON *arr = cJSON_CreateArray();
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, idx, i);
    cJSON *v = from_lua(L, lua_gettop(L), depth + 1);
    lua_pop(L, 1);
    cJSON_AddItemToArray(arr, v ? v : cJSON_CreateNull());
  }
  return arr;
}

static cJSON *from_lua(lua_State *L, int idx, int depth) {
  if (depth > JSON_MAX_DEPTH) return NULL;
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
      return cJSON_CreateBool(lua_toboolean(L, idx));
    case LUA_TNUMBER:
      return cJSON_CreateNumber(lua_tonumber(L, idx));
    case LUA_TSTRING:
      return cJSON_CreateString(lua_tostring(L, idx));
    case LUA_TTABLE:
      luaL_checkstack(L, 4, "table too deep");
      return is_sequence(L, idx) ? table_to_array(L, idx, depth) : table_to_object(L, idx, depth);
    default:
      return NULL;
  }
}

cJSON *json_from_lua(lua_State *L, int idx) {
  return from_lua(L, lua_absindex(L, idx), 0);
}

char *json_print(const cJSON *j) {
  char *s = cJSON_PrintUnformatted(j);
  if (!s) return xstrdup("null");
  return s;
}

/* ---- text for people: valid UTF-8, and no terminal control ---- */

/* The length of the well-formed UTF-8 sequence at S (N bytes left), or 0 (Unicode's table
 * of well-formed byte sequences: no overlongs, no surrogates, nothing past U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4;
  else
    return 0;
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

/* A growing output buffer. */
typedef struct {
  char *p;
  size_t len, cap;
} text_buf;

static void put(text_buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    while (b->len + n + 1 > b->cap) b->cap = b->cap * 2 + 64;
    b->p = xrealloc(b->p, b->cap);
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

char *json_print_text(const cJSON *j, int pretty) {
  char *raw = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
  if (!raw) return xstrdup("null");
  const unsigned char *s = (const unsigned char *)raw;
  size_t n = strlen(raw), i = 0;
  /* Most text is valid already: it is returned as cJSON wrote it (with malloc: no hooks are
   * set), and copied only from the first bad byte on. */
  while (i < n) {
    size_t k = s[i] < 0x80 ? 1 : utf8_len(s + i, n - i);
    if (k == 0) break;
    i += k;
  }
  if (i == n) return raw;
  text_buf b = {NULL, 0, 0};
  put(&b, raw, i);
  while (i < n) {
    size_t k = utf8_len(s + i, n - i);
    /* Outside strings cJSON writes ASCII only, so a bad byte is always inside one. */
    if (k == 0) {
      put(&b, "\xEF\xBF\xBD", 3); /* U+FFFD REPLACEMENT CHARACTER */
      k = 1;
    } else {
      put(&b, raw + i, k);
    }
    i += k;
  }
  free(raw);
  return b.p;
}

char *json_terminal_text(const char *s, const char *keep) {
  if (!s) return NULL;
  const unsigned char *u = (const unsigned char *)s;
  size_t n = strlen(s);
  text_buf b = {NULL, 0, 0};
  put(&b, "", 0);
  for (size_t i = 0; i < n;) {
    size_t k = utf8_len(u + i, n - i);
    int control = k == 1 && (u[i] < 0x20 || u[i] == 0x7F) && !(keep && strchr(keep, s[i]));
    int c1 = k == 2 && u[i] == 0xC2 && u[i + 1] <= 0x9F; /* U+0080..U+009F: CSI and kin */
    if (k == 0 || control || c1) {
      size_t bad = k ? k : 1;
      for (size_t x = 0; x < bad; x++) {
        char esc[8];
        snprintf(esc, sizeof esc, "\\x%02x", u[i + x]);
        put(&b, esc, 4);
      }
      i += bad;
    } else {
      put(&b, s + i, k);
      i += k;
    }
  }
  return b.p;
}

/* Replaces *S (a cJSON-owned string) with its terminal-safe text when that differs. */
static void make_safe(char **s, const char *keep) {
  char *safe = json_terminal_text(*s, keep);
  if (safe && strcmp(safe, *s) != 0) {
    cJSON_free(*s);
    *s = safe;
  } else {
    free(safe);
  }
}

void json_terminal_safe(cJSON *j, const char *keep) {
  for (; j; j = j->next) {
    if (j->string && !(j->type & cJSON_StringIsConst)) make_safe(&j->string, keep);
    if (cJSON_IsString(j) && j->valuestring) make_safe(&j->valuestring, keep);
    json_terminal_safe(j->child, keep);
  }
}
