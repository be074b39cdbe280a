/* Fail fast, say why: what can be known about a sweep's command before its first trial runs.
 * The program resolves (a name on $PATH, or an executable path), a script handed to an
 * interpreter (`python3 train.py`, `bash run.sh`) exists, and {steps} is used when
 * budget.steps sets a step budget. Reads the file system and $PATH only; must not run
 * anything or touch the store. */
#ifndef FLAGTUNE_PREFLIGHT_H
#define FLAGTUNE_PREFLIGHT_H

#include "experiment.h"

/* Checks E's command (and manual PGLE's profile command) as a trial started from CWD would
 * run it (in E's workdir, itself against CWD). A program or script that is not there is
 * FT_EINPUT with *err "path:line: ..." (with a "did you mean" where a program of a close
 * name is on $PATH); under Slurm (REMOTE: the command runs on the compute nodes, whose
 * PATH and files may differ) the same findings are warnings. A step budget the command
 * never receives is a warning (the program may read $FLAGTUNE_STEPS). Warnings are printed
 * as "path:line: warning: ..." and counted in *n_warnings (may be NULL). */
int preflight_check(const experiment *e, const char *cwd, int remote, int *n_warnings, char **err);

#endif
