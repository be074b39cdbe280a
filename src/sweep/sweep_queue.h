/* The sweep's queue of trials waiting for a slot (the baseline and re-runs first, then the
 * strategy's proposals, the confirmation, minimize's batches) and the failure that ends a
 * sweep: the two things every sweep file may add to, kept apart from the scheduler so that
 * none of them calls back into it. */
#ifndef FLAGTUNE_SWEEP_QUEUE_H
#define FLAGTUNE_SWEEP_QUEUE_H

#include "record.h"
#include "strategy.h"

/* A trial waiting for a slot. */
typedef struct {
  proposal prop;
  trial_role role;
  int rerun_of;
} pending;

typedef struct {
  pending *items; /* in the order they run */
  int n, cap;
} sweep_queue;

/* Queues P (taken, cleared) to run as ROLE. */
void sweep_queue_push(sweep_queue *q, proposal *p, trial_role role, int rerun_of);
/* The first waiting trial, taken off the queue (Q not empty). */
pending sweep_queue_pop(sweep_queue *q);
/* Frees the queue and what waits in it. */
void sweep_queue_free(sweep_queue *q);

/* What ended a sweep before its time: the first reason is kept. */
typedef struct {
  int failed;      /* a store or strategy error ended the sweep */
  int store_fault; /* the database could not be written (disk full, deleted, replaced) */
  char *reason;    /* the first failure's (owned) */
} sweep_failure;

/* Records WHY as the sweep's failure unless one is already recorded; printed now when LOUD
 * (while trials still run; otherwise it reaches the user once, in the error the sweep
 * returns). */
void sweep_failure_set(sweep_failure *f, const char *why, int loud);
void sweep_failure_free(sweep_failure *f);

#endif
