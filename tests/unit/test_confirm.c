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
                      mk(2, "search", "ok", "{\"a\":2}", 80),
                      mk(3, "search", "ok", "{\"a\":3}", 95),
                      mk(4, "search", "oom", "{\"a\":4}", NAN)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 5, 0, 2, 2, INFINITY, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 6);
  const char *want[] = {"{}", "{\"a\":2}", "{\"a\":1}", "{}", "{\"a\":2}", "{\"a\":1}"};
  for (int i = 0; i < n && i < 6; i++) CHECK_STR(c[i], want[i]);
  free(c);
}

TEST(plan_on_resume_queues_only_what_is_missing) {
  trial_record t[] = {
      mk(0, "baseline", "ok", "{}", 100),        mk(1, "search", "ok", "{\"a\":1}", 90),
      mk(2, "search", "ok", "{\"a\":2}", 80),    mk(3, "confirm", "ok", "{}", 101),
      mk(4, "confirm", "oom", "{\"a\":2}", NAN), mk(5, "confirm", "interrupted", "{\"a\":1}", NAN)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 6, 0, 2, 2, INFINITY, NULL, 0, &c, &n), 0);
  /* {} and a2 have one confirm each (an oom counts: it ended); a1's was interrupted, so it
   * needs both. The first round: a1; the second: {}, a2, a1. */
  CHECK_INT(n, 4);
  const char *want[] = {"{\"a\":1}", "{}", "{\"a\":2}", "{\"a\":1}"};
  for (int i = 0; i < n && i < 4; i++) CHECK_STR(c[i], want[i]);
  free(c);
}

TEST(plan_with_nothing_ok_keeps_only_the_baseline) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100),
                      mk(1, "search", "crash", "{\"a\":1}", NAN)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 2, 0, 3, 1, INFINITY, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 1);
  CHECK_STR(c[0], "{}");
  free(c);
}

TEST(lucky_first_measurement_loses_on_pooled_values) {
  /* B measured 80 once by luck; its confirmations say 96 and 97. A is a steady 90. */
  trial_record t[] = {
      mk(0, "baseline", "ok", "{}", 100),      mk(1, "search", "ok", "{\"a\":1}", 90),
      mk(2, "search", "ok", "{\"a\":2}", 80),  mk(3, "confirm", "ok", "{}", 101),
      mk(4, "confirm", "ok", "{\"a\":2}", 96), mk(5, "confirm", "ok", "{\"a\":1}", 89),
      mk(6, "confirm", "ok", "{}", 99),        mk(7, "confirm", "ok", "{\"a\":2}", 97),
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
                      mk(2, "confirm", "oom", "{\"a\":1}", NAN),
                      mk(3, "search", "ok", "{\"a\":2}", 90),
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
                      mk(2, "search", "ok", "{\"a\":2}", 90),
                      mk(3, "confirm", "ok", "{\"a\":2}", 91),
                      mk(4, "confirm", "ok", "{\"a\":1}", 95)};
  t[1].steps_budget = 5; /* a 5-step rung: fast, but not a full measurement */
  t[2].steps_budget = t[3].steps_budget = t[4].steps_budget = 45;
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 5, 45, 1, 1, INFINITY, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 1); /* a2 has its one confirm and a1 is no candidate: only the baseline */
  if (n == 1) CHECK_STR(c[0], "{}");
  free(c);
  store_winner w;
  CHECK_INT(confirm_winner(t, 5, 45, 0, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 2); /* a2 (90, 91) beats a1, whose 70 was a short rung: a1 = 95 */
  CHECK_NEAR(w.value, 90.5, 1e-9);
}

/* ---- with the strategy's model estimates (src/sweep/confirm.h) ---- */

