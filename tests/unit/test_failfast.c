/* Fail fast as a rule (src/sweep/failfast.c): a failed baseline stops, five first search trials
 * failing alike stop, anything that ran fine (ok, pruned) or differs does not. */
#include <stdlib.h>

#include "failfast.h"
#include "test.h"

static failfast_verdict search(failfast *f, outcome st, const char *reason) {
  failfast_trial t = {.status = st, .search = 1, .reason = reason};
  return failfast_judge(f, &t);
}

TEST(failed_baseline_stops) {
  failfast f = {0};
  failfast_trial t = {.status = OUTCOME_CRASH, .baseline = 1, .reason = "exit 127"};
  CHECK_INT(failfast_judge(&f, &t), FAILFAST_BASELINE);
  t.status = OUTCOME_OOM;
  CHECK_INT(failfast_judge(&f, &t), FAILFAST_BASELINE);
  t.status = OUTCOME_OK;
  CHECK_INT(failfast_judge(&f, &t), FAILFAST_GO_ON);
  CHECK_INT(f.seen, 0); /* the baseline is not one of the first search trials */
  failfast_free(&f);
}

TEST(pruned_baseline_ran_fine) {
  /* a resumed baseline re-run is pruned against the stored best: it ran */
  failfast f = {0};
  failfast_trial t = {.status = OUTCOME_PRUNED, .baseline = 1, .reason = "slower than best"};
  CHECK_INT(failfast_judge(&f, &t), FAILFAST_GO_ON);
  failfast_free(&f);
}

TEST(five_alike_stop_digits_aside) {
  failfast f = {0};
  char reason[64];
  for (int i = 0; i < FAILFAST_N - 1; i++) {
    snprintf(reason, sizeof reason, "signal 11 at 0x7f%d", i * 37);
    CHECK_INT(search(&f, OUTCOME_CRASH, reason), FAILFAST_GO_ON);
  }
  CHECK_INT(search(&f, OUTCOME_CRASH, "signal 6 at 0x7f5"), FAILFAST_ALIKE);
  /* past the first five nothing more is read */
  CHECK_INT(search(&f, OUTCOME_CRASH, "signal 6 at 0x1"), FAILFAST_GO_ON);
  failfast_free(&f);
}

TEST(five_pruned_do_not_stop) {
  /* a resumed sweep's first trials pruned against the stored best ran fine */
  failfast f = {0};
  for (int i = 0; i < FAILFAST_N; i++)
    CHECK_INT(search(&f, OUTCOME_PRUNED, "slower than the best at step 4"), FAILFAST_GO_ON);
  CHECK_INT(f.seen, FAILFAST_N);
  CHECK(!f.armed);
  failfast_free(&f);
}

TEST(one_pruned_among_failures_disarms) {
  failfast f = {0};
  for (int i = 0; i < FAILFAST_N - 1; i++)
    CHECK_INT(search(&f, OUTCOME_OOM, "RESOURCE_EXHAUSTED"), FAILFAST_GO_ON);
  CHECK_INT(search(&f, OUTCOME_PRUNED, "slower"), FAILFAST_GO_ON);
  failfast_free(&f);
  f = (failfast){0};
  CHECK_INT(search(&f, OUTCOME_PRUNED, "slower"), FAILFAST_GO_ON);
  for (int i = 0; i < FAILFAST_N - 1; i++)
    CHECK_INT(search(&f, OUTCOME_OOM, "RESOURCE_EXHAUSTED"), FAILFAST_GO_ON);
  failfast_free(&f);
}

TEST(mixed_failures_or_an_ok_do_not_stop) {
  failfast f = {0};
  CHECK_INT(search(&f, OUTCOME_OOM, "out of memory"), FAILFAST_GO_ON);
  for (int i = 0; i < FAILFAST_N - 1; i++)
    CHECK_INT(search(&f, OUTCOME_CRASH, "exit 1"), FAILFAST_GO_ON);
  failfast_free(&f);
  f = (failfast){0};
  for (int i = 0; i < FAILFAST_N - 1; i++)
    CHECK_INT(search(&f, OUTCOME_CRASH, "exit 1"), FAILFAST_GO_ON);
  CHECK_INT(search(&f, OUTCOME_OK, NULL), FAILFAST_GO_ON);
  failfast_free(&f);
  f = (failfast){0}; /* one status, two reasons */
  for (int i = 0; i < FAILFAST_N - 1; i++)
    CHECK_INT(search(&f, OUTCOME_INVALID, "Unknown flag"), FAILFAST_GO_ON);
  CHECK_INT(search(&f, OUTCOME_INVALID, "bad value"), FAILFAST_GO_ON);
  failfast_free(&f);
}

TEST(lost_interrupted_and_other_roles_are_not_read) {
  failfast f = {0};
  for (int i = 0; i < FAILFAST_N - 1; i++)
    CHECK_INT(search(&f, OUTCOME_TIMEOUT, "timeout"), FAILFAST_GO_ON);
  CHECK_INT(search(&f, OUTCOME_LOST, "node failure"), FAILFAST_GO_ON);
  CHECK_INT(search(&f, OUTCOME_INTERRUPTED, NULL), FAILFAST_GO_ON);
  failfast_trial confirm = {.status = OUTCOME_OK, .reason = NULL}; /* neither search nor base */
  CHECK_INT(failfast_judge(&f, &confirm), FAILFAST_GO_ON);
  CHECK_INT(f.seen, FAILFAST_N - 1);
  CHECK_INT(search(&f, OUTCOME_TIMEOUT, "timeout"), FAILFAST_ALIKE);
  failfast_free(&f);
}

TEST(wrong_and_no_metric_are_failures) {
  CHECK(failfast_failed(OUTCOME_WRONG));
  CHECK(failfast_failed(OUTCOME_NO_METRIC));
  CHECK(failfast_failed(OUTCOME_INVALID));
  CHECK(!failfast_failed(OUTCOME_OK));
  CHECK(!failfast_failed(OUTCOME_PRUNED));
  char *sig = failfast_signature(OUTCOME_CRASH, "exit 3 at 0x7f12");
  CHECK(strcmp(sig, "crash: exit  at xf") == 0);
  free(sig);
}
