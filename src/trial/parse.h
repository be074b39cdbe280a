/* Reading step times out of a trial's output lines: pure functions, no loop, no Lua. */
#ifndef FLAGTUNE_PARSE_H
#define FLAGTUNE_PARSE_H

#include <stddef.h>

typedef enum { METRIC_JSON = 0, METRIC_PATTERN = 1 } metric_kind;

/* A pattern matcher supplied by the caller (the experiment module wraps Lua's
 * string.match). Returns 1 and sets *out when the line holds a capture that reads as a
 * number, 0 otherwise. */
typedef int (*metric_match_fn)(void *ctx, const char *line, size_t len, double *out);

typedef struct {
  metric_kind kind;
  const char *field;     /* METRIC_JSON: key, dotted for nesting ("timing.step_ms") */
  metric_match_fn match; /* METRIC_PATTERN */
  void *match_ctx;
  double scale;  /* multiply what was read to get milliseconds; 0 means 1 */
  int any_value; /* accept any finite value (a loss), not only a plausible step time */
  int rate;      /* metric.better = "higher": the value read is a rate per second (it/s), and
                  *ms is its cost, 1000 / rate: ms per unit, lower is better */
} metric_spec;

enum {
  PARSE_NONE = 0, /* the line holds no step time */
  PARSE_STEP = 1, /* *ms is a finite, positive step time */
  PARSE_BAD = -1, /* the line holds the metric but its value is NaN, infinite, <= 0 or absurd */
};

/* Looks for a step time in one line. Never reads past LEN; LINE need not be NUL-terminated.
 * METRIC_JSON: only a line that is one JSON object (leading/trailing whitespace allowed, no
 * NUL, at most 1 MiB); FIELD is walked by dots, else tried as a literal key. A number or a
 * decimal numeric string is read; a present field that is null, a bool, a container, a
 * non-numeric string, or the non-JSON tokens NaN/Infinity is PARSE_BAD. *ms is set only
 * for PARSE_STEP. */
int parse_step(const metric_spec *m, const char *line, size_t len, double *ms);

/* Longest step time accepted, in ms (one day): beyond it a value is absurd. */
#define PARSE_MAX_MS 86400000.0
/* Shortest step time accepted, in ms (1 ns): no step of a program is shorter, and a value
 * below it (1e-300) would make every speedup over it absurd. */
#define PARSE_MIN_MS 1e-6

#endif