TEST(shrunk_is_the_precision_weighted_mean) {
  confirm_estimate e = {"{\"a\":1}", log(100), 0.05};
  double tau2 = 0.02 * 0.02, v = 0.05 * 0.05 - tau2;
  double want = (2 / tau2 * log(90) + log(100) / v) / (2 / tau2 + 1 / v);
  CHECK_NEAR(confirm_shrunk(log(90), 2, tau2, &e), want, 1e-12);
  /* no estimate, or no mean: the measurements alone */
  CHECK_NEAR(confirm_shrunk(log(90), 2, tau2, NULL), log(90), 1e-12);
  e.mean = NAN;
  CHECK_NEAR(confirm_shrunk(log(90), 2, tau2, &e), log(90), 1e-12);
  /* a model no better than the noise still counts, as a quarter of one measurement's
   * precision: V = tau2 / 4 */
  confirm_estimate weak = {"{\"a\":1}", log(100), 0.001};
  want = (1 / tau2 * log(90) + 4 / tau2 * log(100)) / (1 / tau2 + 4 / tau2);
  CHECK_NEAR(confirm_shrunk(log(90), 1, tau2, &weak), want, 1e-12);
}

TEST(noise_pools_repeated_configurations_over_a_prior) {
  trial_record t[] = {
      mk(0, "baseline", "ok", "{}", 100),     mk(1, "confirm", "ok", "{}", 102),
      mk(2, "search", "ok", "{\"a\":1}", 90), mk(3, "confirm", "ok", "{\"a\":1}", 88),
      mk(4, "search", "ok", "{\"a\":2}", 80), mk(5, "confirm", "oom", "{\"a\":2}", NAN)};
  double d1 = log(100) - log(102), d2 = log(90) - log(88);
  CHECK_NEAR(confirm_noise(t, 6, 0), confirm_noise_posterior(d1 * d1 / 2 + d2 * d2 / 2, 2), 1e-15);
  /* no repeats: the log-uniform prior's own mean, (hi^2 - lo^2) / (2 ln(hi / lo)) */
  double lo = CONFIRM_NOISE_LO, hi = CONFIRM_NOISE_HI;
  double prior = (hi * hi - lo * lo) / (2 * log(hi / lo));
  CHECK_NEAR(confirm_noise(t, 1, 0) / prior, 1, 0.01);
  CHECK(sqrt(prior) > 0.015 && sqrt(prior) < 0.018); /* about 1.65 %: the simulator's middle */
}

/* Many repeats at a known noise: the estimate follows them, whatever the prior says. */
TEST(noise_follows_many_repeats) {
  for (double sd = 0.001; sd <= 0.03; sd *= 3) {
    double est = sqrt(confirm_noise_posterior(40 * sd * sd, 40));
    CHECK(est > 0.85 * sd && est < 1.2 * sd);
  }
  /* one pair that agrees to 0.01 % lowers the estimate, but not to 0.01 %: one pair is little */
  double one = sqrt(confirm_noise_posterior(0.0001 * 0.0001 / 2, 1));
  CHECK(one < 0.01 && one > 0.002);
}

/* What a real H100 sweep measured (docs/GPU.md, round two: the 4-layer transformer, jax
 * 0.11.2): configuration 6 ran 55.420 and 55.448 ms, configuration 9 55.758 and 55.650, the
 * baseline 57.179 and 57.106, configuration 7 57.224 and 57.232. The model doubted 6 (a
 * neighbour of it ran 58.2 ms). With the old noise prior (1.5 %, worth 2 degrees of freedom)
 * the estimate was 0.87 % and the model's doubt chose 9; the four agreeing pairs say the noise
 * is about 0.1 %, at which 6's 0.5 % lead is real. */
