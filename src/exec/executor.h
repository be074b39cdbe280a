/* The executor interface: how one trial's process is started, watched and stopped,
 * whatever runs it. The orchestrator holds an executor and talks only to the executor_*
 * calls below; a backend fills an executor_ops table (neovim's event/proc.c is the generic
 * life of a process, libuv_proc.c one backend: the same split).
 *
 * Backends: exec.c, the local one (children on this machine's libuv loop); slurm.c, trials
 * as srun job steps inside one allocation (it wraps the local one: srun is a local child
 * whose output is the step's). Nothing above them changes.
 *
 * Every backend keeps the same promises: lines arrive whole and bounded, in order per
 * stream; on_exit is called exactly once per started trial, after every line, and the trial
 * handle is freed after it returns; a command that cannot be started still ends through
 * on_exit (spawn_error), on a later loop turn; stop is idempotent (TERM, then KILL after
 * the grace), kill is at once. */
#ifndef FLAGTUNE_EXECUTOR_H
#define FLAGTUNE_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct executor executor;
typedef struct exec_trial exec_trial; /* a backend's running trial */

enum { EXEC_STDOUT = 1, EXEC_STDERR = 2 };

/* Why the executor (or its user) stopped a trial. */
typedef enum {
  EXEC_STOP_NONE = 0,
  EXEC_STOP_TIMEOUT,   /* the executor's own timer fired */
  EXEC_STOP_REQUESTED, /* executor_stop() or executor_kill() was called */
} exec_stop;

typedef struct {
  int64_t exit_status; /* exit code when term_signal == 0 */
  int term_signal;     /* signal that ended the process, 0 if it exited */
  exec_stop stopped;   /* whether and why it was stopped */
  double wall_s;       /* start to exit: the command's own duration where the backend knows
                        * it (the local one, under its supervisor), so that a pause of the
                        * orchestrator does not count */
  int spawn_error;     /* non-zero when the command could not be started; exit_status is
                        * then 127 and no line was delivered */
  char spawn_message[256];
  int leftovers;       /* processes the command left behind, killed after it ended */
  char log_error[256]; /* non-empty: the log could not be opened or written in full (the
                        * trial ran all the same); one sentence for the trial's record */
  /* Non-zero when the trial was lost through no fault of its configuration (a Slurm node
   * failure or preemption, the allocation's end): it should be re-run, not counted. The
   * local backend never sets it. */
  int lost;
} exec_result;

typedef struct {
  /* One line of output. STREAM is EXEC_STDOUT or EXEC_STDERR. It may call executor_stop or
   * executor_kill (an OOM line, say). */
  void (*on_line)(void *ud, int stream, const char *line, size_t len, int truncated);
  /* Called exactly once, after the process has exited, both streams ended (or were closed
   * after a drain delay) and every timer is closed. The trial is freed after this returns;
   * do not touch it again. */
  void (*on_exit)(void *ud, const exec_result *r);
  /* Optional: a line not yet ended after the stream was quiet for a moment (EXEC_QUIET_MS),
   * given again each time it grew: an OOM text printed without a newline before a hang. For
   * signals only: the same bytes come to on_line when the line ends. */
  void (*on_partial)(void *ud, int stream, const char *line, size_t len);
} exec_callbacks;

typedef struct {
  char *const *argv;    /* argv[0] is searched in PATH */
  char *const *envp;    /* complete environment, NULL-terminated */
  const char *cwd;      /* NULL: inherit */
  double timeout_s;     /* <= 0: none */
  double grace_s;       /* SIGTERM to SIGKILL delay; <= 0 means 5 s */
  size_t max_line;      /* longest line delivered whole; 0 means 64 KiB */
  const char *log_path; /* raw stdout+stderr copy; NULL: none */
  int64_t log_limit;    /* bytes kept in the log; <= 0 means 64 MiB */
  /* Local backend only (others ignore it): the flagtune binary to run the command under
   * (`SUPERVISOR __supervise --parent PID --grace S -- ARGV...`, see supervise.h), so the
   * trial dies with the orchestrator even on SIGKILL. NULL: the backend's default (the
   * executor from exec_local_new uses its own; exec_start runs ARGV directly). */
  const char *supervisor;
} exec_spec;

/* A trial an earlier orchestrator recorded as running: what a backend needs to find it. */
typedef struct {
  int number; /* the trial's number in its sweep */
  int pid;    /* what executor_pid said while it ran; 0: never started */
  /* Slurm backend: the job and step the trial ran as (slurm_job 0: not a Slurm step). */
  int64_t slurm_job;
  int slurm_step;
} exec_orphan;

typedef struct {
  const char *name; /* "local", ... */
  int (*start)(executor *x, const exec_spec *spec, const exec_callbacks *cb, void *ud,
               exec_trial **out, char **err);
  void (*stop)(exec_trial *t);
  void (*kill)(exec_trial *t);
  int (*pid)(const exec_trial *t);
  /* Optional (NULL: never known): see executor_next_pid. */
  int (*next_pid)(executor *x);
  /* Ends whatever the N orphans of sweep SWEEP_ID still run, proving first that each
   * process is that trial (a pid may have been reused). Returns how many it ended. */
  int (*reap)(executor *x, int64_t sweep_id, const exec_orphan *o, int n);
  void (*free)(executor *x);
} executor_ops;

struct executor {
  const executor_ops *ops;
  uv_loop_t *loop; /* the orchestrator's loop; not owned */
};

/* Starts a trial. On success *out is the running trial and on_exit will be called (also
 * when the command cannot be started, and when its log cannot be opened: the trial runs
 * without it and exec_result.log_error says so). A negative code only for invalid
 * arguments; on_exit is then never called. */
static inline int executor_start(executor *x, const exec_spec *spec, const exec_callbacks *cb,
                                 void *ud, exec_trial **out, char **err) {
  return x->ops->start(x, spec, cb, ud, out, err);
}
/* SIGTERM (or the backend's cancel) now, SIGKILL after the grace. Idempotent. */
static inline void executor_stop(executor *x, exec_trial *t) {
  x->ops->stop(t);
}
/* Kill at once (second Ctrl-C). */
static inline void executor_kill(executor *x, exec_trial *t) {
  x->ops->kill(t);
}
/* The process id of the trial's leader on this machine (the process group for local
 * trials); 0 if it never started. Stored with the trial so that reap can find it. */
static inline int executor_pid(const executor *x, const exec_trial *t) {
  return x->ops->pid(t);
}
/* The pid the next start will most likely give its trial (the local fork server's oldest spare
 * not told yet, which it announced when it forked it), each told once: a call when every spare
 * held was told says 0, so that two trials never both take one. 0: not known. A start may still
 * give another pid (the spare died, another trial took it): executor_pid decides. */
static inline int executor_next_pid(executor *x) {
  return x->ops->next_pid ? x->ops->next_pid(x) : 0;
}
/* X may be NULL. */
static inline void executor_free(executor *x) {
  if (x) x->ops->free(x);
}

#endif
