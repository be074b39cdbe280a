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

/* Prints J for a reader (every --json output): indented when PRETTY, and always valid
 * JSON, which is UTF-8: a byte that is not part of a well-formed UTF-8 sequence (a
 * trial's log excerpt, a name typed in Latin-1) becomes U+FFFD. Caller frees. */
char *json_print_text(const cJSON *j, int pretty);

/* S with what a terminal would act on written out as \xNN: C0 controls (except those in
 * KEEP, e.g. "\n\t"), DEL, C1 controls and bytes that are not well-formed UTF-8. NULL for
 * NULL; caller frees. */
char *json_terminal_text(const char *s, const char *keep);

/* json_terminal_text on every string and key of J, in place (for tables and text). */
void json_terminal_safe(cJSON *j, const char *keep);

#endif
