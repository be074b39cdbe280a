/* Minimize as a plan: the configurations measured (each parameter reverted alone, then the
 * greedy pass), interleaved with the winner, resumable from the stored trials, and the
 * decisions against the winner's interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "minimize.h"
#include "test.h"

#define W "{\"a\":1,\"b\":\"x,}\",\"c\":true}"
#define NO_A "{\"b\":\"x,}\",\"c\":true}"
#define NO_B "{\"a\":1,\"c\":true}"
#define NO_C "{\"a\":1,\"b\":\"x,}\"}"
#define ONLY_A "{\"a\":1}"

static trial_record mk(int number, const char *config, double value) {
  trial_record t = {0};
  t.id = t.number = number;
  t.role = ROLE_MINIMIZE;
  t.status = isnan(value) ? OUTCOME_OOM : OUTCOME_OK;
  t.config_json = config;
  t.value = value;
  return t;
}

static const minimize_input in = {.winner = W, .repeats = 1, .speedup = 1.2, .lo = 1.1};

TEST(subset_keeps_members_verbatim) {
  int drop[3] = {0, 1, 0};
  char *s = minimize_subset(W, drop, 3);
  CHECK_STR(s, NO_B);
  free(s);
  int all[3] = {1, 1, 1};
  s = minimize_subset(W, all, 3);
  CHECK_STR(s, "{}");
  free(s);
}

TEST(first_plan_interleaves_the_winner_and_each_revert) {
  minimize_input two = in;
  two.repeats = 2;
  minimize_plan p;
  char *err = NULL;
  CHECK_INT(minimize_plan_make(NULL, 0, &two, &p, &err), 0);
  CHECK_INT(p.done, 0);
  CHECK_INT(p.n_params, 3);
  CHECK_STR(p.params[1].name, "b");
  CHECK_STR(p.params[1].value, "\"x,}\"");
  const char *want[] = {W, NO_A, NO_B, NO_C, W, NO_A, NO_B, NO_C};
  CHECK_INT(p.n_configs, 8);
  for (int i = 0; i < p.n_configs && i < 8; i++) CHECK_STR(p.configs[i], want[i]);
  minimize_plan_free(&p);
}

TEST(greedy_keeps_what_matters_and_reverts_the_rest) {
  /* a matters (1.2 * 100/120 = 1.0 < 1.1); c (1.2) is less important than b (1.188). */
  trial_record t[6] = {mk(1, W, 100), mk(2, NO_A, 120), mk(3, NO_B, 101), mk(4, NO_C, 100)};
  minimize_plan p;
  char *err = NULL;
  CHECK_INT(minimize_plan_make(t, 4, &in, &p, &err), 0);
  CHECK_INT(p.done, 0);
  CHECK(p.params[0].matters);
  CHECK(p.params[2].dropped); /* c: the first revert, measured alone already */
  CHECK_STR(p.minimal, NO_C);
  /* Next: b reverted too, against a fresh block of the winner. */
  CHECK_INT(p.n_configs, 2);
  CHECK_STR(p.configs[0], W);
  CHECK_STR(p.configs[1], ONLY_A);
  minimize_plan_free(&p);
  t[4] = mk(5, W, 100);
  t[5] = mk(6, ONLY_A, 102); /* 1.2 * 100/102 = 1.176: kept */
  CHECK_INT(minimize_plan_make(t, 6, &in, &p, &err), 0);
  CHECK_INT(p.done, 1);
  CHECK_INT(p.n_configs, 0);
  CHECK_STR(p.minimal, ONLY_A);
  CHECK(!p.params[0].dropped && p.params[1].dropped && p.params[2].dropped);
  CHECK(fabs(p.minimal_speedup - 1.2 * 100 / 102) < 1e-9);
  minimize_plan_free(&p);
}

TEST(a_revert_below_the_interval_is_undone) {
  trial_record t[] = {mk(1, W, 100),    mk(2, NO_A, 120), mk(3, NO_B, 101),
                      mk(4, NO_C, 100), mk(5, W, 100),    mk(6, ONLY_A, 115)};
  minimize_plan p;
  char *err = NULL;
  CHECK_INT(minimize_plan_make(t, 6, &in, &p, &err), 0);
  CHECK_INT(p.done, 1);
  CHECK_STR(p.minimal, NO_C);
  CHECK(p.params[1].tried && !p.params[1].dropped);
  minimize_plan_free(&p);
}

TEST(failed_and_other_roles_do_not_count_as_measurements) {
  trial_record t[] = {mk(1, W, 100), mk(2, NO_A, NAN), mk(3, NO_B, 101), mk(4, NO_C, 100)};
  t[3].role = ROLE_CONFIRM; /* not minimize's: NO_C is still missing */
  minimize_plan p;
  char *err = NULL;
  CHECK_INT(minimize_plan_make(t, 4, &in, &p, &err), 0);
  CHECK_INT(p.n_configs, 1);
  CHECK_STR(p.configs[0], NO_C);
  CHECK(p.params[0].matters); /* reverting a failed (oom): it stays */
  minimize_plan_free(&p);
}

TEST(a_winner_without_parameters_is_refused) {
  minimize_input none = in;
  none.winner = "{}";
  minimize_plan p;
  char *err = NULL;
  CHECK_INT(minimize_plan_make(NULL, 0, &none, &p, &err), FT_EINPUT);
  CHECK(err && strstr(err, "nothing to minimize"));
  free(err);
}

TEST(a_revert_that_ooms_says_so) {
  /* without a, the run ran out of memory: a matters, and the plan says how it ended */
  trial_record t[4] = {mk(1, W, 100), mk(2, NO_A, NAN), mk(3, NO_B, 101), mk(4, NO_C, 100)};
  minimize_plan p;
  char *err = NULL;
  CHECK_INT(minimize_plan_make(t, 4, &in, &p, &err), 0);
  CHECK(isnan(p.params[0].alone));
  CHECK_INT(p.params[0].matters, 1);
  CHECK_INT(p.params[0].alone_failed, OUTCOME_OOM);
  CHECK_INT(p.params[1].alone_failed, -1);
  minimize_plan_free(&p);
}
