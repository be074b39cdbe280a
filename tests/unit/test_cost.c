/* What a trial costs in wall time (src/sweep/cost.c): the steady step time from the step lines'
 * arrival, and the prediction for a step budget that the deadline and the ETA use. */
#include <math.h>

#include "cost.h"
#include "test.h"

TEST(step_time_is_wall_time_between_lines) {
  /* line 2 (the skip) at 10.0 s, line 11 at 14.5 s: 9 steps in 4.5 s */
  CHECK_NEAR(cost_step_ms(2, 10.0, 11, 14.5), 500.0, 1e-9);
  CHECK(isnan(cost_step_ms(3, 10.0, 3, 10.0))); /* one line past the skip: no interval */
}

TEST(predict_before_any_trial_is_unknown) {
  cost_model m = {0};
  CHECK(isnan(cost_predict(&m, 20)));
  cost_free(&m);
}

TEST(predict_scales_steps_not_compile) {
  /* 60 s to the first step, then 20 steps of 1 s: a 100-step budget costs 60 + 100 s, a
   * 5-step rung 60 + 5 s, not 80 s scaled by the steps (400 s, 20 s). */
  cost_model m = {0};
  cost_add(&m, 80.0, 20, 20, 1000.0);
  CHECK_NEAR(cost_predict(&m, 20), 80.0, 1e-9);
  CHECK_NEAR(cost_predict(&m, 100), 160.0, 1e-9);
  CHECK_NEAR(cost_predict(&m, 5), 65.0, 1e-9);
  cost_free(&m);
}

TEST(predict_is_the_median_over_trials) {
  cost_model m = {0};
  cost_add(&m, 30.0, 10, 10, 1000.0); /* 20 + 10 */
  cost_add(&m, 50.0, 10, 10, 1000.0); /* 40 + 10 */
  cost_add(&m, 2.0, 0, 10, NAN);      /* refused before its first step: 2 s at any budget */
  CHECK_NEAR(cost_predict(&m, 10), 30.0, 1e-9);
  CHECK_NEAR(cost_predict(&m, 40), 60.0, 1e-9); /* 20 + 40, 40 + 40, 2 */
  cost_free(&m);
}

TEST(predict_keeps_a_program_that_ignores_the_budget) {
  /* No budget known (the command takes no {steps}): it costs what it cost. */
  cost_model m = {0};
  cost_add(&m, 7.0, 6, 0, 200.0);
  CHECK_NEAR(cost_predict(&m, 50), 7.0, 1e-9);
  /* Lines that arrived in one burst at the end cannot cost more than the trial did. */
  cost_add(&m, 1.0, 100, 0, 50.0);
  cost_add(&m, 1.0, 100, 0, 50.0);
  CHECK_NEAR(cost_predict(&m, 50), 1.0, 1e-9);
  cost_free(&m);
}

/* Asked again after more trials, at more budgets than are kept, the prediction is the median
 * over every sample so far, as one computed afresh. */
TEST(predict_kept_across_trials_is_the_median_of_all) {
  cost_model m = {0};
  double base[40], steps[40];
  int budget[40];
  unsigned x = 12345;
  for (int i = 0; i < 40; i++) {
    x = x * 1103515245u + 12345u;
    base[i] = (double)(x % 1000) / 10.0;
    steps[i] = (double)((x >> 10) % 500) / 10.0;
    budget[i] = i % 3 == 0 ? 0 : 10 * (1 + i % 4);
    cost_add(&m, base[i] + steps[i], 10, budget[i], steps[i] * 100.0);
    for (int b = 0; b <= 2 * COST_KEPT; b++) {
      int ask = 5 * b;
      double v[40];
      for (int j = 0; j <= i; j++)
        v[j] = base[j] + steps[j] * (ask > 0 && budget[j] > 0 ? (double)ask / budget[j] : 1.0);
      CHECK_NEAR(cost_predict(&m, ask), stats_median(v, i + 1), 1e-9);
    }
  }
  CHECK_INT(m.n_kept, COST_KEPT);
  cost_free(&m);
}
