/* The Slurm executor: the executor interface (executor.h) for trials that run as job steps
 * (`srun --jobid=J --exact ...`) inside one allocation flagtune holds for the night, or as
 * one job each where a site forbids long allocations. The srun process is a local child run
 * through the local backend (exec.c), so its stdout and stderr are the step's output: lines,
 * log and timers behave as for local trials. See docs/SLURM.md. */
#ifndef FLAGTUNE_SLURM_H
#define FLAGTUNE_SLURM_H

#include <stdint.h>

#include "executor.h"

/* Told when a trial's step is known (srun's "launching StepId=J.S on host NODE"), so the
 * caller can store it with the trial (NUMBER is the trial's FLAGTUNE_TRIAL). */
typedef void (*slurm_step_fn)(void *ud, int number, int64_t job, int step, const char *node);

typedef struct {
  const char *partition, *account; /* NULL: the site's defaults */
  const char *time;                /* the allocation's (or each job's) --time; NULL: default */
  int nodes;                       /* nodes per trial; <= 1: one */
  int tasks_per_node;              /* tasks per node of a trial; <= 0: one */
  int gpus_per_trial;              /* --gres=gpu:N per node of a trial; 0: --gres=none */
  int parallel;                    /* trials at once: sizes the allocation */
  int job_per_trial;               /* 1: each trial is its own job (no allocation held) */
  char *const *extra;              /* NULL-terminated options for salloc (or each srun job) */
  int cpus_per_trial;              /* CPUs per node of a trial; 0: --cpus-per-task of extra,
                                      else $SLURM_CPUS_PER_TASK inside an allocation */
  char *const *srun;               /* NULL-terminated options for every step's srun */
  int64_t job;                     /* an allocation to reuse if it still runs (resume); 0: none */
  const char *job_name;            /* the allocation's name; NULL: "flagtune" */
  double controller_wait_s;        /* how long a failing squeue is asked again; 0: 300 s */
  const char *supervisor;          /* runs each srun (see exec_spec.supervisor); NULL: none */
  slurm_step_fn on_step;
  void *ud;
} slurm_opts;

/* The Slurm executor on LOOP. Unless O->job_per_trial, it holds an allocation: the one this
 * process runs inside ($SLURM_JOB_ID, never cancelled by us), else O->job when it still
 * runs, else a new one (`salloc --no-shell`, which waits until granted); the last two are
 * cancelled by executor_free. FT_ESYS with *err when none can be had. */
int slurm_executor_new(uv_loop_t *loop, const slurm_opts *o, executor **out, char **err);

/* The --cpus-per-task every step of O asks for (and the allocation, with cpus_per_trial):
 * cpus_per_trial / tasks_per_node; else the --cpus-per-task (-c) of O->extra, which the
 * allocation got but which steps do not inherit; else $SLURM_CPUS_PER_TASK when flagtune runs
 * inside an allocation; else 0 (Slurm's default, one CPU per task). */
int slurm_cpus_per_task(const slurm_opts *o);

/* The allocation X holds (0: none, one job per trial). */
int64_t slurm_executor_job(const executor *x);

/* `scancel J.S` for each of the N orphans of sweep SWEEP_ID that ran as a Slurm step
 * (slurm_job > 0): the steps a dead orchestrator left. Step ids restart when Slurm requeues a
 * batch job, so J.S is cancelled only while `squeue -s J.S` names it this sweep's trial in
 * the job's current run (flagtune-sweep-SWEEP_ID-trial-N, -restart-R after it once the job
 * was requeued R times; flagtune-trial-N in a first run). Returns how many scancel accepted. */
int slurm_reap(int64_t sweep_id, const exec_orphan *o, int n);

/* Runs ARGV (searched in PATH) to its end; *out (when OUT is non-NULL) receives its stdout
 * and stderr together, NUL-terminated, at most 64 KiB. Returns the exit status, or -1 when
 * it could not run or was killed. For short Slurm commands (salloc, scancel, squeue). */
int slurm_run(char *const *argv, char **out);

/* Before the sweep (src/exec/slurm_check.c): srun, and salloc when flagtune will ask for the
 * allocation, are on $PATH (unless STRICT, a missing one is a warning: `check` off the
 * cluster); O->partition is known to sinfo when sinfo is there (a failing sinfo is a
 * warning), and its nodes (`sinfo -h -p P -o '%G %l %D'`) have O->gpus_per_trial GPUs, O->nodes
 * of them, and a time limit O->time fits in. FT_EINPUT with *err "PATH:LINE: ..." otherwise. */
int slurm_preflight(const slurm_opts *o, const char *path, int line, int strict, char **err);

/* Seconds of a Slurm time (--time, sinfo's %l), as Slurm's time_str2secs reads it: MM,
 * MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; -1 for "infinite", "UNLIMITED" (any case) and
 * "-1"; -2 for anything else. */
long slurm_time_seconds(const char *s);

/* "NFS", "Lustre" or "GPFS" when DB_PATH (or its directory, while it does not exist) is on
 * one of them (statfs f_type), else NULL. */
const char *slurm_network_fs(const char *db_path);

#endif
