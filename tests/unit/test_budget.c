/* The sweep's budget (src/sweep/budget.c): what counts, what is left for the search and for the
 * confirmation, what a resume owes, the time budget, lost trials queued again. */
#include <math.h>

#include "budget.h"
#include "test.h"

TEST(confirmation_kept_only_when_search_keeps_twice_as_many) {
  budget b;
  /* confirm 2 x (1 + 1) = 4: 20 - 1 - 4 = 15 >= 8, so the search gets 16 */
  budget_init(&b, 20, 4, 1, 0, 0);
  CHECK_INT(b.search, 16);
  CHECK(budget_confirms(&b));
  /* 12 - 1 - 4 = 7 < 8: every trial searches, no confirmation */
  budget_init(&b, 12, 4, 1, 0, 0);
  CHECK_INT(b.search, 12);
  CHECK(!budget_confirms(&b));
  /* the edge: 13 - 1 - 4 = 8 keeps it */
  budget_init(&b, 13, 4, 1, 0, 0);
  CHECK_INT(b.search, 9);
  budget_init(&b, 13, 0, 1, 0, 0); /* no confirmation asked */
  CHECK_INT(b.search, 13);
}

TEST(trials_limit_stops_at_the_budget) {
  budget b;
  budget_init(&b, 3, 0, 2, 0, 0);
  for (int i = 0; i < 3; i++) {
    CHECK(budget_has_room(&b));
    budget_start(&b, 0);
  }
  CHECK(!budget_has_room(&b));
  CHECK_INT(budget_search_left(&b), 0);
  CHECK_INT(budget_left(&b), 0);
}

TEST(what_counts) {
  /* invalid, oom, crash, timeout, pruned and lost-left trials count: they were spent */
  CHECK(budget_counts(0, 0, 0));
  CHECK(!budget_counts(1, 0, 0)); /* interrupted: run again by a resume */
  CHECK(!budget_counts(0, 1, 0)); /* lost and queued again */
  CHECK(!budget_counts(0, 0, 1)); /* its result could not be stored */
}

TEST(an_uncounted_trial_gives_its_slot_back) {
  budget b;
  budget_init(&b, 2, 0, 1, 0, 0);
  budget_start(&b, 0);
  budget_start(&b, 0);
  CHECK(!budget_has_room(&b));
  budget_uncount(&b, 0); /* interrupted */
  CHECK(budget_has_room(&b));
  CHECK_INT(budget_search_left(&b), 1);
  budget_start(&b, 0);
  budget_end(&b);
  budget_end(&b);
  CHECK_INT(b.done, 2);
  CHECK_INT(budget_done_shown(&b), 2);
}

TEST(confirmation_trials_are_not_search) {
  budget b;
  budget_init(&b, 20, 4, 1, 0, 0); /* search 16 */
  for (int i = 0; i < 16; i++) budget_start(&b, 0);
  CHECK_INT(budget_search_left(&b), 0);
  CHECK_INT(budget_left(&b), 4);
  budget_start(&b, 1);
  budget_start(&b, 1);
  CHECK_INT(b.confirm_counted, 2);
  CHECK_INT(budget_search_left(&b), 0); /* a confirmation trial spends no search */
  budget_uncount(&b, 1);                /* an interrupted re-measurement */
  CHECK_INT(b.confirm_counted, 1);
  CHECK_INT(budget_left(&b), 3);
}

TEST(trials_the_plan_does_not_need_go_back_to_the_search) {
  budget b;
  budget_init(&b, 20, 4, 1, 0, 0);
  for (int i = 0; i < 16; i++) budget_start(&b, 0);
  budget_give_back(&b, 3); /* the plan needs 1 of the 4 left */
  CHECK_INT(budget_search_left(&b), 3);
  CHECK(budget_confirms(&b));
  budget_give_back(&b, 1); /* then none */
  CHECK(!budget_confirms(&b));
}

