/* Fail fast, told: reads each ended trial into the rule (failfast.c) and words why the sweep
 * stops when the rule says the rest would fail too (a failed baseline, the first search
 * trials all failing alike). Guards the night's budget from trials that cannot tell anything.
 * Receives only the rule's state and the log directory; the scheduler (sweep.c) stops the
 * sweep, unless --keep-going. */
#include "sweep_failfast.h"

#include <stdlib.h>

#include "diag.h"

char *sweep_failfast_read(failfast *f, const trial_result *r, const char *log_dir,
                          const char **advice) {
  const trial_record *t = &r->record;
  failfast_trial ft = {.status = t->status,
                       .baseline = t->number == 0 || t->role == ROLE_BASELINE,
                       .search = t->role == ROLE_SEARCH || t->role == ROLE_RERUN,
                       .reason = r->reason};
  failfast_verdict v = failfast_judge(f, &ft);
  *advice = NULL;
  if (v == FAILFAST_GO_ON) return NULL;
  const char *reason = r->reason ? r->reason : "no reason recorded";
  char *log = xasprintf("%s/trial-%04d.log", log_dir, t->number);
  char *why;
  if (v == FAILFAST_BASELINE) {
    why = xasprintf("the baseline (trial %d) ended %s: %s (log: %s)", t->number,
                    outcome_name(t->status), reason, log);
    *advice =
        "stopping: every trial runs the baseline's command, so the rest would fail too. Fix it "
        "and `flagtune run` again, or pass --keep-going to search without a baseline";
  } else {
    why = xasprintf("the first %d trials all ended %s the same way: %s (last log: %s)", FAILFAST_N,
                    outcome_name(t->status), reason, log);
    *advice =
        "stopping: the next trials would most likely fail alike. Fix the cause, or pass "
        "--keep-going to search on";
  }
  free(log);
  return why;
}
