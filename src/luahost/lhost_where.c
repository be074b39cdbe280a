/* Where user code is: the "path:line: " of the user's innermost frame, read by the limits
 * (lhost_limits.c: where a budget broke) and by error()'s note of an unlocated raise
 * (lhost.c). A leaf of the Lua host: it calls neither file. */
#include <stdio.h>

#include "embed.h"
#include "lhost_state.h"

/* "path:line: " of the innermost Lua frame at or above LEVEL that runs a file of the user's
 * (a chunk "@path" that is not one of the embedded lua/ or search/ files), else of the
 * innermost Lua frame with a line; "" when there is none. Reads only CallInfo and Proto
 * fields, so it allocates nothing. Returns 1 when the frame is the user's. */
int lhost_where_user(lua_State *L, int level, char *buf, size_t n) {
  lua_Debug ar;
  buf[0] = '\0';
  for (int depth = 0; depth < 200 && lua_getstack(L, level, &ar); level++, depth++) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
    int user = ar.source[0] == '@' && !embed_find(ar.source + 1);
    if (user || !buf[0])
      snprintf(buf, n, "%s:%d: ", user ? ar.source + 1 : ar.short_src, ar.currentline);
    if (user) return 1;
  }
  return 0;
}
