/* Small statistics over step times: reductions, and speedup intervals. Pure functions. */
#ifndef FLAGTUNE_STATS_H
#define FLAGTUNE_STATS_H

typedef enum { REDUCE_MEDIAN = 0, REDUCE_MEAN = 1, REDUCE_MIN = 2 } reduce_kind;

/* "median", "mean", "min" -> kind, or -1. */
int stats_reduce_from_name(const char *name);
const char *stats_reduce_name(reduce_kind k);

/* Reduces V[skip..n-1]. Returns NaN when nothing is left. Does not modify V. */
double stats_reduce(reduce_kind k, const double *v, int n, int skip);

double stats_median(const double *v, int n);

/* Speedup of B over A (median(A) / median(B)) with a 95% bootstrap interval, deterministic
 * for a given seed. Returns 0, or -1 when either sample is empty. */
int stats_speedup_ci(const double *a, int na, const double *b, int nb, unsigned long seed,
                     double *speedup, double *lo, double *hi);

#endif
