/* The process that runs a sweep: signals that must not end it (and those that come before its
 * loop), --detach, the notify hook. */
#ifndef FLAGTUNE_RUN_PROCESS_H
#define FLAGTUNE_RUN_PROCESS_H

#include "sweep.h"

/* SIGPIPE ignored (a failed write stops printing, see diag), SIGHUP ignored until the sweep's
 * loop takes it over, SIGBUS reported before exit 1. Call before a sweep starts. */
void run_process_signals(void);

/* From here on a SIGINT/SIGTERM is noted until a sweep's loop starts, which then stops at once
 * (interrupted, exit 130); a second one ends the process. Called by run_process_signals. */
void run_process_catch_early_signals(void);
/* The signal noted so far and not yet acted on (0: none). */
int run_process_early_signal(void);
/* The SIGINT/SIGTERM caught before the loop watched for them (0: none), cleared. */
int run_process_take_early_signal(void);

/* A sweep to run with O: returns the process's exit code. */
typedef int (*run_process_body)(void *ctx, sweep_opts *o);

/* Runs BODY(CTX, O) in a detached child (a new session, stdin from /dev/null, its output moved
 * to LOG, or run.log in the sweep's log directory, once the sweep is claimed). The parent
 * prints the sweep's id and log and sets *code to 0, or to the child's exit code when it ended
 * before claiming a sweep (bad input); the child sets *code to BODY's. FT_ESYS with *err when
 * it cannot detach. */
int run_process_detach(const char *log, sweep_opts *o, run_process_body body, void *ctx, int *code,
                       char **err);

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
} run_process_summary;

/* Runs the notify hook once the sweep has ended: ARGV (an experiment's on_done) when not
 * NULL, else SHELL_CMD (--notify) through /bin/sh -c, in its own process group with the
 * summary in its environment (FLAGTUNE_SWEEP_ID, FLAGTUNE_STATUS, FLAGTUNE_REASON,
 * FLAGTUNE_BEST_MS, FLAGTUNE_BASELINE_MS, FLAGTUNE_SPEEDUP, FLAGTUNE_DB, ...: docs/CLI.md).
 * Bounded: after TIMEOUT_S seconds its group gets SIGTERM, then SIGKILL. Its failure (cannot
 * start, non-zero exit, signal, timeout) is reported as a warning and returned as -1; it
 * never changes the sweep's outcome. */
int run_process_notify(char *const *argv, const char *shell_cmd, const run_process_summary *s,
                       double timeout_s);

#endif
