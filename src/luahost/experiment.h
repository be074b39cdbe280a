/* The experiment file: loaded and validated whole (by lua/dsl.lua) before anything runs,
 * then copied into a C struct the orchestrator reads. The search space and strategy spec
 * stay in Lua, held by a registry ref. */
#ifndef FLAGTUNE_EXPERIMENT_H
#define FLAGTUNE_EXPERIMENT_H

#include <stdint.h>

#include "lhost.h"
#include "parse.h"
#include "stats.h"

typedef struct {
  lhost *host;  /* not owned */
  int spec_ref; /* the validated experiment table (lua/dsl.lua's shape) */

  char *path;    /* as the user gave it; used as the chunk name */
  char *text;    /* the file's bytes */
  char hash[17]; /* FNV-1a 64 of text, hex */

  char *name, *model, *hardware; /* hardware may be "auto" until resolved */
  char **command;                /* NULL-terminated argv template; "{steps}" is substituted */
  char *workdir;    /* where trials run: `workdir` key, default the current directory */
  int command_line; /* the `command` key's line in the file (for preflight's messages) */
  char **on_done;   /* on_done = { "cmd", ... }: run when the sweep ends; NULL: none */
  int on_done_line;
  int executor_line; /* the `executor` key's line (for the Slurm preflight's messages) */

  metric_kind metric;
  char *metric_field;   /* json = ... */
  char *metric_pattern; /* pattern = ... */
  int metric_skip;      /* steps dropped before reducing (warm-up, compile) */
  reduce_kind metric_reduce;
  double metric_scale; /* unit of the read value in ms: 1 for ms, 1000 for s */
  int metric_higher;   /* metric.better = "higher": a rate, stored as its cost (parse_step) */
  int min_steps;       /* valid steps needed for ok, default skip + 1 */
  /* metric.check: the loss each trial prints, compared with the baseline's at the same
   * steps; outside check_tolerance (relative) and check_abs (absolute) the trial is wrong. */
  int check_on;
  metric_kind check_kind;
  char *check_field;   /* json = ... */
  char *check_pattern; /* pattern = ... */
  double check_tolerance;
  double check_abs;

  int budget_trials;   /* including the baseline */
  double budget_hours; /* 0: none */
  int budget_steps;    /* default step budget per trial ({steps}) */
  int parallel;
  int gpus_per_trial; /* 0: CUDA_VISIBLE_DEVICES left alone */
  double timeout_s;   /* per trial, 0: none */
  double grace_s;     /* SIGTERM -> SIGKILL */
  int64_t seed;
  int has_seed;

  char **oom_patterns; /* extra substrings meaning OOM */
  int n_oom_patterns;
  char **invalid_patterns; /* extra substrings meaning the configuration was refused */
  int n_invalid_patterns;

  char **warnings; /* "path:line: warning: ..." from the catalog checks, NULL-terminated;
                    * already printed on stderr by experiment_load */
  int n_warnings;

  char *strategy_name; /* "random", "grid", "tpe", or a file path */
  char *strategy_desc; /* e.g. "tpe{startup=10}" for display */
  int n_params;        /* searched flags + vars */
  double space_size;   /* number of configurations (may be huge) */

  /* Confirmation: the top candidates and the baseline re-measured before the sweep ends,
   * counted in budget.trials. confirm_top = 0 turns it off. */
  int confirm_top;
  int confirm_repeats;
  /* Pruning: stop a trial whose reduced step time, after prune_min_steps steps past the skip,
   * is more than prune_margin slower than the best so far. prune_margin <= 0 turns it off. */
  double prune_margin;
  int prune_min_steps;
  int warm_start; /* seed the strategy with earlier sweeps of this model and hardware */
  /* Manual PGLE (pgle = { mode = "manual" }): each trial first runs pgle_command (NULL-terminated
   * argv template, {steps} = pgle_steps) as a profile phase. */
  int pgle_manual;
  int pgle_steps;
  char **pgle_command;
  char *software_probe;   /* shell command printing "JAX JAXLIB" versions; NULL: the default */
  int software_probe_off; /* software_probe = false */
  /* executor = "local" | "slurm" | slurm { ... } (docs/SLURM.md): where trials run. */
  char *executor;                                     /* "local" or "slurm" */
  char *slurm_partition, *slurm_account, *slurm_time; /* NULL: the site's defaults */
  char *slurm_mode; /* "allocation" (steps in one allocation) or "job" */
  int slurm_nodes;  /* nodes per trial */
  int slurm_tasks_per_node;
  int slurm_gpus_per_trial; /* --gres=gpu:N per node; defaults to gpus_per_trial */
  char **slurm_extra;       /* NULL-terminated salloc (or per-trial srun) options */
  int slurm_cpus_per_trial; /* CPUs per node of a trial; 0: from --cpus-per-task in extra */
  char **slurm_srun;        /* NULL-terminated options for every step's srun */
  int slurm_chain;          /* submit the batch job's continuation when drained */
} experiment;

/* Loads PATH (or TEXT when not NULL, named PATH) and validates everything: keys, types,
 * units, space constructors, strategy spec. Errors are "path:line: message" with a
 * "did you mean" where one helps; code FT_EINPUT. */
int experiment_load(lhost *h, const char *path, const char *text, experiment **out, char **err);
/* experiment_load that also accepts, as the catalog's, the N flags IMPORTED names (an
 * imported jaxlib list, `flagtune flags import`). */
int experiment_load_with(lhost *h, const char *path, const char *text, const char *const *imported,
                         int n, experiment **out, char **err);
/* experiment_load_with every flag the imported jaxlib lists of the database at DB_PATH hold.
 * Reads the database only if it already exists. */
int experiment_load_for_db(lhost *h, const char *path, const char *text, const char *db_path,
                           experiment **out, char **err);
void experiment_free(experiment *e);

/* Replaces budget.trials and budget.hours (command-line overrides) in the struct; the
 * validated table keeps the file's. The strategy is handed the struct's (strategy_new). */
void experiment_override_budget(experiment *e, int trials, double hours);

/* The metric spec for parse_step(); pattern metrics match through Lua's string.match.
 * Valid while E lives. */
metric_spec experiment_metric(experiment *e);
/* The same for metric.check's loss (any finite value is read); kind JSON with no field when
 * the experiment has no check. */
metric_spec experiment_check_metric(experiment *e);

#endif
