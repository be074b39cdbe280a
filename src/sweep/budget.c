/* The sweep's budget (budget.h): trials and time, spent and left. Owns the arithmetic of what
 * counts; must not do I/O, read the clock or know the sweep. */
#include "budget.h"

#include <math.h>
#include <string.h>

void budget_init(budget *b, int trials, int confirm, int parallel, double hours, double now) {
  memset(b, 0, sizeof *b);
  b->trials = trials;
  /* Confirmation takes its trials from the budget, and only when the search keeps at least
   * twice as many: a small budget is better spent searching. */
  b->search = trials;
  if (confirm > 0 && trials - 1 - confirm >= 2 * confirm) b->search = trials - confirm;
  b->max_requeue = BUDGET_MAX_LOSS_EVENTS * (parallel > 1 ? parallel : 1);
  budget_set_hours(b, hours, now);
}

void budget_set_hours(budget *b, double hours, double now) {
  b->deadline = hours > 0 ? now + hours * 3600.0 : 0;
}

int budget_end_by(budget *b, double end) {
  if (b->deadline > 0 && b->deadline <= end) return 0;
  b->deadline = end;
  return 1;
}

int budget_has_room(const budget *b) {
  return b->counted < b->trials;
}

int budget_search_left(const budget *b) {
  int left = b->search - (b->counted - b->confirm_counted);
  return left > 0 ? left : 0;
}

int budget_left(const budget *b) {
  return b->trials - b->counted;
}

int budget_confirms(const budget *b) {
  return b->search < b->trials;
}

void budget_give_back(budget *b, int n) {
  b->search += n;
}

void budget_start(budget *b, int confirm) {
  b->counted++;
  if (confirm) b->confirm_counted++;
}

void budget_uncount(budget *b, int confirm) {
  b->counted--;
  if (confirm) b->confirm_counted--;
}

void budget_end(budget *b) {
  b->done++;
}

int budget_counts(int interrupted, int requeued, int store_err) {
  return !interrupted && !requeued && !store_err;
}

int budget_may_requeue(budget *b, int *first) {
  *first = 0;
  if (b->requeued < b->max_requeue) return 1;
  if (b->requeued++ == b->max_requeue) *first = 1;
  return 0;
}

void budget_requeued(budget *b) {
  b->requeued++;
}

void budget_lost(budget *b) {
  b->lost_left++;
}

void budget_resume(budget *b, int counted, int confirm_counted) {
  b->counted = counted;
  b->confirm_counted = confirm_counted;
  b->done = counted; /* nothing runs yet: every counted trial has ended */
}

void budget_batch(budget *b, int counted, int queued) {
  b->counted = counted;
  b->trials = counted + queued;
}

double budget_time_left(const budget *b, double now) {
  if (b->deadline <= 0) return -1;
  double left = b->deadline - now;
  return left > 0 ? left : 0;
}

void budget_deadline_reached(budget *b) {
  b->deadline_hit = 1;
}

int budget_deadline_hit(const budget *b) {
  return b->deadline_hit;
}

int budget_fits(const budget *b, double now, double predicted_s) {
  if (b->deadline <= 0) return 1;
  double left = b->deadline - now;
  if (left <= 0) return 0;
  if (isnan(predicted_s)) return 1; /* the first trial always starts */
  return predicted_s < left;
}

int budget_cut_by_time(const budget *b, int exhausted) {
  return b->deadline > 0 && b->counted < b->trials && !exhausted;
}

int budget_done_shown(const budget *b) {
  return b->done < b->trials ? b->done : b->trials;
}
