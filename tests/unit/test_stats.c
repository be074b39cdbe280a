/* stats: reductions over step times and the bootstrap speedup interval. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "stats.h"
#include "test.h"

TEST(reduce_names) {
  CHECK_INT(stats_reduce_from_name("median"), REDUCE_MEDIAN);
  CHECK_INT(stats_reduce_from_name("mean"), REDUCE_MEAN);
  CHECK_INT(stats_reduce_from_name("min"), REDUCE_MIN);
  CHECK_INT(stats_reduce_from_name("max"), -1);
  CHECK_INT(stats_reduce_from_name("Median"), -1);
  CHECK_INT(stats_reduce_from_name(NULL), -1);
  CHECK_STR(stats_reduce_name(REDUCE_MEDIAN), "median");
  CHECK_STR(stats_reduce_name(REDUCE_MEAN), "mean");
  CHECK_STR(stats_reduce_name(REDUCE_MIN), "min");
}

TEST(median_odd_even_and_unsorted) {
  double odd[] = {5, 1, 3};
  double even[] = {4, 1, 3, 2};
  double one[] = {7.5};
  CHECK_NEAR(stats_median(odd, 3), 3, 0);
  CHECK_NEAR(stats_median(even, 4), 2.5, 0);
  CHECK_NEAR(stats_median(one, 1), 7.5, 0);
  CHECK(isnan(stats_median(odd, 0)));
  /* The input is left as it was. */
  CHECK_NEAR(odd[0], 5, 0);
  CHECK_NEAR(odd[1], 1, 0);
  CHECK_NEAR(even[0], 4, 0);
}

TEST(reduce_skips_warmup) {
  /* Two compile steps, then steady state. */
  double v[] = {9000, 800, 100, 104, 98, 102};
  CHECK_NEAR(stats_reduce(REDUCE_MEDIAN, v, 6, 2), 101, 1e-12);
  CHECK_NEAR(stats_reduce(REDUCE_MEAN, v, 6, 2), 101, 1e-12);
  CHECK_NEAR(stats_reduce(REDUCE_MIN, v, 6, 2), 98, 0);
  CHECK_NEAR(stats_reduce(REDUCE_MEDIAN, v, 6, 0), 103, 1e-12);
  CHECK_NEAR(stats_reduce(REDUCE_MIN, v, 6, 5), 102, 0);
  CHECK_NEAR(stats_reduce(REDUCE_MEAN, v, 6, -3), (9000 + 800 + 404) / 6.0, 1e-9);
  CHECK_NEAR(v[0], 9000, 0);
}

TEST(reduce_nothing_left_is_nan) {
  double v[] = {1, 2, 3};
  CHECK(isnan(stats_reduce(REDUCE_MEDIAN, v, 3, 3)));
  CHECK(isnan(stats_reduce(REDUCE_MEAN, v, 3, 10)));
  CHECK(isnan(stats_reduce(REDUCE_MIN, v, 0, 0)));
  CHECK(isnan(stats_reduce(REDUCE_MIN, NULL, 3, 0)));
}

/* Deterministic noisy samples around CENTER (a fixed LCG, independent of the code under test). */
static void fill(double *v, int n, double center, unsigned seed) {
  unsigned s = seed;
  for (int i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    v[i] = center * (1 + ((double)(s >> 8 & 0xffff) / 65535.0 - 0.5) * 0.04);
  }
}

TEST(speedup_point_and_interval) {
  double a[60], b[60];
  fill(a, 60, 455.1, 1);
  fill(b, 60, 412.3, 2);
  double sp = 0, lo = 0, hi = 0;
  CHECK_INT(stats_speedup_ci(a, 60, b, 60, 42, &sp, &lo, &hi), 0);
  CHECK_NEAR(sp, stats_median(a, 60) / stats_median(b, 60), 1e-12);
  CHECK_NEAR(sp, 455.1 / 412.3, 0.02);
  CHECK(lo <= sp && sp <= hi);
  CHECK(lo < hi);
  CHECK(lo > 1.05 && hi < 1.16);
}

TEST(speedup_is_deterministic_per_seed) {
  double a[25], b[30];
  fill(a, 25, 100, 3);
  fill(b, 30, 98, 4);
  double s1, l1, h1, s2, l2, h2, s3, l3, h3;
  stats_speedup_ci(a, 25, b, 30, 7, &s1, &l1, &h1);
  stats_speedup_ci(a, 25, b, 30, 7, &s2, &l2, &h2);
  stats_speedup_ci(a, 25, b, 30, 8, &s3, &l3, &h3);
  CHECK_NEAR(l1, l2, 0);
  CHECK_NEAR(h1, h2, 0);
  CHECK_NEAR(s1, s3, 0);
  /* Another seed draws other resamples: the bounds move a little. */
  CHECK(l1 != l3 || h1 != h3);
  CHECK_NEAR(l1, l3, 0.01);
}

