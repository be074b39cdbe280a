/* classify_line's cost per line (docs/COST.md "Output"): three kinds of line a trial prints
 * in floods, each classified 200,000 times, the best of 30 repetitions (the least disturbed
 * by other load). Not built by CMake; build it against the classify.c to measure:
 *   cc -O2 -Isrc tests/bench/bench_classify.c src/trial/classify.c -o /tmp/bench_classify
 * and against another tree's (OLD/src) for a before/after, run alternately. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "classify.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void) {
  static const char *const lines[] = {
      "step line of output that is not a metric, printed again and again by a noisy trial",
      "I1126 02:03:04.567890  12345 gpu_compiler.cc:1234] Compiling module jit_train_step for "
      "GPU, Autotuning Results",
      "Epoch 3/10: 100%|##########| 500/500 [00:12<00:00, 40.1it/s, loss=0.123, Cuda time=12ms]",
  };
  static const char *const names[] = {"lowercase prose", "an XLA (glog) log line",
                                      "a tqdm progress bar"};
  enum { N = 200000, REPS = 30 };
  volatile int sink = 0;
  for (int k = 0; k < 3; k++) {
    size_t len = strlen(lines[k]);
    double best = 1e9;
    for (int r = 0; r < REPS; r++) {
      double t0 = now();
      for (int i = 0; i < N; i++) sink += (int)classify_line(NULL, lines[k], len);
      double dt = now() - t0;
      if (dt < best) best = dt;
    }
    printf("%-24s %3zu bytes: %6.1f ns a line\n", names[k], len, best / N * 1e9);
  }
  return sink < 0;
}
