/* The bounded line splitter. Owns turning a byte stream into lines with a hard memory bound:
 * whatever a child prints (no newline for gigabytes, NULs, \r\n), at most max_line + 2 bytes
 * are held. A line ends at '\n', at '\r' (progress bars such as tqdm redraw one terminal line
 * with '\r', and each redraw is a step's report) or at "\r\n" (one end, not two).
 * It must stay pure: no I/O, no loop, no knowledge of who calls it. */
#include "lines.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"

enum { LINES_DEFAULT_MAX = 64 * 1024 };

void lines_init(lines_buf *lb, size_t max_line) {
  lb->max = max_line > 0 ? max_line : LINES_DEFAULT_MAX;
  /* One byte more than max so a line of exactly max bytes plus its '\r' fits whole, and one
   * for the terminating NUL handed to the callback. */
  lb->buf = xmalloc(lb->max + 2);
  lb->len = 0;
  lb->discarding = 0;
  lb->after_cr = 0;
}

/* Hands the held line to CB and empties the buffer. */
static void deliver(lines_buf *lb, lines_cb cb, void *ud) {
  size_t len = lb->len;
  int truncated = 0;
  if (len > lb->max) {
    len = lb->max;
    truncated = 1;
  }
  lb->buf[len] = '\0';
  lb->len = 0;
  cb(ud, lb->buf, len, truncated);
}

/* Appends a piece of the current line. When the line outgrows max + 1 bytes (so that it is
 * known to be longer than max), its head goes out now, truncated, and the rest is skipped up
 * to the line's end. */
static void append(lines_buf *lb, const char *p, size_t n, lines_cb cb, void *ud) {
  size_t room = lb->max + 1 - lb->len;
  size_t take = n < room ? n : room;
  memcpy(lb->buf + lb->len, p, take);
  lb->len += take;
  if (take == n) return;
  /* More bytes than fit: whatever they are, the line is longer than max. */
  lb->buf[lb->max] = '\0';
  lb->len = 0;
  lb->discarding = 1;
  cb(ud, lb->buf, lb->max, 1);
}

/* The line splitter goes through every byte of a trial's output flood, so it searches with
 * memchr() (vectorised in libc), not a byte loop: one search for '\n' per line, and one for
 * '\r' per '\r' in the chunk (most output has none: then one for the whole chunk), rather
 * than a '\r' search along every line. CR is the next '\r' at or after DATA, or NULL. */
void lines_feed(lines_buf *lb, const char *data, size_t n, lines_cb cb, void *ud) {
  const char *cr = n > 0 ? memchr(data, '\r', n) : NULL;
  while (n > 0) {
    if (lb->after_cr) { /* "\r\n" is one line end, even split between two feeds */
      lb->after_cr = 0;
      if (*data == '\n') {
        data++;
        n--;
        continue;
      }
    }
    if (cr && cr < data) cr = memchr(data, '\r', n); /* the last one was passed */
    const char *end = memchr(data, '\n', cr ? (size_t)(cr - data) : n);
    if (!end) end = cr;
    size_t piece = end ? (size_t)(end - data) : n;
    if (!lb->discarding) append(lb, data, piece, cb, ud);
    if (!end) return;
    if (lb->discarding)
      lb->discarding = 0; /* the over-long line ends here; its head was already delivered */
    else
      deliver(lb, cb, ud);
    lb->after_cr = *end == '\r';
    data += piece + 1;
    n -= piece + 1;
  }
}

const char *lines_pending(lines_buf *lb, size_t *len) {
  if (lb->discarding || lb->len == 0) return NULL;
  *len = lb->len > lb->max ? lb->max : lb->len;
  lb->buf[*len] = '\0'; /* the buffer has room for it: nothing is lost */
  return lb->buf;
}

void lines_finish(lines_buf *lb, lines_cb cb, void *ud) {
  if (!lb->discarding && lb->len > 0) deliver(lb, cb, ud);
  lb->len = 0;
  lb->discarding = 0;
  lb->after_cr = 0;
}

void lines_free(lines_buf *lb) {
  free(lb->buf);
  lb->buf = NULL;
  lb->len = 0;
}
