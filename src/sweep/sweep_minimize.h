/* `flagtune minimize SWEEP`: the sweep's winner re-measured with its searched parameters
 * reverted (minimize.c's plan), as trials of the sweep run by its own scheduler, and the
 * smallest configuration that keeps the speedup within the winner's interval, reported and
 * exported. */
#ifndef FLAGTUNE_SWEEP_MINIMIZE_H
#define FLAGTUNE_SWEEP_MINIMIZE_H

#include <stdio.h>

#include "trialcfg.h"

#define MINIMIZE_REPEATS 3 /* measurements of each configuration unless --repeats says */

typedef struct {
  const char *db_path;
  int repeats;          /* 0: MINIMIZE_REPEATS */
  int trials;           /* at most this many minimize trials in all (stored ones count); 0: any */
  double hours;         /* stop starting trials after this long; <= 0: no limit */
  int parallel;         /* 0: the sweep's */
  int force;            /* take over a sweep whose holder this host cannot check */
  export_format format; /* of the minimal set's snippet */
  FILE *out;            /* where the report and the snippet go */
} minimize_opts;

/* Minimizes the winner of the sweep REF (id or unique name). Claims the sweep for its
 * duration (one owner per sweep) and gives its status back at the end. Writes the report
 * (as the snippet's comments) and the minimal set's snippet to O->out once every parameter
 * is decided (*complete = 1); otherwise notes how far it got. Returns FT_OK, FT_EINPUT for
 * a bad reference, a sweep with no winner or one the baseline (nothing written), FT_EINTR
 * when interrupted (the trials that ended are kept: minimize again continues), or another
 * code when it failed. */
int sweep_minimize(const char *ref, const minimize_opts *o, int *complete, char **err);

#endif
