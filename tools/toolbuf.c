/* The host tools' buffer, file and C-array helpers (toolbuf.h). */
#include "toolbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int buf_add(buf *b, const void *data, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, data, n);
  b->len += n;
  return 0;
}

int read_file(const char *path, buf *out) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  char chunk[65536];
  size_t n;
  int rc = 0;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (buf_add(out, chunk, n) != 0) rc = -1;
  }
  if (ferror(f)) rc = -1;
  fclose(f);
  return rc;
}

void emit_named_array(buf *c, const char *id, const buf *data) {
  char line[64];
  snprintf(line, sizeof line, "static const unsigned char %s[] = {", id);
  buf_add(c, line, strlen(line));
  for (size_t k = 0; k < data->len; k++) {
    int n = snprintf(line, sizeof line, "%s%u,", k % 24 == 0 ? "\n" : "", data->p[k]);
    buf_add(c, line, (size_t)n);
  }
  buf_add(c, "0};\n", 4);
}

/* 1 when PATH already holds exactly DATA. */
static int same_content(const char *path, const buf *data) {
  buf old = {0};
  int same = read_file(path, &old) == 0 && old.len == data->len &&
             (old.len == 0 || memcmp(old.p, data->p, old.len) == 0);
  free(old.p);
  return same;
}

int write_if_changed(const char *path, const buf *data) {
  if (same_content(path, data)) return 0;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(data->p, 1, data->len, f) == data->len;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) {
    perror(tmp);
    remove(tmp);
    return -1;
  }
  return 0;
}
