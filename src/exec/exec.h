/* The local executor: the executor interface (executor.h) for trials that run as child
 * processes of this machine, on the orchestrator's libuv loop. Each trial leads its own
 * process group (under `flagtune __supervise`, so it dies with the orchestrator); stdout and
 * stderr are read line by line with bounded memory; a timeout sends SIGTERM to the group and
 * SIGKILL after a grace. The exec_* functions are the same backend without the table, for
 * tests. */
#ifndef FLAGTUNE_EXEC_H
#define FLAGTUNE_EXEC_H

#include "executor.h"

/* The dedicated supervisor binary, built from src/exec/supervise.c alone (libc only, static where
 * the toolchain allows), looked for beside the flagtune binary. */
#define EXEC_SUPERVISOR_BIN "flagtune-supervise"

/* The program to run trials under for SUPERVISOR (a flagtune binary, "/proc/self/exe" for
 * this one): EXEC_SUPERVISOR_BIN in the directory SUPERVISOR really lives in (symlinks
 * resolved) when it is there and executable, since it starts in a fraction of the full
 * program's time (docs/COST.md); otherwise SUPERVISOR itself. Both take the same argv
 * (`PROGRAM __supervise ...`). NULL for NULL; the caller frees the result. */
char *exec_supervisor_path(const char *supervisor);

/* The local executor on LOOP. Trials run under exec_supervisor_path(SUPERVISOR) when their
 * spec names none; NULL runs them directly. Free with executor_free. */
executor *exec_local_new(uv_loop_t *loop, const char *supervisor);

/* Starts a trial on LOOP (see executor_start); SPEC's supervisor is used as given. */
int exec_start(uv_loop_t *loop, const exec_spec *spec, const exec_callbacks *cb, void *ud,
               exec_trial **out, char **err);

/* Asks a running trial to stop: SIGTERM to its process group now, SIGKILL after the grace.
 * Idempotent. The trial still ends through on_exit with stopped = EXEC_STOP_REQUESTED. */
void exec_stop_trial(exec_trial *t);
/* SIGKILL to the whole group at once (second Ctrl-C). */
void exec_kill_trial(exec_trial *t);
/* The process id (also its process group id); 0 if it never started. */
int exec_pid(const exec_trial *t);

/* Kills the process group of each orphan of sweep SWEEP_ID that /proc proves is that trial
 * (its leader, or another process of its group, has FLAGTUNE_SWEEP and FLAGTUNE_TRIAL in its
 * environment). Returns how many it killed. */
int exec_reap(int64_t sweep_id, const exec_orphan *o, int n);

#endif
