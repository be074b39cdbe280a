/* stats: reductions over step times and the bootstrap speedup interval. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The interval by the sorting method: every resample drawn as N draws
 * v[splitmix64() % N] and sorted (counting the draws per rank gives the same bits).
 * Kept here as the reference the order-statistic method must agree with in law. */
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

/* Pearson's statistic of OBS (M draws) against the law P over NB cells, neighbouring cells
 * merged until each expects at least 5; *DF the merged cells less one. */
static double chi2_of(const long *obs, const double *p, int nb, long m, int *df) {
  double chi = 0, e = 0, o = 0;
  int cells = 0;
  for (int i = 0; i < nb; i++) {
    e += p[i] * (double)m;
    o += (double)obs[i];
    if (e >= 5 || i == nb - 1) {
      if (e > 0)
        chi += (o - e) * (o - e) / e, cells++;
      else if (o > 0)
        chi += 1e9; /* drawn where the law puts nothing */
      e = o = 0;
    }
  }
  *df = cells > 1 ? cells - 1 : 1;
  return chi;
}

/* Far in the tail: for DF degrees of freedom, a chi-square exceeds this with probability well
 * under 1e-6 (Wilson-Hilferty: z = 5.5). The draws are seeded, so the test is not flaky. */
static double chi2_limit(int df) {
  double h = 2.0 / (9 * df), z = 5.5 * sqrt(h);
  return df * pow(1 - h + z, 3);
}

/* P(the K-th smallest (1-based) of N draws uniform on {0..N-1} is R), R = 0..N-1, into P:
 * P(at most R) = P(Binomial(N, (R + 1) / N) >= K). */
static void order_stat_law(int n, int k, double *p) {
  double prev = 0;
  for (int r = 0; r < n; r++) {
    double q = (double)(r + 1) / n, cdf = 0;
    for (int j = k; j <= n; j++) {
      double lp = lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0);
      if (q < 1)
        lp += j * log(q) + (n - j) * log1p(-q);
      else if (j < n)
        continue;
      cdf += exp(lp);
    }
    p[r] = cdf - prev;
    prev = cdf;
  }
}

/* The joint law of (lower, upper) median ranks for a small N, by enumerating all N^N draw
 * sequences; P is N x N, row-major. */
static void median_pair_law(int n, double *p) {
  int total = 1, d[8], c[8];
  for (int i = 0; i < n; i++) total *= n;
  memset(p, 0, sizeof(double) * (size_t)(n * n));
  for (int x = 0; x < total; x++) {
    int y = x;
    memset(c, 0, sizeof c);
    for (int i = 0; i < n; i++) c[y % n]++, y /= n;
    for (int r = 0, k = 0; r < n; r++)
      for (int j = 0; j < c[r]; j++) d[k++] = r;
    int lo = n % 2 ? d[n / 2] : d[n / 2 - 1], hi = d[n / 2];
    p[lo * n + hi] += 1.0 / total;
  }
}

/* The order-statistic draw of a resample's median has the law of counting N draws: the joint
 * law of the two ranks for N = 1..6 against all N^N draw sequences, and each rank's law for
 * larger odd and even N against the binomial; and the same test rejects a law one position
 * off, so it can fail. */
