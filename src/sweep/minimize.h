/* Minimize as a plan: which of the winner's searched parameters can be reverted (left unset,
 * as in the baseline) without a measurable loss. Pure functions over a sweep's stored trials,
 * the shape of confirm.c: the plan is made again from the database after every batch, so an
 * interrupted minimize continues where its stored trials stand. */
#ifndef FLAGTUNE_MINIMIZE_H
#define FLAGTUNE_MINIMIZE_H

#include "record.h"

typedef struct {
  const char *winner; /* the winner's canonical config JSON (keys sorted, as stored) */
  int repeats;        /* measurements of each configuration (and of the winner per stage) */
  double speedup;     /* the winner's speedup over the baseline, as recorded */
  double lo;          /* the low end of its 95 % interval: a revert is kept at or above it */
} minimize_input;

typedef struct {
  char *name;       /* the parameter */
  char *value;      /* its value in the winner, as JSON text */
  double alone;     /* speedup of the winner with only this one reverted (NaN: not known) */
  int alone_failed; /* outcome of its reverted-alone runs when none ended ok; -1: none failed */
  int matters;      /* reverting it alone falls below the interval: it stays */
  int dropped;      /* reverted in the minimal set */
  int tried;        /* the greedy pass decided it (dropped or kept) */
} minimize_param;

typedef struct {
  minimize_param *params; /* the winner's parameters, in its (sorted) order */
  int n_params;
  char **configs; /* the trials to run next, in order (interleaved); none when done */
  int n_configs;
  char *stage;            /* what the next trials measure, for the progress note */
  char *minimal;          /* the smallest configuration decided so far (the winner at first) */
  double minimal_speedup; /* its estimated speedup (the winner's until a revert is kept) */
  int done;               /* every parameter decided: minimal is the result */
} minimize_plan;

/* Makes the plan from a sweep's N stored trials T (only role minimize trials are read).
 * Returns 0, or FT_EINPUT when the winner is not a JSON object with at least one parameter
 * (*err says so). Free with minimize_plan_free. */
int minimize_plan_make(const trial_record *t, int n, const minimize_input *in, minimize_plan *out,
                       char **err);
void minimize_plan_free(minimize_plan *p);

/* The canonical JSON of CONFIG (an object whose members are in canonical order) without
 * the members whose index has DROP[i] set (N members). Caller frees. */
char *minimize_subset(const char *config, const int *drop, int n);

#endif
