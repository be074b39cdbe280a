/* The executor: how one trial's process is launched, watched and stopped.
 *
 * This is the one interface a second executor (Slurm: srun steps inside an allocation)
 * implements; sweep.c only talks to an exec_ops table. exec.c is the local executor on
 * libuv: each trial leads its own process group; stdout and stderr are read line by line
 * with bounded memory; a timeout sends SIGTERM to the group and SIGKILL after a grace. */
#ifndef FLAGTUNE_EXEC_H
#define FLAGTUNE_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct exec_trial exec_trial;

enum { EXEC_STDOUT = 1, EXEC_STDERR = 2 };

/* Why the executor (or its user) stopped a trial. */
typedef enum {
  EXEC_STOP_NONE = 0,
  EXEC_STOP_TIMEOUT,     /* the executor's own timer fired */
  EXEC_STOP_REQUESTED,   /* exec_stop() was called (OOM seen, pruned, interrupted) */
} exec_stop;

typedef struct {
  int64_t exit_status;  /* exit code when term_signal == 0 */
  int term_signal;      /* signal that ended the process, 0 if it exited */
  exec_stop stopped;    /* whether and why it was stopped */
  double wall_s;        /* spawn to exit */
  int spawn_error;      /* non-zero (a uv error) when the command could not be started;
                         * exit_status is then 127 and no line was delivered */
  char spawn_message[256];
} exec_result;

typedef struct {
  /* One line of output. STREAM is EXEC_STDOUT or EXEC_STDERR. It may call exec_stop_trial
   * or exec_kill_trial (an OOM line, say). */
  void (*on_line)(void *ud, int stream, const char *line, size_t len, int truncated);
  /* Called exactly once, after the process has exited, both pipes reached EOF (or were
   * closed after a drain delay) and every timer is closed. The trial is freed after this
   * returns; do not touch it again. */
  void (*on_exit)(void *ud, const exec_result *r);
} exec_callbacks;

typedef struct {
  char *const *argv;   /* argv[0] is searched in PATH */
  char *const *envp;   /* complete environment, NULL-terminated */
  const char *cwd;     /* NULL: inherit */
  double timeout_s;    /* <= 0: none */
  double grace_s;      /* SIGTERM to SIGKILL delay; <= 0 means 5 s */
  size_t max_line;     /* longest line delivered whole; 0 means 64 KiB */
  const char *log_path;   /* raw stdout+stderr copy; NULL: none */
  int64_t log_limit;      /* bytes kept in the log; <= 0 means 64 MiB */
  /* The flagtune binary to run the command under (`SUPERVISOR __supervise --parent PID
   * --grace S -- ARGV...`, see supervise.h), so the trial dies with the orchestrator even
   * on SIGKILL; "/proc/self/exe" in flagtune itself. NULL: run ARGV directly. The result
   * reads the same either way: the supervisor mirrors the command's exit code or signal,
   * and its "command not found" / "permission denied" report becomes spawn_error. */
  const char *supervisor;
} exec_spec;

/* Starts a trial. On success *out is the running trial and on_exit will be called.
 * On a spawn failure (command not found, not executable) the call still succeeds and
 * on_exit reports spawn_error on the next loop turn, so callers handle one path.
 * Returns a negative code only for invalid arguments or when the log cannot be opened. */
int exec_start(uv_loop_t *loop, const exec_spec *spec, const exec_callbacks *cb, void *ud,
               exec_trial **out, char **err);

/* Asks a running trial to stop: SIGTERM to its process group now, SIGKILL after the grace.
 * Idempotent. The trial still ends through on_exit with stopped = EXEC_STOP_REQUESTED. */
void exec_stop_trial(exec_trial *t);
/* SIGKILL to the whole group at once (second Ctrl-C). */
void exec_kill_trial(exec_trial *t);
/* The process id (also its process group id); 0 if it never started. */
int exec_pid(const exec_trial *t);

#endif
