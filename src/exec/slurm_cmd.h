/* Slurm's short commands (src/exec/slurm_cmd.c), shared by the Slurm executor (src/exec/slurm.c)
 * and the drain (src/sweep/sweep_drain.c). slurm_run and slurm_reap are public, in slurm.h. */
#ifndef FLAGTUNE_SLURM_CMD_H
#define FLAGTUNE_SLURM_CMD_H

#include <stddef.h>
#include <stdint.h>

#define SLURM_CONTROLLER_WAIT_S 300.0 /* how long a silent controller is waited for */

/* scancel [--signal=SIGNAL] J[.S] (STEP < 0: the whole job); scancel's exit status. */
int slurm_scancel(int64_t job, int step, const char *signal);

/* The first line ARGV (squeue or scontrol) prints, "" when Slurm no longer knows what it
 * asked about (no line, or "Invalid job id specified"), NULL when the controller did not
 * answer within WAIT_S seconds (asked again after 1, 2, 4 ... at most 30 s; WHAT names it
 * in the notes). Caller frees. */
char *slurm_ask(char *const *argv, const char *what, double wait_s);

/* squeue's state of JOB ("RUNNING", "PENDING", ...); "" and NULL as slurm_ask's. */
char *slurm_job_state(int64_t job, double wait_s);

/* Cancels JOB, whose squeue state is STATE, unless it is PENDING (a batch job Slurm requeued)
 * or gone: an allocation of ours that no longer runs, before another is asked for. */
void slurm_cancel_old(int64_t job, const char *state);

/* How many times Slurm has requeued JOB: $SLURM_RESTART_COUNT when it is the job this
 * process runs in, else squeue's RestartCnt; -1 when unknown (gone, or no answer). */
int slurm_restart_count(int64_t job);

/* The seconds JOB has left before its time limit (squeue %L: "1-02:03:04", "59:58"); -1
 * when it has none (UNLIMITED), is gone or the controller did not answer. */
double slurm_time_left(int64_t job);

/* The name of trial NUMBER's step in a job requeued RESTART times: PREFIX-trial-N, and
 * -restart-R after it once R > 0, so a step of one run of a batch job is never taken for
 * another's (step ids restart at 0 with each run). Into BUF. */
void slurm_step_name(char *buf, size_t size, const char *prefix, int number, int restart);

#endif
