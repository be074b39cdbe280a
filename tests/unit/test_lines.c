/* Unit tests for the bounded line splitter (lines.c): no loop, just bytes in, lines out. */
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "test.h"

#define MAX_SEEN 16

/* What the callback saw: each line copied with its length (NULs included) and flag. */
typedef struct {
  int n;
  char line[MAX_SEEN][128];
  size_t len[MAX_SEEN];
  int truncated[MAX_SEEN];
  int nul_terminated; /* every delivered line had line[len] == '\0' */
} seen;

static void collect(void *ud, const char *line, size_t len, int truncated) {
  seen *s = ud;
  if (line[len] != '\0') s->nul_terminated = 0;
  if (s->n >= MAX_SEEN) return;
  size_t keep = len < sizeof s->line[0] - 1 ? len : sizeof s->line[0] - 1;
  memcpy(s->line[s->n], line, keep);
  s->line[s->n][keep] = '\0';
  s->len[s->n] = len;
  s->truncated[s->n] = truncated;
  s->n++;
}

static void feed_str(lines_buf *lb, const char *str, seen *s) {
  lines_feed(lb, str, strlen(str), collect, s);
}

static seen fresh(void) {
  seen s;
  memset(&s, 0, sizeof s);
  s.nul_terminated = 1;
  return s;
}

TEST(simple_lines) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  feed_str(&lb, "one\ntwo\nthree\n", &s);
  CHECK_INT(s.n, 3);
  CHECK_STR(s.line[0], "one");
  CHECK_STR(s.line[1], "two");
  CHECK_STR(s.line[2], "three");
  CHECK_INT(s.len[2], 5);
  CHECK_INT(s.truncated[0] + s.truncated[1] + s.truncated[2], 0);
  CHECK(s.nul_terminated);
  lines_free(&lb);
}

/* A line not yet ended can be looked at (an OOM text before a hang) without being delivered:
 * it comes whole once it ends. An over-long line has nothing pending. */
TEST(pending_partial_line) {
  lines_buf lb;
  seen s = fresh();
  size_t len = 99;
  lines_init(&lb, 8);
  CHECK(lines_pending(&lb, &len) == NULL);
  feed_str(&lb, "ok\nRESOU", &s);
  CHECK_INT(s.n, 1);
  CHECK_STR(lines_pending(&lb, &len), "RESOU");
  CHECK_INT(len, 5);
  feed_str(&lb, "RCE", &s);
  CHECK_STR(lines_pending(&lb, &len), "RESOURCE");
  CHECK_INT(s.n, 1);
  feed_str(&lb, "\n", &s);
  CHECK_INT(s.n, 2);
  CHECK_STR(s.line[1], "RESOURCE");
  CHECK(lines_pending(&lb, &len) == NULL);
  feed_str(&lb, "0123456789", &s); /* longer than 8: its head went out, the rest is skipped */
  CHECK_INT(s.n, 3);
  CHECK(lines_pending(&lb, &len) == NULL);
  lines_free(&lb);
}

TEST(split_across_feeds) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  feed_str(&lb, "hel", &s);
  CHECK_INT(s.n, 0);
  feed_str(&lb, "lo wo", &s);
  feed_str(&lb, "rld\nsecond", &s);
  CHECK_INT(s.n, 1);
  CHECK_STR(s.line[0], "hello world");
  feed_str(&lb, " half\n", &s);
  CHECK_INT(s.n, 2);
  CHECK_STR(s.line[1], "second half");
  lines_free(&lb);
}

TEST(byte_by_byte) {
  lines_buf lb;
  seen s = fresh();
  const char *text = "ab\r\ncd\n";
  lines_init(&lb, 8);
  for (size_t i = 0; i < strlen(text); i++) lines_feed(&lb, text + i, 1, collect, &s);
  CHECK_INT(s.n, 2);
  CHECK_STR(s.line[0], "ab");
  CHECK_STR(s.line[1], "cd");
  lines_free(&lb);
}

/* '\r' ends a line (a progress bar's redraw); "\r\n" is one end, not two. */
TEST(cr_ends_a_line) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  feed_str(&lb, "dos\r\nkeep\r\r\nmid\rdle\n", &s);
  CHECK_INT(s.n, 5);
  CHECK_STR(s.line[0], "dos");
  CHECK_STR(s.line[1], "keep");
  CHECK_INT(s.len[2], 0); /* "\r" then "\r\n": an empty line between them */
  CHECK_STR(s.line[3], "mid");
  CHECK_STR(s.line[4], "dle");
  CHECK(s.nul_terminated);
  lines_free(&lb);
}

