/* Resume as a plan: what an interrupted sweep's stored trials say is left to do. */
#include <math.h>
#include <stdlib.h>

#include "resume.h"
#include "test.h"

static trial_record rec(int number, trial_role role, outcome status, const char *config,
                        double value, int pid) {
  return (trial_record){.id = number + 100,
                        .number = number,
                        .role = role,
                        .status = status,
                        .config_json = config,
                        .value = value,
                        .steps_budget = 10 + number,
                        .pid = pid};
}

/* Interrupted before its first trial was stored (a Ctrl-C during the software probe): the
 * baseline is owed, as trial 0, before anything the strategy asks. */
TEST(empty_sweep_owes_its_baseline) {
  resume_plan p;
  resume_plan_make(NULL, 0, &p);
  CHECK_INT(p.counted, 0);
  CHECK_INT(p.next_number, 0);
  CHECK_INT(p.n_reruns, 1);
  CHECK_INT(p.reruns[0].role, ROLE_BASELINE);
  CHECK_STR(p.reruns[0].config_json, "{}");
  CHECK_INT(p.baseline_ok, 0);
  CHECK(isnan(p.baseline_ms));
  resume_plan_free(&p);
}

TEST(finished_trials_count_and_set_the_baseline) {
  trial_record t[] = {
      rec(0, ROLE_BASELINE, OUTCOME_OK, "{}", 100, 0),
      rec(1, ROLE_SEARCH, OUTCOME_OK, "{\"a\":1}", 90, 0),
      rec(2, ROLE_SEARCH, OUTCOME_OOM, "{\"a\":2}", NAN, 0),
      rec(3, ROLE_SEARCH, OUTCOME_PRUNED, "{\"a\":3}", NAN, 0),
  };
  resume_plan p;
  resume_plan_make(t, 4, &p);
  CHECK_INT(p.counted, 4);
  CHECK_INT(p.next_number, 4);
  CHECK_INT(p.baseline_ok, 1);
  CHECK_NEAR(p.baseline_ms, 100, 0);
  CHECK_INT(p.baseline_id, 100); /* trial 0's row: its losses are metric.check's reference */
  CHECK_INT(p.baseline_ended, 1);
  CHECK_INT(p.n_ok, 1);
  CHECK_INT(p.n_reruns, 0);
  CHECK_INT(p.n_orphans, 0);
  CHECK_INT(p.n_history, 3); /* every trial but the baseline */
  CHECK_INT(p.history[0].number, 1);
  resume_plan_free(&p);
}

TEST(lost_interrupted_and_running_are_rerun_once) {
  trial_record t[] = {
      rec(0, ROLE_BASELINE, OUTCOME_OK, "{}", 100, 0),
      rec(1, ROLE_SEARCH, OUTCOME_LOST, "{\"a\":1}", NAN, 0),
      rec(2, ROLE_SEARCH, OUTCOME_INTERRUPTED, "{\"a\":2}", NAN, 0),
      rec(3, ROLE_SEARCH, OUTCOME_RUNNING, "{\"a\":3}", NAN, 4242),
      rec(4, ROLE_RERUN, OUTCOME_INTERRUPTED, "{\"a\":1}", NAN, 0), /* the same config again */
  };
  resume_plan p;
  resume_plan_make(t, 5, &p);
  CHECK_INT(p.counted, 1);
  CHECK_INT(p.next_number, 5);
  CHECK_INT(p.n_reruns, 3);
  if (p.n_reruns == 3) {
    CHECK_STR(p.reruns[0].config_json, "{\"a\":1}");
    CHECK_INT(p.reruns[0].role, ROLE_RERUN);
    CHECK_INT(p.reruns[0].rerun_of, 1);
    CHECK_INT(p.reruns[0].steps_budget, 11); /* a re-run keeps its rung's step budget */
    CHECK_STR(p.reruns[2].config_json, "{\"a\":3}");
    CHECK_INT(p.reruns[2].rerun_of, 3);
  }
  CHECK_INT(p.n_orphans, 1); /* only a running trial can have left a process */
  if (p.n_orphans == 1) {
    CHECK_INT(p.orphans[0].number, 3);
    CHECK_INT(p.orphans[0].pid, 4242);
  }
  CHECK_INT(p.n_history, 4); /* lost ones too: the strategy must not propose them again */
  resume_plan_free(&p);
}

