/* Fail fast as a sweep reads it: the rule (failfast.h) fed with ended trials, and the words
 * the sweep stops with. */
#ifndef FLAGTUNE_SWEEP_FAILFAST_H
#define FLAGTUNE_SWEEP_FAILFAST_H

#include "failfast.h"
#include "trial.h"

/* Reads R (a trial that ended, its result stored) into F. When the rest would fail too,
 * returns why (with the trial's log under LOG_DIR; caller frees) and sets *ADVICE to what to
 * tell the user (static); else NULL. */
char *sweep_failfast_read(failfast *f, const trial_result *r, const char *log_dir,
                          const char **advice);

#endif
