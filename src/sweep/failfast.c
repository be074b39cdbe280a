/* Fail fast (failfast.h): the rule that a failed baseline, or first search trials all failing
 * alike, means the rest would fail too. Owns what counts as a failure for it and what is
 * alike; must not stop anything, print or know the sweep (sweep_failfast.c does). */
#include "failfast.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"

int failfast_failed(outcome status) {
  return status != OUTCOME_OK && status != OUTCOME_PRUNED;
}

char *failfast_signature(outcome status, const char *reason) {
  char *sig = xasprintf("%s: %s", outcome_name(status), reason ? reason : "");
  char *w = sig;
  for (const char *p = sig; *p; p++)
    if (*p < '0' || *p > '9') *w++ = *p;
  *w = '\0';
  return sig;
}

failfast_verdict failfast_judge(failfast *f, const failfast_trial *t) {
  if (!outcome_is_final(t->status) || t->status == OUTCOME_LOST) return FAILFAST_GO_ON;
  if (t->baseline) return failfast_failed(t->status) ? FAILFAST_BASELINE : FAILFAST_GO_ON;
  if (!t->search || f->seen >= FAILFAST_N) return FAILFAST_GO_ON;
  char *sig = failfast_failed(t->status) ? failfast_signature(t->status, t->reason) : NULL;
  if (f->seen++ == 0) {
    f->armed = sig != NULL;
    f->first = sig;
    sig = NULL;
  } else if (!sig || !f->first || strcmp(sig, f->first) != 0) {
    f->armed = 0;
  }
  free(sig);
  return f->seen == FAILFAST_N && f->armed ? FAILFAST_ALIKE : FAILFAST_GO_ON;
}

void failfast_free(failfast *f) {
  free(f->first);
  f->first = NULL;
}