TEST(winner_on_a_quiet_gpu_follows_agreeing_repeats) {
  const char *c6 = "{\"c\":6}", *c7 = "{\"c\":7}", *c9 = "{\"c\":9}";
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 57.179), mk(6, "search", "ok", c6, 55.420),
                      mk(7, "search", "ok", c7, 57.224),     mk(9, "search", "ok", c9, 55.758),
                      mk(11, "confirm", "ok", "{}", 57.106), mk(12, "confirm", "ok", c9, 55.650),
                      mk(13, "confirm", "ok", c7, 57.232),   mk(14, "confirm", "ok", c6, 55.448)};
  confirm_estimate e[] = {{c6, log(60.0), 0.02}, {c7, log(57.0), 0.02}, {c9, log(56.0), 0.02}};
  CHECK(sqrt(confirm_noise(t, 8, 0)) < 0.003);
  store_winner w;
  CHECK_INT(confirm_winner(t, 8, 0, 0, e, 3, &w), 0);
  CHECK_INT(w.trial_id, 6);
  CHECK_NEAR(w.value, (55.420 + 55.448) / 2, 1e-9);
  /* the same pairs spread 3 % apart: the noise is believed large and the model decides */
  double m6 = sqrt(55.420 * 55.448), m9 = sqrt(55.758 * 55.650), m0 = sqrt(57.179 * 57.106);
  double m7 = sqrt(57.224 * 57.232);
  t[1].value = m6 / 1.015, t[7].value = m6 * 1.015, t[3].value = m9 * 1.015;
  t[5].value = m9 / 1.015, t[0].value = m0 * 1.015, t[4].value = m0 / 1.015;
  t[2].value = m7 / 1.015, t[6].value = m7 * 1.015;
  CHECK(sqrt(confirm_noise(t, 8, 0)) > 0.01);
  CHECK_INT(confirm_winner(t, 8, 0, 0, e, 3, &w), 0);
  CHECK_INT(w.trial_id, 9);
}

TEST(pool_is_the_fastest_distinct_full_measurements) {
  trial_record t[] = {
      mk(0, "baseline", "ok", "{}", 100),     mk(1, "search", "ok", "{\"a\":1}", 90),
      mk(2, "search", "ok", "{\"a\":2}", 80), mk(3, "search", "ok", "{\"a\":3}", 70),
      mk(4, "rerun", "ok", "{\"a\":2}", 79),  mk(5, "search", "oom", "{\"a\":4}", NAN)};
  t[3].steps_budget = 5; /* a short rung */
  const char **c;
  int n;
  CHECK_INT(confirm_pool(t, 6, 45, 8, &c, &n), 0);
  CHECK_INT(n, 2);
  if (n == 2) {
    CHECK_STR(c[0], "{\"a\":2}");
    CHECK_STR(c[1], "{\"a\":1}");
  }
  free(c);
}

/* A lucky measurement: a1 measured 80 but the model, from every other configuration,
 * expects 100; a2 measured 82 and the model expects 80. The raw plan confirms a1, the
 * shrunk one a2; a3 (no estimate) competes on its measurement alone. */
TEST(plan_with_estimates_prefers_the_model_backed_candidate) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 80),
                      mk(2, "search", "ok", "{\"a\":2}", 82),
                      mk(3, "search", "ok", "{\"a\":3}", 95)};
  confirm_estimate e[] = {
      {"{\"a\":1}", log(100), 0.03}, {"{\"a\":2}", log(80), 0.03}, {"{\"a\":3}", NAN, NAN}};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 4, 0, 1, 1, INFINITY, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 2);
  if (n == 2) CHECK_STR(c[1], "{\"a\":1}");
  free(c);
  CHECK_INT(confirm_plan(t, 4, 0, 1, 1, INFINITY, e, 3, &c, &n), 0);
  CHECK_INT(n, 2);
  if (n == 2) CHECK_STR(c[1], "{\"a\":2}");
  free(c);
  CHECK_INT(confirm_plan(t, 4, 0, 3, 1, INFINITY, e, 3, &c, &n), 0);
  const char *want[] = {"{}", "{\"a\":2}", "{\"a\":1}", "{\"a\":3}"};
  CHECK_INT(n, 4);
  for (int i = 0; i < n && i < 4; i++) CHECK_STR(c[i], want[i]);
  free(c);
}

/* On resume the model also knows the confirm trials and may rank others first: the plan
 * keeps the configurations already confirmed and queues only their missing rounds. */