/* tqdm-style output: each redraw of the bar is a line of its own, so each step's report
 * reaches the parser; the final "\n" after the last redraw adds no empty line. */
TEST(progress_bar_redraws_are_lines) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  feed_str(&lb, "step 1: 10.5 ms\rstep 2: 10.", &s);
  CHECK_INT(s.n, 1);
  feed_str(&lb, "1 ms\r", &s);
  CHECK_INT(s.n, 2);
  feed_str(&lb, "step 3: 9.9 ms\r\n", &s);
  feed_str(&lb, "\rdone\r", &s);
  CHECK_INT(s.n, 5);
  CHECK_STR(s.line[0], "step 1: 10.5 ms");
  CHECK_STR(s.line[1], "step 2: 10.1 ms");
  CHECK_STR(s.line[2], "step 3: 9.9 ms");
  CHECK_INT(s.len[3], 0);
  CHECK_STR(s.line[4], "done");
  lines_finish(&lb, collect, &s);
  CHECK_INT(s.n, 5);
  lines_free(&lb);
}

/* An over-long line ended by '\r' ends its dropping there, like '\n'. */
TEST(overlong_line_ends_at_cr) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 4);
  feed_str(&lb, "0123456789\r", &s);
  feed_str(&lb, "\nok\r", &s);
  CHECK_INT(s.n, 2);
  CHECK_INT(s.truncated[0], 1);
  CHECK_STR(s.line[1], "ok");
  CHECK_INT(s.truncated[1], 0);
  lines_free(&lb);
}

TEST(crlf_split_between_feeds) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  feed_str(&lb, "abc\r", &s);
  feed_str(&lb, "\n", &s);
  CHECK_INT(s.n, 1);
  CHECK_STR(s.line[0], "abc");
  CHECK_INT(s.len[0], 3);
  lines_free(&lb);
}

TEST(empty_lines) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  feed_str(&lb, "\n\r\n\nx\n", &s);
  CHECK_INT(s.n, 4);
  CHECK_INT(s.len[0], 0);
  CHECK_INT(s.len[1], 0);
  CHECK_INT(s.len[2], 0);
  CHECK_STR(s.line[3], "x");
  CHECK(s.nul_terminated);
  lines_free(&lb);
}

TEST(exact_max_boundary) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 4);
  feed_str(&lb, "abcd\n", &s);   /* exactly max: whole */
  feed_str(&lb, "efgh\r\n", &s); /* max ended by "\r\n": whole */
  feed_str(&lb, "ijklm\n", &s);  /* max + 1: truncated */
  feed_str(&lb, "abc\n", &s);    /* under max after a truncated one */
  CHECK_INT(s.n, 4);
  CHECK_STR(s.line[0], "abcd");
  CHECK_INT(s.truncated[0], 0);
  CHECK_STR(s.line[1], "efgh");
  CHECK_INT(s.len[1], 4);
  CHECK_INT(s.truncated[1], 0);
  CHECK_STR(s.line[2], "ijkl");
  CHECK_INT(s.len[2], 4);
  CHECK_INT(s.truncated[2], 1);
  CHECK_STR(s.line[3], "abc");
  CHECK_INT(s.truncated[3], 0);
  lines_free(&lb);
}

TEST(overlong_line_dropped_until_newline) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 5);
  feed_str(&lb, "0123456789", &s);
  /* The head goes out as soon as the line is known to be too long. */
  CHECK_INT(s.n, 1);
  CHECK_STR(s.line[0], "01234");
  CHECK_INT(s.len[0], 5);
  CHECK_INT(s.truncated[0], 1);
  feed_str(&lb, "more and more and more", &s);
  CHECK_INT(s.n, 1);
  feed_str(&lb, " end\nnext\n", &s);
  CHECK_INT(s.n, 2);
  CHECK_STR(s.line[1], "next");
  CHECK_INT(s.truncated[1], 0);
  CHECK(lb.len <= lb.max + 1);
  lines_free(&lb);
}

