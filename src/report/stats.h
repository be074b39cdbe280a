/* Small statistics over step times: reductions, and speedup intervals. Pure functions. */
#ifndef FLAGTUNE_STATS_H
#define FLAGTUNE_STATS_H

#include <stdint.h>

typedef enum { REDUCE_MEDIAN = 0, REDUCE_MEAN = 1, REDUCE_MIN = 2 } reduce_kind;

/* "median", "mean", "min" -> kind, or -1. */
int stats_reduce_from_name(const char *name);
const char *stats_reduce_name(reduce_kind k);

/* Reduces V[skip..n-1]. Returns NaN when nothing is left. Does not modify V. */
double stats_reduce(reduce_kind k, const double *v, int n, int skip);

double stats_median(const double *v, int n);

/* A reduction kept up to date as values arrive, for pruning while a trial prints its steps:
 * O(log n) per value (two heaps for the median), and the same result stats_reduce gives
 * over the same values in the same order. Zero-initialise with stats_running_init; free
 * with stats_running_free. */
typedef struct {
  reduce_kind kind;
  int n;
  double sum, min;
  double *lo, *hi; /* the median's halves: a max-heap of the lower, a min-heap of the upper */
  int n_lo, n_hi, cap_lo, cap_hi;
} stats_running;

void stats_running_init(stats_running *r, reduce_kind k);
void stats_running_add(stats_running *r, double v);
/* The reduction of the values added so far; NaN when none. */
double stats_running_value(const stats_running *r);
/* Frees the heaps and starts over empty (the kind is kept). */
void stats_running_free(stats_running *r);

/* The seed of the best-versus-baseline interval that show, export and the summary print (and
 * the store caches when a sweep ends), so that every display of a sweep gives the same one. */
#define STATS_DISPLAY_SEED 12345ul

/* Speedup of B over A (median(A) / median(B)) with a 95% bootstrap interval (2,000
 * resampled medians of each, percentiles of their ratios), deterministic for a given seed and
 * the same values in any order. One sort of each sample, then O(1) a resample. Returns 0, or
 * -1 when either sample is empty. */
int stats_speedup_ci(const double *a, int na, const double *b, int nb, unsigned long seed,
                     double *speedup, double *lo, double *hi);

/* The resamples of every interval stats_speedup_ci and stats_boot draw. */
#define STATS_RESAMPLES 2000

/* A bootstrap of the median drawn once and applied to many samples: each resample's median as
 * ranks in the sorted sample (the law stats_boot_median_ranks draws from), which depend on
 * the sample's size alone. So one draw serves every sample of that size, and an interval of
 * several samples against one (a report's top table against its baseline) draws the
 * baseline's resampled medians once, not once per row. Two samples compared must have
 * their ranks from different streams (different seeds): ranks shared between the two sides
 * would make their resamples move together and the interval too narrow. */
typedef struct {
  int n, resamples;
  int *lo, *hi; /* resample R's median: the mean of the sorted sample's ranks LO[R], HI[R] */
} stats_boot;

/* Draws RESAMPLES resampled medians' ranks for samples of N > 0 from the stream SEED
 * (splitmix64, as stats_speedup_ci). Free with stats_boot_free. */
void stats_boot_draw(stats_boot *b, int n, int resamples, unsigned long seed);
void stats_boot_free(stats_boot *b);
/* Fills OUT (B->resamples) with the resampled medians of V (B->n values, any order, not
 * modified) and returns V's own median. */
double stats_boot_medians(const stats_boot *b, const double *v, double *out);
/* The 95% percentile interval of the ratios A[R] / B[R] of two samples' resampled medians
 * (RESAMPLES each, drawn from different streams), as stats_speedup_ci takes it. Returns 0, or
 * -1 when RESAMPLES < 2. */
int stats_ratio_ci(const double *a, const double *b, int resamples, double *lo, double *hi);

/* The 95% percentile interval of V (N >= 2 values): the 0.025 and 0.975 quantiles, each by
 * linear interpolation between the order statistics of ranks floor(P (N - 1)) and the next
 * (NaNs ordered last). Reorders V. For stats_speedup_ci, stats_ratio_ci and tests. */
void stats_interval95(double *v, int n, double *lo, double *hi);

/* One bootstrap resample's median of a sample of N > 0, as the 0-based ranks in the sorted
 * sample that the median averages (*LO == *HI for odd N), drawn from the stream *RNG with the
 * law of counting N draws with replacement (stats.c says why it is exact). For tests. */
void stats_boot_median_ranks(int n, uint64_t *rng, int *lo, int *hi);

#endif