TEST(resume_owes_the_rest) {
  budget b;
  budget_init(&b, 20, 4, 1, 0, 0);
  budget_resume(&b, 17, 1); /* 16 search + 1 confirmation ended */
  CHECK_INT(b.done, 17);
  CHECK_INT(budget_left(&b), 3);
  CHECK_INT(budget_search_left(&b), 0);
  /* resume --trials 30: the extension is searched first */
  budget_init(&b, 30, 4, 1, 0, 0);
  budget_resume(&b, 17, 1);
  CHECK_INT(budget_search_left(&b), 26 - 16);
  /* a budget lowered below what ran: nothing starts, nothing negative is searched */
  budget_init(&b, 10, 0, 1, 0, 0);
  budget_resume(&b, 12, 0);
  CHECK(!budget_has_room(&b));
  CHECK_INT(budget_left(&b), -2);
  CHECK_INT(budget_search_left(&b), 0);
  CHECK_INT(budget_done_shown(&b), 10);
}

TEST(lost_trials_requeued_up_to_eight_events) {
  budget b;
  int first = 0;
  budget_init(&b, 100, 0, 2, 0, 0);
  CHECK_INT(b.max_requeue, 16);
  for (int i = 0; i < 16; i++) {
    CHECK(budget_may_requeue(&b, &first));
    CHECK(!first);
    budget_requeued(&b);
  }
  CHECK(!budget_may_requeue(&b, &first));
  CHECK(first); /* said once */
  CHECK(!budget_may_requeue(&b, &first));
  CHECK(!first);
  budget_lost(&b);
  CHECK_INT(b.lost_left, 1);
  budget_init(&b, 100, 0, 0, 0, 0); /* parallel 0 or 1: eight */
  CHECK_INT(b.max_requeue, 8);
}

TEST(hours_limit) {
  budget b;
  budget_init(&b, 10, 0, 1, 0, 100.0);
  CHECK(b.deadline == 0);
  CHECK(budget_time_left(&b, 1e9) < 0);
  CHECK(budget_fits(&b, 1e9, 1e9)); /* no time budget: anything fits */
  budget_init(&b, 10, 0, 1, 0.5, 100.0);
  CHECK_NEAR(b.deadline, 1900.0, 1e-9);
  CHECK_NEAR(budget_time_left(&b, 1000.0), 900.0, 1e-9);
  CHECK_NEAR(budget_time_left(&b, 2000.0), 0.0, 1e-9);
  CHECK(budget_fits(&b, 1000.0, NAN));    /* nothing measured: the first trial starts */
  CHECK(budget_fits(&b, 1000.0, 899.0));  /* predicted to finish in time */
  CHECK(!budget_fits(&b, 1000.0, 900.0)); /* not strictly before the deadline */
  CHECK(!budget_fits(&b, 1900.0, NAN));   /* spent: not even an unmeasured one */
  CHECK(!budget_deadline_hit(&b));
  budget_deadline_reached(&b);
  CHECK(budget_deadline_hit(&b));
  CHECK(budget_cut_by_time(&b, 0));
  CHECK(!budget_cut_by_time(&b, 1)); /* the strategy had nothing more: not the clock's doing */
  for (int i = 0; i < 10; i++) budget_start(&b, 0);
  CHECK(!budget_cut_by_time(&b, 0)); /* the trial budget was spent anyway */
  budget_set_hours(&b, 0, 0);
  CHECK(!budget_cut_by_time(&b, 0));
}

TEST(minimize_batch_is_its_own_budget) {
  budget b;
  budget_init(&b, 20, 4, 1, 0, 0);
  budget_batch(&b, 25, 3); /* 25 trials behind it, a batch of 3 */
  CHECK_INT(b.trials, 28);
  CHECK(budget_has_room(&b));
  for (int i = 0; i < 3; i++) budget_start(&b, 0);
  CHECK(!budget_has_room(&b));
}

TEST(an_outside_end_moves_the_deadline_only_earlier) {
  budget b;
  budget_init(&b, 10, 0, 1, 1.0, 100.0); /* one hour from 100 s: 3700 */
  CHECK(!budget_end_by(&b, 5000.0));     /* the time budget ends first */
  CHECK(b.deadline == 3700.0);
  CHECK(budget_end_by(&b, 2000.0));
  CHECK(b.deadline == 2000.0);
  budget_init(&b, 10, 0, 1, 0, 100.0); /* no time budget */
  CHECK(budget_end_by(&b, 900.0));
  CHECK(b.deadline == 900.0);
}
