/* What the build's host tools (tools/embed.c, tools/schema.c) share: a growing byte buffer, a
 * whole file read into one, a buffer written out as a C array, and an output file written only
 * when its content changes (so that nothing that includes it is rebuilt for nothing). Built for
 * the host only; owns nothing at run time. */
#ifndef FLAGTUNE_TOOLBUF_H
#define FLAGTUNE_TOOLBUF_H

#include <stddef.h>

typedef struct {
  unsigned char *p;
  size_t len, cap;
} buf;

/* Appends N bytes of DATA; -1 when out of memory. */
int buf_add(buf *b, const void *data, size_t n);

/* Appends the whole file at PATH; -1 when it cannot be read. */
int read_file(const char *path, buf *out);

/* `static const unsigned char ID[] = {...};`, DATA's bytes and a 0 after them, onto C. */
void emit_named_array(buf *c, const char *id, const buf *data);

/* Writes DATA to PATH (through PATH.tmp and a rename) unless PATH already holds exactly it;
 * -1, said on stderr, when it cannot. */
int write_if_changed(const char *path, const buf *data);

#endif