TEST(boot_median_ranks_follow_the_exact_law) {
  const long m = 40000;
  uint64_t rng = 99;
  for (int n = 1; n <= 6; n++) {
    double p[36];
    long obs[36] = {0};
    median_pair_law(n, p);
    for (long i = 0; i < m; i++) {
      int lo, hi;
      stats_boot_median_ranks(n, &rng, &lo, &hi);
      CHECK(lo >= 0 && lo <= hi && hi < n && (n % 2 == 0 || lo == hi));
      obs[lo * n + hi]++;
    }
    int df;
    double chi = chi2_of(obs, p, n * n, m, &df);
    if (!(chi < chi2_limit(df))) fprintf(stderr, "n %d: chi2 %.1f, df %d\n", n, chi, df);
    CHECK(chi < chi2_limit(df));
  }
  int sizes[] = {7, 10, 11, 50, 201, 400};
  for (int s = 0; s < 6; s++) {
    int n = sizes[s], k = n % 2 ? n / 2 + 1 : n / 2;
    double *plo = calloc((size_t)n, sizeof(double)), *phi = calloc((size_t)n, sizeof(double));
    double *poff = calloc((size_t)n, sizeof(double));
    long *olo = calloc((size_t)n, sizeof(long)), *ohi = calloc((size_t)n, sizeof(long));
    order_stat_law(n, k, plo);
    order_stat_law(n, n % 2 ? k : k + 1, phi);
    order_stat_law(n, (n % 2 ? k : k + 1) + 1, poff); /* one position up: a wrong law */
    for (long i = 0; i < m; i++) {
      int lo, hi;
      stats_boot_median_ranks(n, &rng, &lo, &hi);
      olo[lo]++;
      ohi[hi]++;
    }
    int df;
    double chi = chi2_of(olo, plo, n, m, &df);
    if (!(chi < chi2_limit(df))) fprintf(stderr, "n %d lower: chi2 %.1f, df %d\n", n, chi, df);
    CHECK(chi < chi2_limit(df));
    chi = chi2_of(ohi, phi, n, m, &df);
    if (!(chi < chi2_limit(df))) fprintf(stderr, "n %d upper: chi2 %.1f, df %d\n", n, chi, df);
    CHECK(chi < chi2_limit(df));
    chi = chi2_of(ohi, poff, n, m, &df);
    CHECK(chi > chi2_limit(df));
    free(plo);
    free(phi);
    free(poff);
    free(olo);
    free(ohi);
  }
}

/* Two methods' interval bounds summed over SEEDS runs (S: sums, SS: sums of squares, per
 * method m and bound e): their means for bound E into MEAN, and the standard error of the
 * difference of the means. */
static double mean_gap_se(double s[2][2], double ss[2][2], int seeds, int e, double mean[2]) {
  double var[2];
  for (int m = 0; m < 2; m++) {
    mean[m] = s[m][e] / seeds;
    var[m] = fmax(ss[m][e] / seeds - mean[m] * mean[m], 0) * seeds / (seeds - 1);
  }
  return sqrt((var[0] + var[1]) / seeds);
}

/* Many intervals of both methods on the same data agree within Monte-Carlo error: over SEEDS
 * seeds each, the mean lower and upper bounds of the order-statistic method and of sorting
 * every resample differ by less than 4.5 standard errors of their difference; odd and even
 * sizes, one to three values, ties (whole milliseconds), unsorted input. */
TEST(speedup_agrees_with_sorting_every_resample) {
  int sizes[][3] = {{1, 1, 60}, {1, 2, 60},   {2, 3, 60},    {3, 3, 60},
                    {7, 8, 60}, {25, 30, 60}, {101, 64, 40}, {400, 333, 12}};
  for (int k = 0; k < 8; k++) {
    int na = sizes[k][0], nb = sizes[k][1], seeds = sizes[k][2];
    double *a = malloc(sizeof(double) * (size_t)na), *b = malloc(sizeof(double) * (size_t)nb);
    fill(a, na, 455.1, (unsigned)k + 10);
    fill(b, nb, 412.3, (unsigned)k + 20);
    if (k % 2)
      for (int i = 0; i < na; i++) a[i] = (double)(long)a[i]; /* ties */
    double s[2][2] = {{0}}, ss[2][2] = {{0}};
    for (int seed = 1; seed <= seeds; seed++) {
      double sp, lo, hi, rlo, rhi;
      CHECK_INT(stats_speedup_ci(a, na, b, nb, (unsigned long)seed, &sp, &lo, &hi), 0);
      CHECK(lo <= hi);
      ref_interval(a, na, b, nb, (uint64_t)seed + 1000, &rlo, &rhi);
      double v[2][2] = {{lo, hi}, {rlo, rhi}};
      for (int m = 0; m < 2; m++)
        for (int e = 0; e < 2; e++) s[m][e] += v[m][e], ss[m][e] += v[m][e] * v[m][e];
    }
    for (int e = 0; e < 2; e++) {
      double mean[2], se = mean_gap_se(s, ss, seeds, e, mean);
      if (!(fabs(mean[0] - mean[1]) <= 4.5 * se + 1e-12))
        fprintf(stderr, "sizes %d/%d bound %d: %.6f vs %.6f, se %.6f\n", na, nb, e, mean[0],
                mean[1], se);
      CHECK(fabs(mean[0] - mean[1]) <= 4.5 * se + 1e-12);
    }
    free(a);
    free(b);
  }
}