TEST(speedup_constant_samples) {
  double a[] = {200, 200, 200, 200};
  double b[] = {100, 100, 100};
  double sp, lo, hi;
  CHECK_INT(stats_speedup_ci(a, 4, b, 3, 1, &sp, &lo, &hi), 0);
  CHECK_NEAR(sp, 2, 0);
  CHECK_NEAR(lo, 2, 0);
  CHECK_NEAR(hi, 2, 0);
  /* A slower candidate is a speedup below one. */
  CHECK_INT(stats_speedup_ci(b, 3, a, 4, 1, &sp, &lo, &hi), 0);
  CHECK_NEAR(sp, 0.5, 0);
}

TEST(speedup_empty_is_error) {
  double a[] = {1, 2};
  double sp = -7, lo = -7, hi = -7;
  CHECK_INT(stats_speedup_ci(a, 2, a, 0, 1, &sp, &lo, &hi), -1);
  CHECK_INT(stats_speedup_ci(a, 0, a, 2, 1, &sp, &lo, &hi), -1);
  CHECK_INT(stats_speedup_ci(NULL, 2, a, 2, 1, &sp, &lo, &hi), -1);
  CHECK_NEAR(sp, -7, 0);
  /* One step each is still an answer, with a degenerate interval. */
  double x[] = {10}, y[] = {5};
  CHECK_INT(stats_speedup_ci(x, 1, y, 1, 1, &sp, &lo, &hi), 0);
  CHECK_NEAR(sp, 2, 0);
  CHECK_NEAR(lo, 2, 0);
}

/* The interval as it was computed before counting draws per rank: every resample sorted.
 * Kept here as the reference the faster method must match bit for bit. */
static uint64_t ref_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int ref_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double ref_resampled_median(const double *v, int n, double *scratch, uint64_t *rng) {
  for (int i = 0; i < n; i++) scratch[i] = v[ref_splitmix64(rng) % (uint64_t)n];
  qsort(scratch, (size_t)n, sizeof *scratch, ref_cmp);
  return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}
static void ref_interval(const double *a, int na, const double *b, int nb, uint64_t rng, double *lo,
                         double *hi) {
  double *sa = malloc(sizeof(double) * (size_t)na), *sb = malloc(sizeof(double) * (size_t)nb);
  double ratios[2000];
  for (int r = 0; r < 2000; r++) {
    double ma = ref_resampled_median(a, na, sa, &rng);
    ratios[r] = ma / ref_resampled_median(b, nb, sb, &rng);
  }
  qsort(ratios, 2000, sizeof(double), ref_cmp);
  double pl = 0.025 * 1999, ph = 0.975 * 1999;
  int il = (int)pl, ih = (int)ph;
  *lo = ratios[il] + (pl - il) * (ratios[il + 1] - ratios[il]);
  *hi = ratios[ih] + (ph - ih) * (ratios[ih + 1] - ratios[ih]);
  free(sa);
  free(sb);
}

/* Counting draws per rank gives exactly the interval of sorting every resample: odd and even
 * sizes, ties (values rounded to whole milliseconds), unsorted input, several seeds. */
TEST(speedup_matches_sorting_every_resample) {
  int sizes[][2] = {{1, 1}, {2, 3}, {7, 8}, {25, 30}, {101, 64}, {400, 333}};
  int mismatches = 0;
  for (int k = 0; k < 6; k++) {
    int na = sizes[k][0], nb = sizes[k][1];
    double *a = malloc(sizeof(double) * (size_t)na), *b = malloc(sizeof(double) * (size_t)nb);
    fill(a, na, 455.1, (unsigned)k + 10);
    fill(b, nb, 412.3, (unsigned)k + 20);
    if (k % 2)
      for (int i = 0; i < na; i++) a[i] = (double)(long)a[i]; /* ties */
    for (unsigned long seed = 1; seed <= 3; seed++) {
      double sp, lo, hi, rlo, rhi;
      CHECK_INT(stats_speedup_ci(a, na, b, nb, seed, &sp, &lo, &hi), 0);
      ref_interval(a, na, b, nb, seed, &rlo, &rhi);
      if (lo != rlo || hi != rhi) mismatches++;
    }
    free(a);
    free(b);
  }
  CHECK_INT(mismatches, 0);
}

/* A running reduction equals stats_reduce over the same prefix after every value, exactly
 * (duplicates, ties and both heap halves exercised). */
TEST(running_equals_batch) {
  double v[400];
  unsigned long x = 12345;
  for (int i = 0; i < 400; i++) {
    x = x * 6364136223846793005ul + 1442695040888963407ul;
    v[i] = 100.0 + (double)((x >> 33) % 50) / 4.0; /* many repeated values */
  }
  for (int k = REDUCE_MEDIAN; k <= REDUCE_MIN; k++) {
    stats_running r;
    stats_running_init(&r, (reduce_kind)k);
    CHECK(isnan(stats_running_value(&r)));
    int mismatches = 0;
    for (int i = 0; i < 400; i++) {
      stats_running_add(&r, v[i]);
      if (stats_running_value(&r) != stats_reduce((reduce_kind)k, v, i + 1, 0)) mismatches++;
    }
    CHECK_INT(mismatches, 0);
    stats_running_free(&r);
    CHECK(isnan(stats_running_value(&r)));
    stats_running_add(&r, 7);
    CHECK_NEAR(stats_running_value(&r), 7, 0);
    stats_running_free(&r);
  }
}
