/* Runs one Lua test file inside flagtune's embedded runtime: the same `require` and `ft`
 * table the program uses. A test fails by raising an error; the message is printed. */
#include <stdio.h>
#include <stdlib.h>

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
  int rc = lhost_new(&h, &err);
  if (rc == 0) rc = lhost_dostring(h, argv[1], text, len, 0, &err);
  if (rc != 0) fprintf(stderr, "%s\n", err ? err : "error");
  else fprintf(stderr, "ok %s\n", argv[1]);
  free(err);
  free(text);
  lhost_free(h);
  return rc == 0 ? 0 : 1;
}
