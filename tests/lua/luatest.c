/* Runs one Lua test file inside flagtune's embedded runtime: the same `require` and `ft`
 * table the program uses, plus the test harness tests/lua/tap.lua as require("tap") (the
 * test file's directory is put first on package.path). After the file, tap.finish() prints
 * the summary; the run fails if the file raised, a case failed, or a counted registry ref
 * is still live when the host is closed. Owns only this process; must not touch the
 * database or run trials. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "lhost.h"

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0, r;
  do {
    if (n + 4096 > cap) buf = xrealloc(buf, cap = cap * 2 + 4096);
    r = fread(buf + n, 1, cap - n, f);
    n += r;
  } while (r > 0);
  fclose(f);
  *len = n;
  return buf;
}

/* package.path = "DIR/?.lua;" .. package.path, DIR being the directory of PATH. */
static void add_test_dir(lua_State *L, const char *path) {
  const char *slash = strrchr(path, '/');
  lua_getglobal(L, "package"); /* [package] */
  if (slash)
    lua_pushlstring(L, path, (size_t)(slash - path));
  else
    lua_pushliteral(L, "."); /* [package, dir] */
  lua_pushliteral(L, "/?.lua;");
  lua_getfield(L, -3, "path"); /* [package, dir, "/?.lua;", path] */
  lua_concat(L, 3);            /* [package, newpath] */
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
}

/* require("tap").finish(): the number of failed cases, or -1 with *err set. */
static int tap_finish(lhost *h, char **err) {
  lua_State *L = lhost_state(h);
  if (lhost_require(h, "tap", err) != 0) return -1;
  lua_getfield(L, -1, "finish"); /* [tap, finish] */
  lua_remove(L, -2);             /* [finish] */
  if (lhost_pcall(h, 0, 1, 0, err) != 0) return -1;
  int failed = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return failed;
}

/* Loads and runs TEXT (LEN bytes) as chunk "@PATH" through the host's protected call, so
 * that a test file's errors say PATH:LINE as a strategy's do. */
static int dostring(lhost *h, const char *path, const char *text, size_t len, char **err) {
  char *chunk = xasprintf("@%s", path);
  int rc = luaL_loadbufferx(lhost_state(h), text, len, chunk, "t");
  free(chunk);
  if (rc != LUA_OK) {
    diag_set(err, FT_ELUA, "%s", lua_tostring(lhost_state(h), -1));
    lua_pop(lhost_state(h), 1);
    return FT_ELUA;
  }
  return lhost_pcall(h, 0, 0, 0, err);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: luatest FILE.lua\n");
    return 2;
  }
  diag_verbose = 1; /* tracebacks help when a test fails */
  size_t len;
  char *text = read_file(argv[1], &len);
  if (!text) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  lhost *h = NULL;
  char *err = NULL;
  int failed = 0, live = 0;
  int rc = lhost_new(&h, &err);
  if (rc == 0) {
    add_test_dir(lhost_state(h), argv[1]);
    rc = dostring(h, argv[1], text, len, &err);
    if (rc != 0) fprintf(stderr, "%s: %s\n", argv[1], err ? err : "error");
    free(err);
    err = NULL;
    failed = tap_finish(h, &err);
    if (failed < 0) fprintf(stderr, "%s: %s\n", argv[1], err ? err : "error");
  } else {
    fprintf(stderr, "%s\n", err ? err : "error");
  }
  fflush(stdout); /* the cases' lines before the verdict on stderr */
  /* Clean end: every counted registry ref released before the state closes. */
  if (h) live = lhost_live_refs(h);
  lhost_free(h);
  if (live != 0) fprintf(stderr, "%s: %d Lua registry refs still live at the end\n", argv[1], live);
  free(err);
  free(text);
  int ok = rc == 0 && failed == 0 && live == 0;
  fprintf(stderr, "%s %s\n", ok ? "ok" : "FAILED", argv[1]);
  return ok ? 0 : 1;
}