TEST(plan_with_estimates_on_resume_keeps_the_confirmed) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 80),
                      mk(2, "search", "ok", "{\"a\":2}", 82), mk(3, "confirm", "ok", "{}", 101),
                      mk(4, "confirm", "ok", "{\"a\":1}", 84)};
  confirm_estimate e[] = {{"{\"a\":1}", log(100), 0.03}, {"{\"a\":2}", log(80), 0.03}};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 5, 0, 1, 2, INFINITY, e, 2, &c, &n), 0);
  const char *want[] = {"{}", "{\"a\":1}"}; /* the third round of the baseline and of a1 */
  CHECK_INT(n, 2);
  for (int i = 0; i < n && i < 2; i++) CHECK_STR(c[i], want[i]);
  free(c);
}

/* The winner by shrinkage: a1's two measurements (80, 82) beat a2's (83, 83) on their own,
 * but the model expects a1 at 100 and a2 at 78; pooled and shrunk, a2 wins. Its recorded
 * value stays the pooled median of its measurements. */
TEST(winner_with_estimates_is_the_lowest_shrunk) {
  trial_record t[] = {
      mk(0, "baseline", "ok", "{}", 100),      mk(1, "search", "ok", "{\"a\":1}", 80),
      mk(2, "search", "ok", "{\"a\":2}", 83),  mk(3, "confirm", "ok", "{}", 100),
      mk(4, "confirm", "ok", "{\"a\":1}", 82), mk(5, "confirm", "ok", "{\"a\":2}", 83)};
  confirm_estimate e[] = {{"{\"a\":1}", log(100), 0.03}, {"{\"a\":2}", log(78), 0.03}};
  store_winner w;
  CHECK_INT(confirm_winner(t, 6, 0, 0, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 1);
  CHECK_INT(confirm_winner(t, 6, 0, 0, e, 2, &w), 0);
  CHECK_INT(w.trial_id, 2);
  CHECK_NEAR(w.value, 83, 1e-9);
  CHECK_INT(w.n_trials, 2);
}

/* R more measurements move a configuration's posterior mean by the prior's variance less the
 * posterior's: without a model, TAU2 / N - TAU2 / (N + R); a sure model moves it less. */
TEST(moves_is_the_preposterior_variance) {
  double tau2 = 1e-4;
  CHECK_NEAR(confirm_moves(1, 1, tau2, NULL), tau2 / 2, 1e-12);
  CHECK_NEAR(confirm_moves(2, 2, tau2, NULL), tau2 / 4, 1e-12);
  confirm_estimate none = {"{}", NAN, NAN}, sure = {"{}", 0, 0.001}, vague = {"{}", 0, 1};
  CHECK_NEAR(confirm_moves(1, 1, tau2, &none), tau2 / 2, 1e-12);
  /* the model's variance floored at a quarter of the noise: prior precision 4 / tau2 */
  CHECK_NEAR(confirm_moves(1, 1, tau2, &sure), tau2 / 5 - tau2 / 6, 1e-12);
  CHECK(confirm_moves(1, 1, tau2, &vague) < tau2 / 2);
  CHECK(confirm_moves(1, 1, tau2, &vague) > 0.49 * tau2);
}

/* Only the re-runs that can change the answer: with no repeats the noise is the prior's
 * (about 1.65 %), so one re-run of the leader and one of a contender move their gap by about
 * 1.65 % (sd); a2, 1.2 % behind, stays, a3, 12 % behind, is not re-run. */
TEST(plan_keeps_only_the_contenders_that_can_change_the_answer) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 80),
                      mk(2, "search", "ok", "{\"a\":2}", 81),
                      mk(3, "search", "ok", "{\"a\":3}", 90)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 4, 0, 3, 1, CONFIRM_Z, NULL, 0, &c, &n), 0);
  const char *want[] = {"{}", "{\"a\":1}", "{\"a\":2}"};
  CHECK_INT(n, 3);
  for (int i = 0; i < n && i < 3; i++) CHECK_STR(c[i], want[i]);
  free(c);
  CHECK_INT(confirm_plan(t, 4, 0, 3, 1, INFINITY, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 4);
  free(c);
  /* a leader far ahead of everyone: the baseline and the leader alone, two rounds */
  t[2].value = 95;
  CHECK_INT(confirm_plan(t, 4, 0, 3, 2, CONFIRM_Z, NULL, 0, &c, &n), 0);
  const char *lone[] = {"{}", "{\"a\":1}", "{}", "{\"a\":1}"};
  CHECK_INT(n, 4);
  for (int i = 0; i < n && i < 4; i++) CHECK_STR(c[i], lone[i]);
  free(c);
  /* a smaller z keeps fewer: 1.2 % behind is within 2 sd, not within 0.5 */
  t[2].value = 81;
  CHECK_INT(confirm_plan(t, 4, 0, 3, 1, 0.5, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 2);
  free(c);
}

/* With a model sure of both (its error at the floor), re-runs move the shrunk estimates
 * little, so a 1.2 % gap is already decided; a vague model leaves it open. */
TEST(plan_with_a_sure_model_needs_fewer_reruns) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", "{\"a\":1}", 80),
                      mk(2, "search", "ok", "{\"a\":2}", 81)};
  confirm_estimate sure[] = {{"{\"a\":1}", log(80), 0.001}, {"{\"a\":2}", log(81), 0.001}};
  confirm_estimate vague[] = {{"{\"a\":1}", log(80), 0.5}, {"{\"a\":2}", log(81), 0.5}};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 3, 0, 3, 1, CONFIRM_Z, sure, 2, &c, &n), 0);
  CHECK_INT(n, 2);
  if (n >= 2) CHECK_STR(c[1], "{\"a\":1}");
  free(c);
  CHECK_INT(confirm_plan(t, 3, 0, 3, 1, CONFIRM_Z, vague, 2, &c, &n), 0);
  CHECK_INT(n, 3);
  free(c);
}