/* Same values, same interval: the order of the input does not matter (the old method's
 * draws followed it), and a 20,000 + 20,000-step interval is in the bounds of its data. */
TEST(speedup_ignores_input_order) {
  int n = 20000;
  double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
  fill(a, n, 530, 5);
  fill(b, n, 462, 6);
  double sp, lo, hi, sp2, lo2, hi2;
  CHECK_INT(stats_speedup_ci(a, n, b, n, STATS_DISPLAY_SEED, &sp, &lo, &hi), 0);
  for (int i = 0; i < n / 2; i++) { /* reverse both */
    double t = a[i];
    a[i] = a[n - 1 - i], a[n - 1 - i] = t;
    t = b[i], b[i] = b[n - 1 - i], b[n - 1 - i] = t;
  }
  CHECK_INT(stats_speedup_ci(a, n, b, n, STATS_DISPLAY_SEED, &sp2, &lo2, &hi2), 0);
  CHECK_NEAR(sp2, sp, 0);
  CHECK_NEAR(lo2, lo, 0);
  CHECK_NEAR(hi2, hi, 0);
  CHECK(lo < sp && sp < hi);
  CHECK(hi - lo < 0.01);
  CHECK_NEAR(sp, stats_median(a, n) / stats_median(b, n), 0);
  free(a);
  free(b);
}

/* The bootstrap's own sort (a radix sort of the IEEE bits past 64 values) orders negative,
 * positive, zero and repeated values as qsort does: its point estimate is the quotient of
 * stats_median's, odd and even sizes on both sides of the cut-over. */
TEST(speedup_sorts_any_values) {
  int sizes[] = {63, 64, 65, 100, 101, 1000};
  for (int k = 0; k < 6; k++) {
    int n = sizes[k];
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    fill(a, n, 1, (unsigned)k + 40);
    fill(b, n, 1, (unsigned)k + 50);
    for (int i = 0; i < n; i++) {
      a[i] = (a[i] - 1) * 1e4 + (i % 5 == 0 ? 0 : 0.5); /* -200..200, some repeated */
      b[i] = i % 3 ? 1e-300 * i : 1e300 / (i + 1);      /* tiny and huge */
    }
    a[0] = -0.0;
    double sp, lo, hi;
    CHECK_INT(stats_speedup_ci(a, n, b, n, 3, &sp, &lo, &hi), 0);
    CHECK_NEAR(sp, stats_median(a, n) / stats_median(b, n), 0);
    CHECK(lo <= hi);
    free(a);
    free(b);
  }
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

/* stats_interval95 finds by selection the order statistics a sort gives: its bounds are
 * bit for bit the interpolated quantiles of the sorted values (the sort's order: NaNs last,
 * -0 before +0), for sizes on both sides of every small case and with ties, signed zeros,
 * infinities and NaNs among the values. So show's and export's intervals did not move. */
static uint64_t ref_key(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b >> 63 ? ~b : b | 0x8000000000000000ull;
}
static int ref_key_cmp(const void *a, const void *b) {
  uint64_t x = ref_key(*(const double *)a), y = ref_key(*(const double *)b);
  return (x > y) - (x < y);
}
static double ref_quantile(const double *v, int n, double p) {
  double pos = p * (n - 1);
  int i = (int)floor(pos);
  if (i >= n - 1) return v[n - 1];
  return v[i] + (pos - i) * (v[i + 1] - v[i]);
}
TEST(interval95_is_the_sorted_quantiles) {
  uint64_t x = 99;
  int mismatches = 0, cases = 0;
  for (int n = 2; n <= 2100; n += n < 90 ? 1 : 337) {
    for (int kind = 0; kind < 4; kind++) {
      double *v = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
      for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(x >> 11) * 0x1p-53;
        v[i] = kind == 0   ? 1 + u                                /* distinct */
               : kind == 1 ? (double)(x >> 60)                    /* many ties */
               : kind == 2 ? (x >> 40 & 1 ? -0.0 : 0.0) + u - 0.5 /* both signs */
                           : (x >> 58 == 0   ? NAN
                              : x >> 58 == 1 ? INFINITY
                                             : u);
      }
      memcpy(w, v, sizeof(double) * (size_t)n);
      qsort(w, (size_t)n, sizeof *w, ref_key_cmp);
      double lo, hi, rlo = ref_quantile(w, n, 0.025), rhi = ref_quantile(w, n, 0.975);
      stats_interval95(v, n, &lo, &hi);
      mismatches += memcmp(&lo, &rlo, sizeof lo) != 0 || memcmp(&hi, &rhi, sizeof hi) != 0;
      cases++;
      free(v);
      free(w);
    }
  }
  CHECK(cases > 350);
  CHECK_INT(mismatches, 0);
}

