/* JSON between C, Lua and the database, on top of cJSON. */
#ifndef FLAGTUNE_JSON_H
#define FLAGTUNE_JSON_H

#include <cjson/cJSON.h>
#include <lua.h>

/* Parses TEXT and pushes it as a Lua value (objects and arrays become tables, null
 * becomes nil inside tables is dropped). Returns 0, or -1 with nothing pushed. */
int json_push_lua(lua_State *L, const char *text);

/* Converts the Lua value at IDX (tables with string keys become objects, sequences become
 * arrays, keys sorted) to cJSON. Returns NULL for unsupported values. */
cJSON *json_from_lua(lua_State *L, int idx);

/* Prints J compactly; caller frees with free(). */
char *json_print(const cJSON *j);

#endif
