/* The best-so-far tracker (best.h). Owns which value is better and what a new best resets;
 * must not tell the running trials (the scheduler hands the best on) or print. */
#include "best.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "stats.h"

void best_init(best_tracker *b) {
  memset(b, 0, sizeof *b);
  b->value = b->baseline = b->lo = b->hi = NAN;
}

void best_free(best_tracker *b) {
  free(b->base_steps);
  b->base_steps = NULL;
  b->n_base_steps = 0;
}

int best_beats(double value, double than) {
  return isnan(than) || value < than;
}

void best_baseline(best_tracker *b, double value) {
  b->baseline = value;
  b->baseline_ok = 1;
}

void best_baseline_steps(best_tracker *b, const double *steps, int n) {
  if (n <= 0) return;
  free(b->base_steps);
  b->n_base_steps = n;
  b->base_steps = xmalloc(sizeof(double) * (size_t)n);
  memcpy(b->base_steps, steps, sizeof(double) * (size_t)n);
}

void best_restore(best_tracker *b, int baseline_ok, double baseline, int n_ok) {
  b->baseline_ok = baseline_ok;
  b->baseline = baseline;
  b->n_ok = n_ok;
}

int best_offer(best_tracker *b, double value, int number) {
  if (!best_beats(value, b->value)) return 0;
  b->value = value;
  b->number = number;
  b->lo = b->hi = NAN;
  return 1;
}

int best_search_ok(best_tracker *b, double value, int number) {
  b->n_ok++;
  return best_offer(b, value, number);
}

void best_interval(best_tracker *b, const double *steps, int n) {
  double sp;
  b->lo = b->hi = NAN;
  if (b->n_base_steps > 0 && n > 0 &&
      stats_speedup_ci(b->base_steps, b->n_base_steps, steps, n, 12345, &sp, &b->lo, &b->hi) != 0)
    b->lo = b->hi = NAN;
}
