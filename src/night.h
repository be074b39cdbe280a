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

#endif
