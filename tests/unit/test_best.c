/* The best-so-far tracker (src/sweep/best.c): lower values (costs) win, ties keep the earlier, a new
 * best clears its interval, the baseline's steps give the interval. */
#include <math.h>

#include "best.h"
#include "test.h"

TEST(nothing_yet) {
  best_tracker b;
  best_init(&b);
  CHECK(isnan(b.value));
  CHECK(isnan(b.baseline));
  CHECK(isnan(b.lo) && isnan(b.hi));
  CHECK(!b.baseline_ok);
  CHECK(best_beats(1e300, NAN));
  best_free(&b);
}

TEST(lower_wins_ties_keep_the_first) {
  best_tracker b;
  best_init(&b);
  CHECK(best_search_ok(&b, 50.0, 1));
  CHECK(!best_search_ok(&b, 60.0, 2)); /* slower */
  CHECK(!best_search_ok(&b, 50.0, 3)); /* a tie keeps trial 1 */
  CHECK_INT(b.number, 1);
  CHECK(best_search_ok(&b, 40.0, 4));
  CHECK_INT(b.number, 4);
  CHECK_NEAR(b.value, 40.0, 0);
  CHECK_INT(b.n_ok, 4);
  best_free(&b);
}

TEST(a_higher_is_better_rate_is_tracked_as_its_cost) {
  /* 250 and 500 samples/s stored as costs 1000/rate: 4 and 2; 500/s wins */
  best_tracker b;
  best_init(&b);
  best_offer(&b, 1000.0 / 250.0, 1);
  CHECK(best_offer(&b, 1000.0 / 500.0, 2));
  CHECK_INT(b.number, 2);
  best_free(&b);
}

TEST(interval_needs_the_baseline_steps) {
  best_tracker b;
  best_init(&b);
  double base[] = {100, 101, 99, 100, 102, 98, 100, 100};
  double fast[] = {50, 51, 49, 50, 50, 52, 48, 50};
  best_baseline(&b, 100.0);
  CHECK(b.baseline_ok);
  CHECK(best_search_ok(&b, 50.0, 1));
  best_interval(&b, fast, 8); /* no baseline steps yet */
  CHECK(isnan(b.lo) && isnan(b.hi));
  best_baseline_steps(&b, base, 8);
  best_baseline_steps(&b, base, 0); /* none: the earlier ones stay */
  CHECK_INT(b.n_base_steps, 8);
  best_interval(&b, fast, 8);
  CHECK(b.lo <= 2.0 && 2.0 <= b.hi);
  CHECK(b.lo > 1.5);
  CHECK(best_offer(&b, 45.0, 2)); /* a new best's interval is its own */
  CHECK(isnan(b.lo) && isnan(b.hi));
  best_free(&b);
}

TEST(restore_from_a_resume) {
  best_tracker b;
  best_init(&b);
  best_restore(&b, 1, 120.0, 3);
  CHECK(b.baseline_ok);
  CHECK_INT(b.n_ok, 3);
  CHECK(best_offer(&b, 90.0, 5));
  CHECK(!best_offer(&b, 95.0, 6));
  CHECK_INT(b.n_ok, 3); /* offered, not counted */
  best_free(&b);
}