TEST(huge_feed_stays_bounded) {
  lines_buf lb;
  seen s = fresh();
  size_t big = 4 * 1024 * 1024;
  char *data = malloc(big);
  memset(data, 'z', big);
  data[big / 2] = '\n';
  lines_init(&lb, 16);
  lines_feed(&lb, data, big, collect, &s);
  /* Two over-long lines: the first ended by the '\n', the second still open. */
  CHECK_INT(s.n, 2);
  CHECK_INT(s.len[0], 16);
  CHECK_INT(s.truncated[1], 1);
  CHECK(lb.len <= lb.max + 1);
  lines_finish(&lb, collect, &s);
  CHECK_INT(s.n, 2); /* the rest of a dropped line is not delivered again */
  free(data);
  lines_free(&lb);
}

TEST(final_partial_line) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  feed_str(&lb, "done\nno newline", &s);
  CHECK_INT(s.n, 1);
  lines_finish(&lb, collect, &s);
  CHECK_INT(s.n, 2);
  CHECK_STR(s.line[1], "no newline");
  lines_finish(&lb, collect, &s); /* nothing left: no empty extra line */
  CHECK_INT(s.n, 2);
  lines_free(&lb);
}

TEST(finish_on_empty_stream) {
  lines_buf lb;
  seen s = fresh();
  lines_init(&lb, 64);
  lines_finish(&lb, collect, &s);
  CHECK_INT(s.n, 0);
  lines_free(&lb);
}

TEST(nul_bytes_counted) {
  lines_buf lb;
  seen s = fresh();
  static const char data[] = "a\0b\0c\n\0\n";
  lines_init(&lb, 64);
  lines_feed(&lb, data, sizeof data - 1, collect, &s);
  CHECK_INT(s.n, 2);
  CHECK_INT(s.len[0], 5);
  CHECK(memcmp(s.line[0], "a\0b\0c", 5) == 0);
  CHECK_INT(s.len[1], 1);
  CHECK_INT(s.line[1][0], 0);
  lines_free(&lb);
}

TEST(zero_max_means_default) {
  lines_buf lb;
  lines_init(&lb, 0);
  CHECK_INT(lb.max, 64 * 1024);
  lines_free(&lb);
  CHECK(lb.buf == NULL);
}

/* Every line as one record "len:truncated:bytes|", for comparing whole streams. */
typedef struct {
  char out[8192];
  size_t used;
} transcript;

static void record(void *ud, const char *line, size_t len, int truncated) {
  transcript *t = ud;
  int n = snprintf(t->out + t->used, sizeof t->out - t->used, "%zu:%d:", len, truncated);
  if (n > 0) t->used += (size_t)n;
  if (t->used + len + 1 < sizeof t->out) {
    memcpy(t->out + t->used, line, len);
    t->used += len;
    t->out[t->used++] = '|';
  }
}

/* The splitter finds '\r' once per chunk (and again per '\r'), not along every line: random
 * streams of '\n', '\r', "\r\n", NULs and lines past max, cut into chunks at random places
 * (a "\r\n" split between chunks included), give the same lines as a byte-by-byte feed. */
TEST(chunks_anywhere_match_byte_by_byte) {
  static const char alphabet[] = "ab\r\n\r\n\0x";
  unsigned seed = 7;
  for (int iter = 0; iter < 3000; iter++) {
    char stream[300];
    size_t n = 0;
    seed = seed * 1103515245u + 12345u;
    size_t len = (seed >> 16) % sizeof stream;
    while (n < len) {
      seed = seed * 1103515245u + 12345u;
      if ((seed >> 16) % 9 == 0) { /* a run longer than max */
        for (int k = 0; k < 20 && n < len; k++) stream[n++] = 'L';
      } else {
        stream[n++] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
      }
    }
    transcript whole, cut;
    memset(&whole, 0, sizeof whole);
    memset(&cut, 0, sizeof cut);
    lines_buf a, b;
    lines_init(&a, 12);
    lines_init(&b, 12);
    for (size_t i = 0; i < n; i++) lines_feed(&a, stream + i, 1, record, &whole);
    for (size_t i = 0; i < n;) {
      seed = seed * 1103515245u + 12345u;
      size_t k = 1 + (seed >> 16) % 40;
      if (k > n - i) k = n - i;
      lines_feed(&b, stream + i, k, record, &cut);
      i += k;
    }
    lines_finish(&a, record, &whole);
    lines_finish(&b, record, &cut);
    CHECK_INT(cut.used, whole.used);
    CHECK(memcmp(cut.out, whole.out, whole.used) == 0);
    lines_free(&a);
    lines_free(&b);
  }
}
