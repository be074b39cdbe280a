/* Errors and user-facing messages. Owns the wording conventions (compiler-style
 * "path:line: message", "flagtune: " prefix otherwise) and the out-of-memory policy.
 * Must not know about any other module. */
#include "diag.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int diag_verbose;
int diag_quiet;
void (*diag_before_print)(void);

static int diag_vset(char **err, int code, const char *fmt, va_list ap) {
  if (!err) return code;
  free(*err);
  /* Most messages fit the stack buffer and are formatted once; longer ones a second time. */
  char small[256];
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) n = 0, small[0] = '\0';
  *err = xmalloc((size_t)n + 1);
  if ((size_t)n < sizeof small)
    memcpy(*err, small, (size_t)n + 1);
  else
    vsnprintf(*err, (size_t)n + 1, fmt, ap);
  return code;
}

int diag_set(char **err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vset(err, code, fmt, ap);
  va_end(ap);
  return code;
}

/* True when MSG already carries a location ("x.lua:12: ..."). */
static int has_location(const char *msg) {
  const char *colon = strchr(msg, ':');
  if (!colon || colon == msg) return 0;
  const char *p = colon + 1;
  if (!isdigit((unsigned char)*p)) return 0;
  while (isdigit((unsigned char)*p)) p++;
  return *p == ':';
}

void diag_error(const char *msg) {
  if (!msg) msg = "unknown error";
  if (diag_before_print) diag_before_print();
  if (has_location(msg))
    fprintf(stderr, "%s\n", msg);
  else
    fprintf(stderr, "flagtune: %s\n", msg);
}

void diag_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (diag_before_print) diag_before_print();
  fputs("flagtune: warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void diag_note(const char *fmt, ...) {
  if (diag_quiet) return;
  if (diag_before_print) diag_before_print();
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int diag_exit_code(int code) {
  switch (code) {
    case FT_OK:
      return 0;
    case FT_EINPUT:
      return 2;
    case FT_EINTR:
      return 130;
    default:
      return 1;
  }
}

static void oom(void) {
  fputs("flagtune: out of memory\n", stderr);
  exit(1);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) oom();
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) oom();
  return p;
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) oom();
  return p;
}

char *xstrdup(const char *s) {
  return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n) {
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *xasprintf(const char *fmt, ...) {
  char *out = NULL;
  va_list ap;
  va_start(ap, fmt);
  diag_vset(&out, 0, fmt, ap);
  va_end(ap);
  return out;
}

int diag_distance(const char *a, const char *b, int cap) {
  size_t la = strlen(a), lb = strlen(b);
  if ((la > lb ? la - lb : lb - la) > (size_t)cap) return cap + 1;
  int *row = xmalloc(sizeof(int) * (lb + 1));
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  int d = row[lb];
  free(row);
  return d > cap ? cap + 1 : d;
}