TEST(a_config_finished_elsewhere_is_not_rerun) {
  trial_record t[] = {
      rec(0, ROLE_BASELINE, OUTCOME_OK, "{}", 100, 0),
      rec(1, ROLE_SEARCH, OUTCOME_LOST, "{\"a\":1}", NAN, 0),
      rec(2, ROLE_RERUN, OUTCOME_OK, "{\"a\":1}", 95, 0),
  };
  resume_plan p;
  resume_plan_make(t, 3, &p);
  CHECK_INT(p.n_reruns, 0);
  CHECK_INT(p.counted, 2);
  CHECK_INT(p.n_ok, 1);
  resume_plan_free(&p);
}

TEST(an_unfinished_baseline_is_rerun_as_the_baseline) {
  trial_record t[] = {
      rec(0, ROLE_BASELINE, OUTCOME_INTERRUPTED, "{}", NAN, 0),
      rec(1, ROLE_SEARCH, OUTCOME_OK, "{\"a\":1}", 90, 0),
  };
  resume_plan p;
  resume_plan_make(t, 2, &p);
  CHECK_INT(p.baseline_ok, 0);
  CHECK_INT(p.baseline_ended, 0); /* it runs again: metric.check waits for it */
  CHECK_INT(p.n_reruns, 1);
  if (p.n_reruns == 1) {
    CHECK_STR(p.reruns[0].config_json, "{}");
    CHECK_INT(p.reruns[0].role, ROLE_BASELINE);
    CHECK_INT(p.reruns[0].rerun_of, 0);
  }
  CHECK_INT(p.n_history, 1);
  resume_plan_free(&p);
}

TEST(a_failed_baseline_counts_but_is_not_ok) {
  trial_record t[] = {
      rec(0, ROLE_BASELINE, OUTCOME_CRASH, "{}", NAN, 0),
      rec(1, ROLE_BASELINE, OUTCOME_OK, "{}", 101, 0), /* a confirmation-era baseline */
      rec(2, ROLE_CONFIRM, OUTCOME_OK, "{\"a\":1}", 90, 0),
  };
  resume_plan p;
  resume_plan_make(t, 3, &p);
  CHECK_INT(p.counted, 3);
  CHECK_INT(p.baseline_ok, 1);
  CHECK_INT(p.baseline_id, 101); /* the first baseline that ended ok, not the crashed one */
  CHECK_NEAR(p.baseline_ms, 101, 0);
  CHECK_INT(p.n_ok, 1);
  CHECK_INT(p.n_reruns, 0);
  resume_plan_free(&p);
}

TEST(confirmation_trials_count_apart_from_the_search) {
  trial_record t[] = {
      rec(0, ROLE_BASELINE, OUTCOME_OK, "{}", 100, 0),
      rec(1, ROLE_SEARCH, OUTCOME_OK, "{\"a\":1}", 90, 0),
      rec(2, ROLE_BASELINE, OUTCOME_OK, "{}", 101, 0),
      rec(3, ROLE_CONFIRM, OUTCOME_OK, "{\"a\":1}", 91, 0),
      rec(4, ROLE_CONFIRM, OUTCOME_INTERRUPTED, "{\"a\":1}", NAN, 0),
  };
  resume_plan p;
  resume_plan_make(t, 5, &p);
  CHECK_INT(p.counted, 4);
  CHECK_INT(p.confirm_counted, 1); /* the interrupted one does not count */
  resume_plan_free(&p);
}

/* A resumed strategy must not start from its seed again: the seed it gets depends on the
 * history's length, is fixed for a given one, and stays a small non-negative integer. */
TEST(resume_seed_moves_with_the_history) {
  CHECK(resume_seed(7, 343) != 7);
  CHECK(resume_seed(7, 343) != resume_seed(7, 344));
  CHECK(resume_seed(7, 343) != resume_seed(8, 343));
  CHECK(resume_seed(7, 343) == resume_seed(7, 343));
  for (int n = 0; n < 1000; n++) {
    int64_t s = resume_seed(-5 + n, n);
    CHECK(s >= 0 && s < ((int64_t)1 << 48));
  }
}