/* The report's top table: the baseline's resampled medians drawn once, each row's from ranks
 * drawn once per size from another stream (stats_boot). Its intervals agree in law with
 * stats_speedup_ci's (mean bounds over seeds within 4.5 standard errors), and a sample against
 * itself with ranks from one stream would be no interval at all: the two sides must come from
 * different streams, and then it is one around 1. */
static void boot_interval(const double *a, int na, const double *b, int nb, unsigned long sa,
                          unsigned long sb, double *sp, double *lo, double *hi) {
  stats_boot ba, bb;
  double *ma = malloc(sizeof(double) * STATS_RESAMPLES),
         *mb = malloc(sizeof(double) * STATS_RESAMPLES);
  stats_boot_draw(&ba, na, STATS_RESAMPLES, sa);
  stats_boot_draw(&bb, nb, STATS_RESAMPLES, sb);
  *sp = stats_boot_medians(&ba, a, ma) / stats_boot_medians(&bb, b, mb);
  CHECK_INT(stats_ratio_ci(ma, mb, STATS_RESAMPLES, lo, hi), 0);
  stats_boot_free(&ba);
  stats_boot_free(&bb);
  free(ma);
  free(mb);
}
TEST(boot_agrees_with_speedup_ci) {
  int sizes[][3] = {{1, 1, 40}, {2, 3, 40}, {7, 8, 40}, {34, 34, 40}, {35, 35, 40}, {105, 34, 30}};
  for (int k = 0; k < 6; k++) {
    int na = sizes[k][0], nb = sizes[k][1], seeds = sizes[k][2];
    double *a = malloc(sizeof(double) * (size_t)na), *b = malloc(sizeof(double) * (size_t)nb);
    fill(a, na, 455.1, (unsigned)k + 30);
    fill(b, nb, 412.3, (unsigned)k + 40);
    double s[2][2] = {{0}}, ss[2][2] = {{0}};
    for (int seed = 1; seed <= seeds; seed++) {
      double sp, lo, hi, sp2, lo2, hi2;
      CHECK_INT(stats_speedup_ci(a, na, b, nb, (unsigned long)seed, &sp, &lo, &hi), 0);
      boot_interval(a, na, b, nb, (unsigned long)seed + 500, (unsigned long)seed + 501, &sp2, &lo2,
                    &hi2);
      CHECK_NEAR(sp2, sp, 0);
      CHECK(lo2 <= sp2 + 1e-12 && sp2 <= hi2 + 1e-12);
      double v[2][2] = {{lo, hi}, {lo2, hi2}};
      for (int m = 0; m < 2; m++)
        for (int e = 0; e < 2; e++) s[m][e] += v[m][e], ss[m][e] += v[m][e] * v[m][e];
    }
    for (int e = 0; e < 2; e++) {
      double mean[2], se = mean_gap_se(s, ss, seeds, e, mean);
      CHECK(fabs(mean[0] - mean[1]) <= 4.5 * se + 1e-12);
    }
    free(a);
    free(b);
  }
  /* a sample against itself: one stream for both sides gives [1, 1]; two give an interval */
  double a[35], sp, lo, hi;
  fill(a, 35, 400, 7);
  boot_interval(a, 35, a, 35, 12345, 12345, &sp, &lo, &hi);
  CHECK(lo == 1 && hi == 1);
  boot_interval(a, 35, a, 35, 12345, 12346, &sp, &lo, &hi);
  CHECK(lo < 0.999 && hi > 1.001);
  /* the same values in another order give the same medians */
  stats_boot b;
  stats_boot_draw(&b, 35, 50, 3);
  double m1[50], m2[50], rev[35];
  for (int i = 0; i < 35; i++) rev[i] = a[34 - i];
  CHECK_NEAR(stats_boot_medians(&b, a, m1), stats_boot_medians(&b, rev, m2), 0);
  CHECK(memcmp(m1, m2, sizeof m1) == 0);
  stats_boot_free(&b);
  CHECK_INT(stats_ratio_ci(m1, m2, 1, &lo, &hi), -1);
}
