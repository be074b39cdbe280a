/* The orchestrator: one sweep on one libuv loop. Asks the strategy, starts each trial
 * (trial.c) in a free slot, tells the strategy how it ended, and stops on budget, deadline,
 * exhaustion or a signal; resume carries out resume.c's plan. */
#ifndef FLAGTUNE_SWEEP_H
#define FLAGTUNE_SWEEP_H

#include <stdint.h>

typedef struct {
  const char *db_path;
  int parallel; /* 0: the experiment's */
  int trials;   /* 0: the experiment's budget.trials */
  double hours; /* < 0: the experiment's budget.hours */
  int64_t seed;
  int has_seed;
  const char *name; /* NULL: the experiment's name */
  int force;        /* resume: take over a sweep whose row names a holder this host cannot
                     * check (another host, or a live process that holds no lock) */
  /* Called once the sweep is claimed and its log directory known, before the first trial
   * (run --detach moves its output there and lets the waiting parent go). May be NULL. */
  void (*on_started)(int64_t sweep_id, const char *log_dir, void *ud);
  void *ud;
  const char *executor; /* "local" or "slurm" (--executor); NULL: the experiment's */
  int keep_going;       /* --keep-going: a failed baseline, or first trials that all fail
                         * the same way, do not stop the sweep */
  const char *notify;   /* --notify CMD: a shell command run when the sweep ends */
  const char *sample;   /* check --sample LOG: what the metric reads from it (sample.c) */
} sweep_opts;

/* Runs a new sweep of the experiment at PATH. Validates everything (and asks the strategy
 * for its first proposals) before the first database row is written. *sweep_id receives
 * the new sweep's id once created (0 before). Returns FT_OK, FT_EINPUT (nothing written),
 * FT_EINTR (interrupted: resumable), or another code when the sweep failed. *unhealthy is
 * set when the baseline never ended ok or no other trial did. */
int sweep_run(const char *path, const sweep_opts *o, int64_t *sweep_id, int *unhealthy, char **err);

/* Continues the sweep REF (id or name) to its budget: claims it (one owner per sweep; see
 * store_sweep_claim), then running trials become lost, lost and interrupted trials are
 * re-run, the strategy is rebuilt from the stored history and goes on where it stood. Runs
 * in the directory `run` ran in, with the command as it resolved there. */
int sweep_resume(const char *ref, const sweep_opts *o, int64_t *sweep_id, int *unhealthy,
                 char **err);

/* Validates the experiment at PATH as `run` would (including creating the strategy and
 * asking it for its first proposals), writing nothing. On success *summary holds a
 * one-line description. */
int sweep_check(const char *path, const sweep_opts *o, char **summary, char **err);

#endif
