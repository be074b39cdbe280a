/* The sweep's queue and its failure record (sweep_queue.h). Owns their memory; must not
 * schedule, start a trial or call back into the scheduler. */
#include "sweep_queue.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"

void sweep_queue_push(sweep_queue *q, proposal *p, trial_role role, int rerun_of) {
  if (q->n == q->cap) {
    q->cap = q->cap ? q->cap * 2 : 8;
    q->items = xrealloc(q->items, sizeof(pending) * (size_t)q->cap);
  }
  q->items[q->n++] = (pending){.prop = *p, .role = role, .rerun_of = rerun_of};
  memset(p, 0, sizeof *p);
}

pending sweep_queue_pop(sweep_queue *q) {
  pending first = q->items[0];
  memmove(q->items, q->items + 1, sizeof(pending) * (size_t)(q->n - 1));
  q->n--;
  return first;
}

void sweep_queue_free(sweep_queue *q) {
  for (int i = 0; i < q->n; i++) proposal_clear(&q->items[i].prop);
  free(q->items);
  memset(q, 0, sizeof *q);
}

void sweep_failure_set(sweep_failure *f, const char *why, int loud) {
  if (f->failed) return;
  f->failed = 1;
  f->reason = xstrdup(why);
  if (loud) diag_error(why);
}

void sweep_failure_free(sweep_failure *f) {
  free(f->reason);
  f->reason = NULL;
}
