/* A night's sweep: signals that must not end it, and --detach. */
#ifndef FLAGTUNE_NIGHT_H
#define FLAGTUNE_NIGHT_H

#include "sweep.h"

/* SIGPIPE ignored (a failed write stops printing, see diag), SIGHUP ignored until the sweep's
 * loop takes it over, SIGBUS reported before exit 1. Call before a sweep starts. */
void night_signals(void);

/* A sweep to run with O: returns the process's exit code. */
typedef int (*night_body)(void *ctx, sweep_opts *o);

/* Runs BODY(CTX, O) in a detached child (a new session, stdin from /dev/null, its output moved
 * to LOG, or run.log in the sweep's log directory, once the sweep is claimed). The parent
 * prints the sweep's id and log and sets *code to 0, or to the child's exit code when it ended
 * before claiming a sweep (bad input); the child sets *code to BODY's. FT_ESYS with *err when
 * it cannot detach. */
int night_detach(const char *log, sweep_opts *o, night_body body, void *ctx, int *code, char **err);

/* A sweep's end, as the notify hook's environment carries it. */
typedef struct {
  long long sweep_id;
  const char *name, *model, *hardware;
  const char *status; /* done, interrupted, failed */
  const char *reason; /* why it ended so (NULL: nothing to say) */
  const char *db_path, *log_dir;
  double best_ms, baseline_ms; /* NaN: none */
  int best_confirmed;          /* best_ms is the confirmed winner's pooled value */
  int higher;                  /* a rate (metric.better = "higher"): the values are its cost */
  int trials_done, trials_planned, trials_ok;
} night_summary;

/* Runs the notify hook once the sweep has ended: ARGV (an experiment's on_done) when not
 * NULL, else SHELL_CMD (--notify) through /bin/sh -c, in its own process group with the
 * summary in its environment (FLAGTUNE_SWEEP_ID, FLAGTUNE_STATUS, FLAGTUNE_REASON,
 * FLAGTUNE_BEST_MS, FLAGTUNE_BASELINE_MS, FLAGTUNE_SPEEDUP, FLAGTUNE_DB, ...: docs/CLI.md).
 * Bounded: after TIMEOUT_S seconds its group gets SIGTERM, then SIGKILL. Its failure (cannot
 * start, non-zero exit, signal, timeout) is reported as a warning and returned as -1; it
 * never changes the sweep's outcome. */
int night_notify(char *const *argv, const char *shell_cmd, const night_summary *s,
                 double timeout_s);

#endif
