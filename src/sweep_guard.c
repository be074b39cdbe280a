/* What stops a sweep before its budget is spent, apart from the user: a failed baseline or
 * the first search trials all failing alike (fail fast, unless --keep-going), and a
 * SIGINT/SIGTERM that came before the loop could watch for it. Shares sweep_impl.h with the
 * scheduler (sweep.c). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "sweep_impl.h"

/* ---- fail fast ---- */

/* The first search trials that end: when all FAILFAST_N fail the same way (one status, one
 * reason but for its numbers), the next ones would too. */
enum { FAILFAST_N = 5 };

/* Stops the sweep: nothing more starts, running trials end interrupted, and the sweep ends
 * failed with WHY (the advice is printed, not recorded). */
static void stop_early(sweep *sw, const char *why, const char *advice) {
  sweep_fail(sw, why);
  if (advice) diag_note("flagtune: %s", advice);
  for (int i = 0; i < sw->parallel; i++)
    if (sw->slots[i]) trial_stop(sw->slots[i], STOPPED_INTERRUPTED);
}

/* STATUS and REASON with every digit dropped: "crash: exit 3 at 0x7f..." alike. */
static char *failure_signature(outcome status, const char *reason) {
  char *sig = xasprintf("%s: %s", outcome_name(status), reason ? reason : "");
  char *w = sig;
  for (const char *p = sig; *p; p++)
    if (*p < '0' || *p > '9') *w++ = *p;
  *w = '\0';
  return sig;
}

void sweep_fail_fast(sweep *sw, const trial_result *r) {
  const trial_record *t = &r->record;
  if (sw->keep_going || sw->failed || sw->stopping || !outcome_is_final(t->status)) return;
  if (t->status == OUTCOME_LOST) return;
  char *log = xasprintf("%s/trial-%04d.log", sw->log_dir, t->number);
  if ((t->number == 0 || t->role == ROLE_BASELINE) && t->status != OUTCOME_OK) {
    char *why =
        xasprintf("the baseline (trial %d) ended %s: %s (log: %s)", t->number,
                  outcome_name(t->status), r->reason ? r->reason : "no reason recorded", log);
    stop_early(sw, why,
               "stopping: every trial runs the baseline's command, so the rest would fail too. "
               "Fix it and `flagtune run` again, or pass --keep-going to search without a "
               "baseline");
    free(why);
  } else if ((t->role == ROLE_SEARCH || t->role == ROLE_RERUN) && sw->ff_seen < FAILFAST_N) {
    char *sig = t->status == OUTCOME_OK ? NULL : failure_signature(t->status, r->reason);
    if (sw->ff_seen++ == 0) {
      sw->ff_armed = sig != NULL;
      sw->ff_first = sig;
      sig = NULL;
    } else if (!sig || !sw->ff_first || strcmp(sig, sw->ff_first) != 0) {
      sw->ff_armed = 0;
    }
    free(sig);
    if (sw->ff_seen == FAILFAST_N && sw->ff_armed) {
      char *why =
          xasprintf("the first %d trials all ended %s the same way: %s (last log: %s)", FAILFAST_N,
                    outcome_name(t->status), r->reason ? r->reason : "no reason recorded", log);
      stop_early(sw, why,
                 "stopping: the next trials would most likely fail alike. Fix the cause, or "
                 "pass --keep-going to search on");
      free(why);
    }
  }
  free(log);
}

/* A SIGINT/SIGTERM that arrives before the loop watches for them (while the experiment
 * loads, the software probe runs, the sweep row is written) is noted here and acted on as
 * soon as the loop starts: the sweep stops cleanly (recorded interrupted, exit 130) instead
 * of being killed halfway through its first writes, or lost when a shell started flagtune in
 * the background with SIGINT ignored. A second one ends the process at once. */
static volatile sig_atomic_t early_signal;

static void on_early_signal(int sig) {
  if (early_signal) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  early_signal = sig;
}

void sweep_catch_early_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_early_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int sweep_early_signal(void) {
  return early_signal;
}

int sweep_take_early_signal(void) {
  int sig = early_signal;
  early_signal = 0;
  return sig;
}
