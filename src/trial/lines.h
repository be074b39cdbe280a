/* A bounded line splitter: bytes in, whole lines out, never more than max_line bytes held. */
#ifndef FLAGTUNE_LINES_H
#define FLAGTUNE_LINES_H

#include <stddef.h>

/* Called for each line without its end: '\n', '\r' (a progress bar's redraw) or "\r\n". LINE is
 * NUL-terminated and valid only during the call. TRUNCATED is 1 when the line was longer
 * than max_line: the first max_line bytes are delivered and the rest is dropped. */
typedef void (*lines_cb)(void *ud, const char *line, size_t len, int truncated);

typedef struct {
  char *buf;
  size_t len;
  size_t max;
  int discarding; /* inside an over-long line whose head was already delivered */
  int after_cr;   /* the last line ended at '\r': a '\n' right after it ends nothing */
} lines_buf;

/* Allocates max_line + 2 bytes once (0 means 64 KiB); nothing more is ever held. */
void lines_init(lines_buf *lb, size_t max_line);
/* Splits DATA into lines, calling CB for each complete one. */
void lines_feed(lines_buf *lb, const char *data, size_t n, lines_cb cb, void *ud);
/* The line received so far and not yet ended (NUL-terminated, valid until the next feed),
 * with its length in *LEN; NULL when there is none or the current line is over-long (its
 * head was already delivered). Delivers nothing. */
const char *lines_pending(lines_buf *lb, size_t *len);
/* At end of stream: delivers a final line that had no newline. */
void lines_finish(lines_buf *lb, lines_cb cb, void *ud);
void lines_free(lines_buf *lb);

#endif
