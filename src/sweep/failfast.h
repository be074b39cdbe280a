/* Fail fast as a rule: from the outcomes of a sweep's trials so far, whether the rest would
 * fail too. Pure: no I/O, no sweep; the caller stops the sweep and says why. */
#ifndef FLAGTUNE_FAILFAST_H
#define FLAGTUNE_FAILFAST_H

#include "classify.h"

/* The first search trials that end: when all FAILFAST_N fail the same way (one status, one
 * reason but for its numbers), the next ones would too. */
enum { FAILFAST_N = 5 };

typedef enum {
  FAILFAST_GO_ON = 0,
  FAILFAST_BASELINE, /* the baseline failed: every trial runs its command */
  FAILFAST_ALIKE,    /* the first FAILFAST_N search trials failed alike */
} failfast_verdict;

/* What the rule remembers of the outcomes so far. Zero it to start; failfast_free after. */
typedef struct {
  int seen;    /* search trials ended, up to FAILFAST_N */
  int armed;   /* 1 while every one so far failed the same way */
  char *first; /* the first one's signature (failfast_signature) */
} failfast;

/* One ended trial as the rule reads it. */
typedef struct {
  outcome status;
  int baseline; /* the baseline (trial 0, or a re-run of it) */
  int search;   /* a search trial or a re-run of one (not confirmation, not minimize) */
  const char *reason;
} failfast_trial;

/* Whether a trial that ended STATUS failed: ok ran fine, and so did pruned (stopped because
 * it was slower than the best, after running fine). */
int failfast_failed(outcome status);
/* Reads T and says whether the sweep should stop. Trials that are not final (running,
 * interrupted) and lost ones (the executor's fault) are not read. */
failfast_verdict failfast_judge(failfast *f, const failfast_trial *t);
/* STATUS and REASON with every digit dropped: "crash: exit 3 at 0x7f..." alike. Caller
 * frees. */
char *failfast_signature(outcome status, const char *reason);
void failfast_free(failfast *f);

#endif
