/* Small statistics over step times: reductions and bootstrap speedup intervals.
 * Owns the reduction names and the bootstrap method (resampled medians, percentile
 * interval, splitmix64 so a seed gives the same interval on every machine).
 * Must not modify its inputs, print, or keep state between calls (a running reduction's
 * state is the caller's struct). */
#include "stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* Resamples per interval: enough for stable 2.5/97.5 percentiles, cheap at our sizes. */
#define BOOT_RESAMPLES 2000

static const char *const reduce_names[] = {"median", "mean", "min"};

int stats_reduce_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < 3; i++)
    if (strcmp(name, reduce_names[i]) == 0) return i;
  return -1;
}

const char *stats_reduce_name(reduce_kind k) {
  return (k >= REDUCE_MEDIAN && k <= REDUCE_MIN) ? reduce_names[k] : "unknown";
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of V, sorting V in place; N > 0. */
static double median_inplace(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double stats_median(const double *v, int n) {
  if (!v || n <= 0) return NAN;
  double *copy = xmalloc((size_t)n * sizeof *copy);
  memcpy(copy, v, (size_t)n * sizeof *copy);
  double m = median_inplace(copy, n);
  free(copy);
  return m;
}

double stats_reduce(reduce_kind k, const double *v, int n, int skip) {
  if (skip < 0) skip = 0;
  if (!v || n - skip <= 0) return NAN;
  const double *s = v + skip;
  int m = n - skip;
  switch (k) {
    case REDUCE_MEDIAN:
      return stats_median(s, m);
    case REDUCE_MEAN: {
      double sum = 0;
      for (int i = 0; i < m; i++) sum += s[i];
      return sum / m;
    }
    case REDUCE_MIN: {
      double lo = s[0];
      for (int i = 1; i < m; i++)
        if (s[i] < lo) lo = s[i];
      return lo;
    }
  }
  return NAN;
}

/* ---- running reductions ---- */

void stats_running_init(stats_running *r, reduce_kind k) {
  memset(r, 0, sizeof *r);
  r->kind = k;
}

void stats_running_free(stats_running *r) {
  free(r->lo);
  free(r->hi);
  stats_running_init(r, r->kind);
}

/* Pushes V onto heap H (N entries, capacity *CAP); SIGN = 1 keeps the largest on top,
 * -1 the smallest. */
static void heap_push(double **h, int *n, int *cap, double v, int sign) {
  if (*n == *cap) *h = xrealloc(*h, sizeof **h * (size_t)(*cap = *cap ? *cap * 2 : 64));
  double *a = *h;
  int i = (*n)++;
  while (i > 0 && sign * (v - a[(i - 1) / 2]) > 0) {
    a[i] = a[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  a[i] = v;
}

/* Removes and returns the top of heap H. */
static double heap_pop(double *a, int *n, int sign) {
  double top = a[0], v = a[--*n];
  int i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && sign * (a[c + 1] - a[c]) > 0) c++;
    if (sign * (a[c] - v) <= 0) break;
    a[i] = a[c];
    i = c;
  }
  if (*n > 0) a[i] = v;
  return top;
}

void stats_running_add(stats_running *r, double v) {
  r->sum += v;
  if (r->n == 0 || v < r->min) r->min = v;
  r->n++;
  if (r->kind != REDUCE_MEDIAN) return;
  if (r->n_lo == 0 || v <= r->lo[0])
    heap_push(&r->lo, &r->n_lo, &r->cap_lo, v, 1);
  else
    heap_push(&r->hi, &r->n_hi, &r->cap_hi, v, -1);
  /* Keep the lower half equal to the upper, or one larger. */
  if (r->n_lo > r->n_hi + 1)
    heap_push(&r->hi, &r->n_hi, &r->cap_hi, heap_pop(r->lo, &r->n_lo, 1), -1);
  else if (r->n_hi > r->n_lo)
    heap_push(&r->lo, &r->n_lo, &r->cap_lo, heap_pop(r->hi, &r->n_hi, -1), 1);
}

double stats_running_value(const stats_running *r) {
  if (r->n == 0) return NAN;
  switch (r->kind) {
    case REDUCE_MEDIAN:
      return r->n % 2 ? r->lo[0] : (r->lo[0] + r->hi[0]) / 2;
    case REDUCE_MEAN:
      return r->sum / r->n;
    case REDUCE_MIN:
      return r->min;
  }
  return NAN;
}

/* splitmix64 (Steele, Lea, Flood): tiny, fast, and the same sequence everywhere. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* One sample prepared for resampling: its values sorted, and each original position's rank in
 * that order, so that a resample's median is found by counting draws per rank (O(n)) instead
 * of sorting the resample (O(n log n), 2,000 times per interval). The draws, and so the
 * interval, are exactly those of sorting each resample. */
typedef struct {
  int n;
  double *sorted; /* the values, ascending */
  int *rank;      /* rank[i]: where value i sits in SORTED */
  int *count;     /* scratch: draws per rank in one resample */
} boot_sample;

typedef struct {
  double v;
  int i;
} valued_index;

static int cmp_valued_index(const void *a, const void *b) {
  const valued_index *x = a, *y = b;
  if (x->v != y->v) return (x->v > y->v) - (x->v < y->v);
  return (x->i > y->i) - (x->i < y->i);
}

static void boot_prepare(boot_sample *b, const double *v, int n) {
  b->n = n;
  b->sorted = xmalloc((size_t)n * sizeof *b->sorted);
  b->rank = xmalloc((size_t)n * sizeof *b->rank);
  b->count = xmalloc((size_t)n * sizeof *b->count);
  valued_index *order = xmalloc((size_t)n * sizeof *order);
  for (int i = 0; i < n; i++) order[i] = (valued_index){v[i], i};
  qsort(order, (size_t)n, sizeof *order, cmp_valued_index);
  for (int r = 0; r < n; r++) {
    b->sorted[r] = order[r].v;
    b->rank[order[r].i] = r;
  }
  free(order);
}

static void boot_free(boot_sample *b) {
  free(b->sorted);
  free(b->rank);
  free(b->count);
}

/* The value at position POS (0-based) of the resample whose draws per rank are in COUNT,
 * walking from rank *R with *CUM draws below it (both advanced, for a second, later POS). */
static double boot_at(const boot_sample *b, int pos, int *r, long *cum) {
  while (*cum + b->count[*r] <= pos) *cum += b->count[(*r)++];
  return b->sorted[*r];
}

/* Median of N draws with replacement from the sample (the same draws, in the same order, as
 * v[splitmix64() % n] for each of the N). */
static double resampled_median(boot_sample *b, uint64_t *rng) {
  int n = b->n;
  memset(b->count, 0, (size_t)n * sizeof *b->count);
  for (int i = 0; i < n; i++) b->count[b->rank[splitmix64(rng) % (uint64_t)n]]++;
  int r = 0;
  long cum = 0;
  if (n % 2) return boot_at(b, n / 2, &r, &cum);
  double lo = boot_at(b, n / 2 - 1, &r, &cum);
  return (lo + boot_at(b, n / 2, &r, &cum)) / 2;
}

/* The P-th quantile (0..1) of sorted V by linear interpolation between ranks. */
static double quantile_sorted(const double *v, int n, double p) {
  double pos = p * (n - 1);
  int i = (int)floor(pos);
  if (i >= n - 1) return v[n - 1];
  return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

int stats_speedup_ci(const double *a, int na, const double *b, int nb, unsigned long seed,
                     double *speedup, double *lo, double *hi) {
  if (!a || !b || na <= 0 || nb <= 0) return -1;
  boot_sample sa, sb;
  boot_prepare(&sa, a, na);
  boot_prepare(&sb, b, nb);
  double *ratios = xmalloc(BOOT_RESAMPLES * sizeof *ratios);
  uint64_t rng = (uint64_t)seed;
  for (int r = 0; r < BOOT_RESAMPLES; r++) {
    double ma = resampled_median(&sa, &rng);
    ratios[r] = ma / resampled_median(&sb, &rng);
  }
  qsort(ratios, BOOT_RESAMPLES, sizeof *ratios, cmp_double);
  if (speedup) *speedup = stats_median(a, na) / stats_median(b, nb);
  if (lo) *lo = quantile_sorted(ratios, BOOT_RESAMPLES, 0.025);
  if (hi) *hi = quantile_sorted(ratios, BOOT_RESAMPLES, 0.975);
  boot_free(&sa);
  boot_free(&sb);
  free(ratios);
  return 0;
}
