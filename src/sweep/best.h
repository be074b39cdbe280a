/* The best so far of a sweep: the baseline's value and steps, the best search trial's value,
 * number and speedup interval. Values are costs, lower is better: a `metric.better =
 * "higher"` rate is stored as its cost (parse.c), so one direction serves both. Pure. */
#ifndef FLAGTUNE_BEST_H
#define FLAGTUNE_BEST_H

typedef struct {
  double value;       /* the best search trial's value (NaN: none yet) */
  int number;         /* its trial number */
  double lo, hi;      /* its speedup interval over the baseline's steps (NaN: none) */
  double baseline;    /* the baseline's value (NaN: none) */
  int baseline_ok;    /* a baseline trial ended ok */
  double *base_steps; /* the baseline's step times past the skip (owned) */
  int n_base_steps;
  int n_ok; /* ok search trials */
} best_tracker;

void best_init(best_tracker *b);
void best_free(best_tracker *b);
/* Whether VALUE beats THAN (NaN: nothing to beat). Ties keep the earlier. */
int best_beats(double value, double than);
/* The baseline ended ok with VALUE. */
void best_baseline(best_tracker *b, double value);
/* The baseline's step times past the skip (N > 0; copied). */
void best_baseline_steps(best_tracker *b, const double *steps, int n);
/* What a resumed sweep's stored trials say of the baseline and the ok search trials. */
void best_restore(best_tracker *b, int baseline_ok, double baseline, int n_ok);
/* Trial NUMBER ended with VALUE: returns 1 when it is the new best (its interval cleared). */
int best_offer(best_tracker *b, double value, int number);
/* An ok search trial: counted, then offered. Returns 1 when it is the new best. */
int best_search_ok(best_tracker *b, double value, int number);
/* The new best's speedup interval from its N step times past the skip (none when either it
 * or the baseline has none, or the resampling fails). */
void best_interval(best_tracker *b, const double *steps, int n);

#endif