/* A resumed confirmation keeps every configuration already confirmed, however far behind
 * the leader, and queues its missing rounds; the pruning applies to the others only. */
TEST(plan_on_resume_keeps_the_confirmed_however_far) {
  trial_record t[] = {
      mk(0, "baseline", "ok", "{}", 100),     mk(1, "search", "ok", "{\"a\":1}", 80),
      mk(2, "search", "ok", "{\"a\":2}", 81), mk(3, "search", "ok", "{\"a\":3}", 90),
      mk(4, "search", "ok", "{\"a\":4}", 91), mk(5, "confirm", "ok", "{}", 100),
      mk(6, "confirm", "ok", "{\"a\":3}", 90)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 7, 0, 4, 2, CONFIRM_Z, NULL, 0, &c, &n), 0);
  /* the first round: a1, a2 (the baseline and a3 ran); the second: {}, a1, a2, a3; a4 never */
  const char *want[] = {"{\"a\":1}", "{\"a\":2}", "{}", "{\"a\":1}", "{\"a\":2}", "{\"a\":3}"};
  CHECK_INT(n, 6);
  for (int i = 0; i < n && i < 6; i++) CHECK_STR(c[i], want[i]);
  free(c);
}

/* ---- never worse than the recipe nor the baseline (confirm_guard) ---- */

/* A stored trial whose 6 step times are VALUE +- SPREAD (its own steps, unlike mk's). */
static double guard_steps[64][6];
static int guard_used;
static trial_record mks(int id, const char *role, const char *config, double value, double spread) {
  trial_record t = mk(id, role, "ok", config, value);
  double *s = guard_steps[guard_used++ % 64];
  static const double shape[6] = {-1, 1, -0.5, 0.5, 0, 0};
  for (int i = 0; i < 6; i++) s[i] = value + spread * shape[i];
  t.steps = s;
  return t;
}

#define R "{\"a\":1}"
#define W "{\"a\":2}"

