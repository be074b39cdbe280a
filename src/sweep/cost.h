/* What a trial costs in wall time: start to first step (process start, import, compile) plus
 * its steps at the steady step time. Pure: the samples of a sweep's finished trials and the
 * prediction of what a trial of a given step budget will take, for the deadline (--hours)
 * and anything else that plans in wall time. */
#ifndef FLAGTUNE_COST_H
#define FLAGTUNE_COST_H

#include "stats.h"

/* How many step budgets' predictions are kept up to date as samples arrive (a sweep asks for
 * its budget and, under halving, a few rungs); another budget is computed afresh. */
enum { COST_KEPT = 8 };

typedef struct {
  int budget;        /* the step budget predicted */
  int fed;           /* the samples added to MED so far */
  stats_running med; /* their running median at BUDGET */
} cost_kept;

typedef struct {
  double *base_s;  /* per sample: its wall time less its steps (start, compile, exit) */
  double *steps_s; /* per sample: its steps' wall time */
  int *budget;     /* per sample: its step budget (0: unknown) */
  int n, cap;
  cost_kept kept[COST_KEPT]; /* the predictions asked for, each fed the samples since */
  int n_kept;
} cost_model;

/* The steady step time in wall ms of a trial whose step line number FROM_N (0 the first)
 * arrived at FROM_S and number LAST_N at LAST_S (monotonic seconds); NaN when LAST_N is not
 * past FROM_N. */
double cost_step_ms(int from_n, double from_s, int last_n, double last_s);

/* Adds one finished trial: its wall time WALL_S (s), the N_STEPS step lines it printed under
 * the step budget BUDGET (0: unknown) and STEP_MS (cost_step_ms; NaN: unknown, its steps
 * count as free). */
void cost_add(cost_model *m, double wall_s, int n_steps, int budget, double step_ms);

/* What a trial of step budget BUDGET will take (s): the median over the samples of each
 * one's wall time with its steps scaled to BUDGET (its steps times BUDGET over its own
 * budget, at its own steady step time). A program that prints as many steps whatever
 * {steps} says costs what it cost; one that failed before its first step counts as it was.
 * NaN before the first sample. O(log n) a new sample for each of the first COST_KEPT budgets
 * asked for (a running median kept for each), not a sort of every sample at every call: the
 * deadline asks before every start. */
double cost_predict(cost_model *m, int budget);

void cost_free(cost_model *m);

#endif
