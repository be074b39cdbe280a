/* The sweep's inside, shared by sweep.c (the scheduler), sweep_start.c (how a sweep starts:
 * run and check), sweep_view.c (what it tells people), sweep_confirm.c (the confirmation),
 * sweep_resume.c (resume), sweep_minimize.c (minimize) and sweep_drain.c (the drain before a
 * Slurm job's end), and by nothing else. Its parts
 * with a module of their own: the budget (budget.h), the best so far (best.h), fail fast
 * (failfast.h), the queue and the failure record (sweep_queue.h). Helper files call
 * sweep.c's functions only one way: sweep.c never calls sweep_start, sweep_resume or
 * sweep_minimize, and sweep_view and sweep_confirm never call sweep.c. */
#ifndef FLAGTUNE_SWEEP_STATE_H
#define FLAGTUNE_SWEEP_STATE_H

#include <uv.h>

#include "best.h"
#include "budget.h"
#include "classify.h"
#include "cost.h"
#include "executor.h"
#include "experiment.h"
#include "failfast.h"
#include "lhost.h"
#include "parse.h"
#include "progress.h"
#include "record.h"
#include "store.h"
#include "strategy.h"
#include "sweep.h"
#include "sweep_queue.h"
#include "trial.h"

/* A finished trial's line waiting until its result is durable (group commit, sweep_view.c). */
typedef struct {
  progress_line line; /* label and reason owned */
  uint64_t ticket;
} sweep_held;

typedef struct sweep {
  uv_loop_t loop;
  uv_signal_t sigint, sigterm, sighup;
  lhost *host;
  experiment *exp;
  strategy *strat;
  store *db;
  executor *x;
  trial_ctx tctx; /* what every trial of the sweep shares */
  int64_t id;
  int64_t seed;
  int parallel;
  budget bud; /* trials and time: spent, left (budget.c) */
  int next_number;
  trial **slots;
  int n_running;
  sweep_queue queue; /* trials waiting for a slot (sweep_queue.c) */
  int stopping;      /* 1: first signal seen, 2: second */
  int strategy_exhausted;
  sweep_failure fail; /* what ended it early (sweep_queue.c) */
  char *log_dir;
  char **devices; /* each slot's CUDA_VISIBLE_DEVICES (NULL entries: left alone) */
  metric_spec metric;
  metric_spec check; /* metric.check's loss */
  double *check_ref; /* the baseline's losses every trial is compared with */
  int n_check_ref;
  int check_waits; /* metric.check: trials wait for the baseline's losses */
  classify_patterns patterns;
  best_tracker best;   /* the baseline's and the best search trial's values (best.c) */
  int confirm_planned; /* the confirmation trials are queued */
  uv_timer_t deadline_timer;
  cost_model cost; /* of finished trials, for "can the next one finish in time?" */
  char *hardware;  /* resolved fingerprint */
  /* `flagtune minimize` (sweep_minimize.c): when set, the sweep runs only what this queues
   * (called whenever the queue is empty and no trial runs; it queues nothing to end), never
   * asks the strategy, confirms nothing and leaves the sweep row's status to its caller. */
  void (*refill)(struct sweep *sw);
  void *refill_ud;
  int resumed; /* a resume (it may keep a log directory of the older layout) */
  /* The live view (progress.c): how it is shown, what it counts, the tick that redraws it
   * and stores running trials' steps. */
  progress_mode view;
  uv_timer_t tick;
  int tick_on;
  int counts[OUTCOME_COUNT];
  double winner_ms; /* the confirmed winner's pooled value (NaN: none) */
  double winner_base_ms;
  /* Fail fast: a failed baseline stops the sweep; so do first search trials that all fail
   * the same way (unless keep_going). */
  int keep_going;
  failfast ff; /* what the rule has read of the trials so far (failfast.c) */
  const char *notify;
  char *db_path;   /* as sweep_begin was given it */
  char **defaults; /* label tokens of parameters at their catalog default */
  int n_defaults;
  /* The live view's short names (sweep_view.c, lua/progress.lua): label names[i] shown as
   * names[n_names + i] where a line is too narrow; loaded at the first line (NULL before). */
  char **names;
  int n_names;
  /* Group commit (store_durable_async): the worker's descriptor watched, the highest ticket
   * durable, and the lines of trials stored but not yet durable, in the order they ended. */
  uv_poll_t durable_poll;
  int durable_on; /* the store hands finishes to its worker: drain it at the end */
  int durable_poll_on;
  uint64_t durable_done;
  sweep_held *held;
  int n_held, cap_held;
} sweep;