TEST(guard_keeps_a_winner_confirmed_past_both) {
  trial_record t[] = {mks(0, "baseline", "{}", 100, 1), mks(1, "search", R, 95, 1),
                      mks(2, "search", W, 80, 1),       mks(3, "confirm", "{}", 100, 1),
                      mks(4, "confirm", R, 95, 1),      mks(5, "confirm", W, 80, 1)};
  store_winner w;
  CHECK_INT(confirm_winner(t, 6, 0, 0, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 2);
  CHECK_INT(confirm_guard(t, 6, 0, 0, R, &w), CONFIRM_WINNER);
  CHECK_INT(w.trial_id, 2);
  CHECK_NEAR(w.value, 80, 1e-9);
  /* The same winner as the recipe: reported as the recipe, unchanged. */
  CHECK_INT(confirm_guard(t, 6, 0, 0, W, &w), CONFIRM_RECIPE);
  CHECK_INT(w.trial_id, 2);
  CHECK_NEAR(w.value, 80, 1e-9);
}

TEST(guard_falls_back_to_the_recipe_not_beaten) {
  /* W measures 94.5 against the recipe's 95, within the noise: the recipe, confirmed faster
   * than the baseline, is the answer. */
  trial_record t[] = {mks(0, "baseline", "{}", 100, 1), mks(1, "search", R, 95, 3),
                      mks(2, "search", W, 94.5, 3),     mks(3, "confirm", "{}", 100, 1),
                      mks(4, "confirm", R, 95, 3),      mks(5, "confirm", W, 94.5, 3)};
  store_winner w;
  CHECK_INT(confirm_winner(t, 6, 0, 0, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 2);
  CHECK_INT(confirm_guard(t, 6, 0, 0, R, &w), CONFIRM_RECIPE);
  CHECK_INT(w.trial_id, 1);
  CHECK_NEAR(w.value, 95, 1e-9);
  CHECK_NEAR(w.baseline, 100, 1e-9);
  CHECK(w.lo > 1); /* the recipe's own interval over the baseline */
  /* Without a recipe the same winner stands: it is confirmed faster than the baseline. */
  CHECK_INT(confirm_winner(t, 6, 0, 0, NULL, 0, &w), 0);
  CHECK_INT(confirm_guard(t, 6, 0, 0, NULL, &w), CONFIRM_WINNER);
  CHECK_INT(w.trial_id, 2);
}

TEST(guard_falls_back_to_the_baseline_when_nothing_beats_it) {
  /* The winner's lucky search run said 90; pooled it is 99.5 against the baseline's 100, well
   * inside the noise; the recipe is slower than the baseline. */
  trial_record t[] = {mks(0, "baseline", "{}", 100, 4), mks(1, "search", R, 101, 4),
                      mks(2, "search", W, 90, 4),       mks(3, "confirm", "{}", 100, 4),
                      mks(4, "confirm", R, 101, 4),     mks(5, "confirm", W, 99.5, 4),
                      mks(6, "confirm", W, 99.8, 4)};
  store_winner w;
  CHECK_INT(confirm_winner(t, 7, 0, 0, NULL, 0, &w), 0);
  CHECK_INT(w.trial_id, 2);
  CHECK_INT(confirm_guard(t, 7, 0, 0, R, &w), CONFIRM_BASELINE);
  CHECK_INT(w.trial_id, 0);
  CHECK_NEAR(w.value, 100, 1e-9);
  CHECK_NEAR(w.baseline, 100, 1e-9);
  CHECK_INT(w.n_trials, 2);
  CHECK(isnan(w.lo) && isnan(w.hi));
  /* And with no recipe at all, the same. */
  CHECK_INT(confirm_winner(t, 7, 0, 0, NULL, 0, &w), 0);
  CHECK_INT(confirm_guard(t, 7, 0, 0, NULL, &w), CONFIRM_BASELINE);
  CHECK_INT(w.trial_id, 0);
}

TEST(guard_prefers_the_recipe_measured_no_slower) {
  /* Both beat the baseline; the recipe's interval over it is wide (one noisy confirm) while
   * the winner's is not, and the winner is not confirmed past the recipe, which measured
   * faster: never slower than the recipe by the sweep's own measurements. */
  trial_record t[] = {mks(0, "baseline", "{}", 100, 1), mks(1, "search", R, 90, 30),
                      mks(2, "search", W, 91, 1),       mks(3, "confirm", "{}", 100, 1),
                      mks(4, "confirm", R, 90, 30),     mks(5, "confirm", W, 91, 1)};
  store_winner w = {.trial_id = 2, .value = 91, .baseline = 100, .n_trials = 2};
  CHECK_INT(confirm_guard(t, 6, 0, 0, R, &w), CONFIRM_RECIPE);
  CHECK_INT(w.trial_id, 1);
}

TEST(recipe_joins_the_plan_interleaved) {
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", R, 95),
                      mk(2, "search", "ok", W, 80), mk(3, "search", "ok", "{\"a\":3}", 85)};
  const char **c;
  int n;
  CHECK_INT(confirm_plan(t, 4, 0, 1, 2, INFINITY, NULL, 0, &c, &n), 0);
  CHECK_INT(n, 4); /* {} W {} W */
  CHECK_INT(confirm_add_recipe(t, 4, R, 2, &c, &n), 2);
  const char *want[] = {"{}", W, R, "{}", W, R};
  CHECK_INT(n, 6);
  for (int i = 0; i < n && i < 6; i++) CHECK_STR(c[i], want[i]);
  /* Already in the plan, or without an ok trial: nothing added. */
  CHECK_INT(confirm_add_recipe(t, 4, W, 2, &c, &n), 0);
  CHECK_INT(confirm_add_recipe(t, 4, "{\"a\":9}", 2, &c, &n), 0);
  CHECK_INT(confirm_add_recipe(t, 4, NULL, 2, &c, &n), 0);
  CHECK_INT(n, 6);
  free(c);
}

TEST(recipe_comes_after_the_leader) {
  /* confirm = { top = 1 } reserves REPEATS * (TOP + 1) trials and the plan is cut to them
   * (sweep_plan_confirmation): with a recipe, those kept must hold the leader, or the guard
   * never sees it confirmed and the answer falls back to the recipe. */
  trial_record t[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", R, 95),
                      mk(2, "search", "ok", W, 80), mk(3, "search", "ok", "{\"a\":3}", 85)};
  for (int repeats = 1; repeats <= 2; repeats++) {
    const char **c;
    int n;
    CHECK_INT(confirm_plan(t, 4, 0, 1, repeats, INFINITY, NULL, 0, &c, &n), 0);
    CHECK_INT(confirm_add_recipe(t, 4, R, repeats, &c, &n), repeats);
    CHECK_INT(n, 3 * repeats);
    int kept = repeats * (1 + 1), leader = 0, recipe = 0;
    for (int i = 0; i < kept && i < n; i++) leader += !strcmp(c[i], W), recipe += !strcmp(c[i], R);
    CHECK_STR(c[0], "{}");
    CHECK_STR(c[1], W);
    CHECK_INT(leader > 0, 1);
    CHECK_INT(leader >= recipe, 1);
    free(c);
  }
  /* The default (top = 3, repeats = 1) keeps 4: the baseline, the leader, the recipe and the
   * closest contender: the set a plan with the recipe right after the baseline keeps too. */
  const char **c;
  int n;
  trial_record u[] = {mk(0, "baseline", "ok", "{}", 100), mk(1, "search", "ok", R, 95),
                      mk(2, "search", "ok", W, 80), mk(3, "search", "ok", "{\"a\":3}", 85),
                      mk(4, "search", "ok", "{\"a\":4}", 86), mk(5, "search", "ok", "{\"a\":5}", 87)};
  CHECK_INT(confirm_plan(u, 6, 0, 3, 1, INFINITY, NULL, 0, &c, &n), 0);
  CHECK_INT(confirm_add_recipe(u, 6, R, 1, &c, &n), 1);
  const char *want[] = {"{}", W, R, "{\"a\":3}", "{\"a\":4}"};
  CHECK_INT(n, 5);
  for (int i = 0; i < n && i < 5; i++) CHECK_STR(c[i], want[i]);
  free(c);
}
