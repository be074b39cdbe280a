/* JSON between C, Lua and the database, on top of cJSON. Owns only conversions;
 * never decides what the JSON means. */
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
    case LUA_TBOOLEAN: return cJSON_CreateBool(lua_toboolean(L, idx));
    case LUA_TNUMBER: return cJSON_CreateNumber(lua_tonumber(L, idx));
    case LUA_TSTRING: return cJSON_CreateString(lua_tostring(L, idx));
    case LUA_TTABLE:
      luaL_checkstack(L, 4, "table too deep");
      return is_sequence(L, idx) ? table_to_array(L, idx, depth) : table_to_object(L, idx, depth);
    default: return NULL;
  }
}

cJSON *json_from_lua(lua_State *L, int idx) { return from_lua(L, lua_absindex(L, idx), 0); }

char *json_print(const cJSON *j) {
  char *s = cJSON_PrintUnformatted(j);
  if (!s) return xstrdup("null");
  return s;
}