/* Frees what sweep_view.c keeps in SW (the short names). */
void sweep_view_free(sweep *sw);

/* A resume's history for sweep_prepare: FEED gives the strategy the sweep's trials
 * (strategy_add, in parts) and sets *N to how many (the resumed seed's, resume_seed). */
typedef struct {
  int (*feed)(void *ud, strategy *s, int *n, char **err);
  void *ud;
} sweep_history;

/* Loads the experiment and creates the strategy (replaying HIST, NULL for a new sweep):
 * everything that can be the user's fault. */
int sweep_prepare(sweep *sw, const char *path, const char *text, const sweep_opts *o,
                  const sweep_history *hist, char **err);
/* The command-line overrides a resume replays, as JSON. Caller frees. */
char *sweep_options_json(const sweep *sw, const sweep_opts *o);
/* Runs the loop until every trial has ended, then records how the sweep ended. */
int sweep_drive(sweep *sw, char **err);
void sweep_free(sweep *sw);
/* Asks the strategy for up to N proposals and queues them (fails the sweep on its error). */
void sweep_ask(sweep *sw, int n);
/* Monotonic seconds. */
static inline double sweep_now_s(void) {
  return (double)uv_hrtime() / 1e9;
}
/* Ends the sweep failed with WHY (the first reason is kept; told at once only while trials
 * still run, since the sweep ends when they have). */
static inline void sweep_fail(sweep *sw, const char *why) {
  sweep_failure_set(&sw->fail, why, sw->n_running > 0);
}

/* sweep_start.c: */
/* Marks the sweep held by this process and starts its loop and executor. */
int sweep_begin(sweep *sw, const char *db_path, const sweep_opts *o, int64_t *sweep_id, char **err);

/* sweep_drain.c: SIGUSR1 drains the sweep; under Slurm the allocation's end is a deadline.
 * Watch before the loop runs; close with the sweep's other handles (it may mark the sweep
 * stopping: drained, resumable). */
void sweep_drain_watch(sweep *sw);
void sweep_drain_close(sweep *sw);

/* sweep_view.c: */
/* Redraws the status area (a terminal only). */
void sweep_view_status(sweep *sw);
/* Prints the line of a finished trial R, then the status area; under group commit, once its
 * result is durable: held until sweep_view_release says so. */
void sweep_report_progress(sweep *sw, const trial_result *r);
/* Prints the held lines whose tickets are durable (up to sw->durable_done); when FAILED (the
 * store's worker failed: no later ticket will be), every other one too, as not stored (and
 * no longer counted as its outcome). */
void sweep_view_release(sweep *sw, int failed);
/* Stops printing when stderr went away (EIO, EPIPE); the sweep runs on. */
void sweep_quiet_if_unwritable(void);
/* Runs the notify hooks (the experiment's on_done, then --notify) with the sweep's end. */
void sweep_notify(sweep *sw, const char *status, const char *why);

/* sweep_confirm.c: */
/* Queues the confirmation once the search budget is spent and every search trial has
 * ended, or gives the trials it does not need back to the search. */
void sweep_plan_confirmation(sweep *sw);
/* Records the pooled winner of the confirmation. */
void sweep_choose_winner(sweep *sw);
/* Says, before the first trial, when confirmation will not run: the budget is too small. */
void sweep_note_confirmation(const experiment *e, const budget *b, int planned);

/* sweep_resume.c, for resume and minimize, which run an existing sweep again: */
/* Moves into the directory `run` ran in (the experiment's relative paths, the command and the
 * trials' working directory resolve as they did then). */
int sweep_enter_workdir(const store_sweep *s, char **err);
/* Makes a relative FLAGTUNE_LOG_DIR absolute (against CWD) before the directory changes. */
void sweep_pin_log_dir(const char *cwd);

#endif
