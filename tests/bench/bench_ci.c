/* One speedup interval's cost (docs/COST.md "The 95 % interval"): stats_speedup_ci over two
 * samples of N step times (about 530 and 462 ms, 2 % spread), the best of 15 repetitions (the
 * least disturbed by other load), and the interval it gives. Not built by CMake; build it
 * against a tree's stats.c:
 *   cc -O2 -Isrc tests/bench/bench_ci.c src/report/stats.c src/base/diag.c -lm -o /tmp/bench_ci
 *   /tmp/bench_ci 1000 5000 20000
 * and against another tree's (OLD/src) for a before/after, run alternately. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "stats.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  for (int k = 1; k < argc; k++) {
    int n = atoi(argv[k]);
    if (n <= 0) continue;
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    unsigned s = 1;
    for (int i = 0; i < n; i++) {
      s = s * 1103515245u + 12345u;
      a[i] = 530 * (1 + ((s >> 8 & 0xffff) / 65535.0 - 0.5) * 0.04);
      s = s * 1103515245u + 12345u;
      b[i] = 462 * (1 + ((s >> 8 & 0xffff) / 65535.0 - 0.5) * 0.04);
    }
    double best = 1e9, sp = 0, lo = 0, hi = 0;
    for (int r = 0; r < 15; r++) {
      double t0 = now();
      stats_speedup_ci(a, n, b, n, STATS_DISPLAY_SEED, &sp, &lo, &hi);
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    printf("n %6d + %6d: %9.3f ms (best of 15), speedup %.4f, 95%% CI %.4f-%.4f\n", n, n,
           best * 1e3, sp, lo, hi);
    free(a);
    free(b);
  }
  return 0;
}
