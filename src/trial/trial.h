/* One running trial: its phases (manual PGLE's profile run, then the measured run), the
 * lines it prints (step times, OOM and refused-flag signals, pruning), its row in the store
 * from start to finish, and its outcome. It reports up through the callback it was given, as
 * the executor does; the best value so far is handed in (trial_set_best), so it never reads
 * the sweep. */
#ifndef FLAGTUNE_TRIAL_H
#define FLAGTUNE_TRIAL_H

#include <stdint.h>

#include "classify.h"
#include "executor.h"
#include "experiment.h"
#include "parse.h"
#include "record.h"
#include "store.h"
#include "strategy.h"

typedef struct trial trial;

/* What the trials of one sweep share. Owned by the sweep; outlives every trial. */
typedef struct {
  executor *x;
  store *db;
  const experiment *exp;
  const metric_spec *metric;
  const classify_patterns *patterns;
  int64_t sweep_id;
  const char *log_dir;
  char *const *base_env; /* the environment trials start from (usually environ) */
  /* metric.check: the loss to read (NULL: no check) and the baseline's losses a trial is
   * compared with (NULL until the baseline ended ok; a trial started before is not checked). */
  const metric_spec *check;
  const double *check_ref;
  int n_check_ref;
} trial_ctx;

/* How a trial ended: handed to on_done, valid during the call. */
typedef struct {
  int slot;
  const char *label;
  trial_record record;  /* number, role, status, value, steps, config: what was stored */
  const double *losses; /* metric.check's losses in the order printed (none without a check) */
  int n_losses;
  double wall_s;         /* the measured run's duration */
  double step_ms;        /* its steady step time in wall ms (cost_step_ms); NaN: unknown */
  int spawn_error;       /* the command could not be started */
  const char *store_err; /* storing the outcome failed (the sweep must stop); NULL: stored */
  uint64_t ticket;    /* stored, durable once the store says this ticket is (0: already durable) */
  const char *reason; /* a non-ok trial's stored error, first line (printable); else NULL */
} trial_result;

/* Called once per started trial, after its outcome is stored (under group commit, before it
 * is durable: see ticket). The trial is freed after it returns. */
typedef void (*trial_done_fn)(void *ud, const trial_result *r);

typedef struct {
  int slot, number;
  trial_role role;
  int rerun_of;        /* the trial number this re-runs; 0 for none */
  const char *devices; /* the slot's CUDA_VISIBLE_DEVICES value; NULL: left alone */
} trial_where;

/* Records the trial as running and starts it (its profile run first under manual PGLE).
 * Takes P (cleared). On failure nothing runs, DONE is never called and *err says why (a
 * store error, or a launch the experiment makes impossible). */
int trial_start(const trial_ctx *c, const trial_where *w, proposal *p, trial_done_fn done, void *ud,
                trial **out, char **err);

/* The best value so far, which a search trial is pruned against (NaN: none yet). */
void trial_set_best(trial *t, double best_ms);
/* Stores the step times the measured run printed since the last call, in one transaction
 * (steps stored as they arrive: `query` and `show` see a running trial). Errors are left to
 * the finish, which stores every step again. */
void trial_flush_steps(trial *t);

/* What a running trial shows on the live status area. Strings borrowed from T. */
typedef struct {
  int number;
  trial_role role;
  const char *label, *config_json;
  int steps_budget;
  int n_steps;   /* step times seen so far (of the measured run) */
  int profiling; /* manual PGLE's profile run is running */
  double elapsed_s;
} trial_view;
trial_view trial_get_view(const trial *t);

/* Stops the trial for WHY (kept if it was already stopped for another reason): TERM now,
 * KILL after the grace. */
void trial_stop(trial *t, stop_reason why);
/* Kills the trial at once (a second Ctrl-C), as interrupted unless already stopped. */
void trial_kill(trial *t);

#endif
