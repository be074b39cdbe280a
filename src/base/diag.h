/* Errors and user-facing messages: the one place that formats what a user reads on stderr. */
#ifndef FLAGTUNE_DIAG_H
#define FLAGTUNE_DIAG_H

#include <stdarg.h>
#include <stddef.h>

/* Error codes, negative as libuv's. FT_EINPUT is always the user's fault (exit 2). */
enum {
  FT_OK = 0,
  FT_EINPUT = -2,  /* bad usage, bad experiment file, unknown sweep: exit 2 */
  FT_ESYS = -3,    /* a system call or library failed */
  FT_ESTORE = -4,  /* the database failed */
  FT_ELUA = -5,    /* a Lua error inside flagtune's own runtime or a strategy */
  FT_EINTR = -130, /* interrupted by a signal */
};

/* Sets *err (if err is not NULL) to a newly allocated message and returns CODE.
 * An existing *err is freed first. */
int diag_set(char **err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prints "flagtune: MSG" (or MSG alone when it already starts with "path:line:") to stderr. */
void diag_error(const char *msg);
/* printf-style warning: "flagtune: warning: ..." on stderr. */
void diag_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* printf-style progress note on stderr, suppressed by diag_quiet. */
void diag_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

extern int diag_verbose; /* -v: tracebacks and debug notes */
extern int diag_quiet;   /* -q: no progress notes */
/* Called before any message is printed (NULL: none): the live status area erases itself. */
extern void (*diag_before_print)(void);

/* Exit code for an error code: 0, 1, 2 or 130. */
int diag_exit_code(int code);

/* The edit distance between A and B, capped at CAP+1 (pure; for "did you mean"). */
int diag_distance(const char *a, const char *b, int cap);

/* Allocation that never returns NULL: out of memory ends the process with a message. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
