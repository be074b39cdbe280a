/* What a trial costs in wall time: start to first step (process start, import, compile) plus
 * its steps at the steady step time. Pure: the samples of a sweep's finished trials and the
 * prediction of what a trial of a given step budget will take, for the deadline (--hours)
 * and anything else that plans in wall time. */
#ifndef FLAGTUNE_COST_H
#define FLAGTUNE_COST_H

typedef struct {
  double *base_s;  /* per sample: its wall time less its steps (start, compile, exit) */
  double *steps_s; /* per sample: its steps' wall time */
  int *budget;     /* per sample: its step budget (0: unknown) */
  int n, cap;
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
 * NaN before the first sample. */
double cost_predict(const cost_model *m, int budget);

void cost_free(cost_model *m);

#endif
