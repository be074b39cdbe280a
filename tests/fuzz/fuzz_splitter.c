/* libFuzzer target: lines_feed/lines_finish. The input is cut into chunks at positions the
 * first bytes choose; the lines delivered must equal a simple reference splitter's (a line
 * ends at '\n', '\r' or "\r\n", lines longer than max cut to max and flagged), and no line
 * may exceed the bound. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

typedef struct {
  const uint8_t *ref; /* the whole stream */
  size_t n, at;       /* reference position */
  size_t max;
  int lines;
} ctx;

/* The next reference line: its bytes and whether it was cut. */
static int ref_next(ctx *c, const uint8_t **p, size_t *len, int *trunc) {
  if (c->at >= c->n) return 0;
  const uint8_t *start = c->ref + c->at;
  size_t l = 0, left = c->n - c->at;
  while (l < left && start[l] != '\n' && start[l] != '\r') l++;
  c->at += l;
  if (l < left) { /* the end: '\n', '\r', or "\r\n" as one */
    c->at += start[l] == '\r' && l + 1 < left && start[l + 1] == '\n' ? 2 : 1;
  }
  *trunc = l > c->max;
  *len = *trunc ? c->max : l;
  *p = start;
  return 1;
}

static void on_line(void *ud, const char *line, size_t len, int truncated) {
  ctx *c = ud;
  const uint8_t *p;
  size_t want;
  int trunc;
  if (len > c->max) abort();
  if (line[len] != '\0') abort();
  if (!ref_next(c, &p, &want, &trunc)) abort(); /* a line the reference does not have */
  if (truncated != trunc) abort();
  if (!trunc && (want != len || memcmp(p, line, len) != 0)) abort();
  if (trunc && memcmp(p, line, len) != 0) abort();
  c->lines++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t max = 1 + data[0] % 64;
  size_t chunk = 1 + data[1] % 17;
  data += 2;
  size -= 2;
  ctx c = {data, size, 0, max, 0};
  lines_buf lb;
  lines_init(&lb, max);
  for (size_t i = 0; i < size; i += chunk) {
    size_t n = size - i < chunk ? size - i : chunk;
    lines_feed(&lb, (const char *)data + i, n, on_line, &c);
  }
  lines_finish(&lb, on_line, &c);
  lines_free(&lb);
  if (c.at != c.n) abort(); /* every reference line was delivered */
  return 0;
}
