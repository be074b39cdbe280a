/* Confirmation: what is re-measured (interleaved, resumable) and which config wins on the
 * pooled measurements. */
#include <math.h>
#include <stdlib.h>

#include "confirm.h"
#include "test.h"

static double steps_a[] = {91, 90, 89, 90, 91, 90};

/* A stored trial with step times around VALUE. */
static trial_record mk(int id, const char *role, const char *status, const char *config,
                       double value) {
  trial_record t = {0};
  t.id = id;
  t.number = id;
  t.role = (trial_role)record_role_from_name(role);
  t.status = (outcome)outcome_from_name(status);
  t.config_json = config;
  t.value = value;
  t.steps = steps_a;
  t.n_steps = 6;
  return t;
}

TEST(plan_interleaves_baseline_and_top) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 90),
                     mk(2, "search", "ok", "{\"a\":2}", 80), mk(3, "search", "ok", "{\"a\":3}", 95),
                     mk(4, "search", "oom", "{\"a\":4}", NAN)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 5, 0, 2, 2, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 6);
  const char *want[] = {"{}", "{\"a\":2}", "{\"a\":1}", "{}", "{\"a\":2}", "{\"a\":1}"};
  for (int i = 0; i < n && i < 6; i++) CHECK_STR(c[i], want[i]);
  free(c);
}

TEST(plan_on_resume_queues_only_what_is_missing) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 90),
                     mk(2, "search", "ok", "{\"a\":2}", 80), mk(3, "confirm", "ok", "{}", 101),
                     mk(4, "confirm", "oom", "{\"a\":2}", NAN),
                     mk(5, "confirm", "interrupted", "{\"a\":1}", NAN)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 6, 0, 2, 2, NULL, 0, &c, &n), 0);
  /* {} and a2 have one confirm each (an oom counts: it ended); a1's was interrupted, so it
   * needs both. Round 0: a1; round 1: {}, a2, a1. */
  CHECK_INT(n, 4);
  const char *want[] = {"{\"a\":1}", "{}", "{\"a\":2}", "{\"a\":1}"};
  for (int i = 0; i < n && i < 4; i++) CHECK_STR(c[i], want[i]);
  free(c);
}

TEST(plan_with_nothing_ok_keeps_only_the_baseline) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "crash", "{\"a\":1}", NAN)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 2, 0, 3, 1, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 1);
  CHECK_STR(c[0], "{}");
  free(c);
}

TEST(lucky_first_measurement_loses_on_pooled_values) {
  /* B measured 80 once by luck; its confirmations say 96 and 97. A is a steady 90. */
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100),   mk(1, "search", "ok", "{\"a\":1}", 90),
                     mk(2, "search", "ok", "{\"a\":2}", 80), mk(3, "confirm", "ok", "{}", 101),
                     mk(4, "confirm", "ok", "{\"a\":2}", 96), mk(5, "confirm", "ok", "{\"a\":1}", 89),
                     mk(6, "confirm", "ok", "{}", 99),       mk(7, "confirm", "ok", "{\"a\":2}", 97),
                     mk(8, "confirm", "ok", "{\"a\":1}", 91)};
  store_winner w;
  CHECK_INT(confirm_winner(t, 9, 0, 2, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 1);
  CHECK_NEAR(w.value, 90, 1e-9);
  CHECK_NEAR(w.baseline, 100, 1e-9);
  CHECK_INT(w.n_trials, 3);
  CHECK(!isnan(w.lo) && !isnan(w.hi) && w.lo <= w.hi);
}

TEST(failed_confirmations_disqualify) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 80),
                     mk(2, "confirm", "oom", "{\"a\":1}", NAN), mk(3, "search", "ok", "{\"a\":2}", 90),
                     mk(4, "confirm", "ok", "{\"a\":2}", 91)};
  store_winner w;
  CHECK_INT(confirm_winner(t, 5, 0, 0, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 3);
  CHECK_NEAR(w.value, 90.5, 1e-9);
}

TEST(no_confirm_trials_no_winner) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 80)};
  store_winner w;
  CHECK_INT(confirm_winner(t, 2, 0, 0, NULL, 0, &w), -1);
}

TEST(short_rungs_are_not_candidates_nor_pooled) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 70),
                     mk(2, "search", "ok", "{\"a\":2}", 90), mk(3, "confirm", "ok", "{\"a\":2}", 91),
                     mk(4, "confirm", "ok", "{\"a\":1}", 95)};
  t[1].steps_budget = 5; /* a 5-step rung: fast, but not a full measurement */
  t[2].steps_budget = t[3].steps_budget = t[4].steps_budget = 45;
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 5, 45, 1, 1, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 1); /* a2 has its one confirm and a1 is no candidate: only the baseline */
  if (n == 1) CHECK_STR(c[0], "{}");
  free(c);
  store_winner w;
  CHECK_INT(confirm_winner(t, 5, 45, 0, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 2); /* a2 (90, 91) beats a1, whose 70 was a short rung: a1 = 95 */
  CHECK_NEAR(w.value, 90.5, 1e-9);
}
