/* Resume as a plan: what a sweep's stored trials say is left to do. Pure functions over the
 * trial records the caller gives, all at once or one at a time (the shape of confirm.c); the
 * orchestrator carries the plan out. */
#ifndef FLAGTUNE_RESUME_H
#define FLAGTUNE_RESUME_H

#include "executor.h"
#include "record.h"

/* One configuration to run again. */
typedef struct {
  char *config_json; /* the plan's own copy */
  int steps_budget;  /* a re-run keeps its rung's step budget (0: the default) */
  trial_role role;   /* ROLE_BASELINE for the baseline, ROLE_RERUN otherwise */
  int rerun_of;      /* the number of the trial it re-runs; 0 for the baseline */
} resume_rerun;

typedef struct {
  int counted;          /* finished trials: they count against the budget */
  int confirm_counted;  /* of which confirmation trials (not search: an extended budget
                         * is searched before anything is confirmed again) */
  int next_number;      /* the number the next trial gets */
  int baseline_ok;      /* a baseline trial ended ok */
  double baseline_ms;   /* its value (the last ok one); NaN when none */
  int64_t baseline_id;  /* the first baseline trial that ended ok (metric.check compares
                         * every trial with its losses); 0 for none */
  int baseline_ended;   /* some baseline trial ended, ok or not */
  int n_ok;             /* ok trials other than the baseline */
  resume_rerun *reruns; /* lost, interrupted or running configurations that no finished
                         * trial holds, each once, in trial order */
  int n_reruns;
  exec_orphan *orphans; /* trials recorded running: what a dead orchestrator may have left */
  int n_orphans;
  trial_record *history; /* every trial but the baseline's, as stored (shallow copies; lost
                          * and running ones too, so the strategy never proposes them again
                          * while their re-run waits): resume_plan_make's only */
  int n_history;         /* how many trials the history holds (resume_plan_history) */
  int cap_reruns, cap_orphans;
  resume_rerun *pending; /* resume_plan_add's unfinished trials, sorted out at the end */
  int n_pending, cap_pending;
  int seen_base;
} resume_plan;

/* Builds the plan from the N records T of one sweep (ordered by number). The history
 * borrows T's strings: keep T until resume_plan_free. */
void resume_plan_make(const trial_record *t, int n, resume_plan *out);
void resume_plan_free(resume_plan *p);

/* The same plan from the trials one at a time (a read that holds no trial): init, add each
 * in number order (the plan copies what it keeps: the unfinished ones), then end. DONE tells
 * whether some finished trial of the sweep holds a configuration (an unfinished one's
 * needs no re-run then). */
void resume_plan_init(resume_plan *p);
void resume_plan_add(resume_plan *p, const trial_record *t);
void resume_plan_end(resume_plan *p, int (*done)(void *ud, const char *config), void *ud);
/* Whether T is in the strategy's history: every trial but the baseline's and minimize's. */
int resume_plan_history(const trial_record *t);

/* The seed a resumed strategy's rng starts from: SEED mixed with the number of trials in
 * its history, so that the strategy goes on where it stood instead of drawing its first
 * samples again (all of them already run). A fixed function: the same stored sweep resumes
 * the same way. Non-negative and below 2^48. */
int64_t resume_seed(int64_t seed, int n_history);

#endif
