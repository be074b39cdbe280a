/* The Slurm executor (executor.h's interface for a Slurm cluster): one trial = one job step,
 * `srun --jobid=J --exact -N.. -n.. --gres=gpu:N -- CMD...`, inside an allocation held for
 * the night (or one job per trial). Owns the allocation (salloc --no-shell, scancel at the
 * end), the srun command line, the step's identity (read from srun -v's "launching StepId"
 * line), stopping a step (scancel --signal=TERM J.S, then scancel J.S after the grace) and
 * the meaning of srun's own messages (a missing binary, a node failure, preemption); the
 * texts are pinned to SchedMD/slurm sources in tests/e2e/test_slurm.sh.
 * The srun process itself runs through the local backend (exec_start): its output is the
 * step's, so lines, the log and the drain logic are exec.c's. It must not interpret the
 * program's output nor touch the store: the step's ids go up through slurm_opts.on_step.
 *
 * The exec_trial handed out is this module's slurm_trial, converted (C11 6.3.2.3p7 allows
 * the round trip); only this module's ops ever receive it back. */
#include "slurm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "exec.h"
#include "slurm_cmd.h"

#define SLURM_DEFAULT_GRACE_S 5.0
#define SLURM_ATTEMPTS 3 /* srun processes per trial when Slurm loses it before it starts */
enum { SLURM_ARGV_MAX = 48 };
/* Coordinator ports of multi-process steps: JAX's own Slurm range, [65535 - 2^12 + 1, 65535]
 * (jax/_src/clusters/slurm_cluster.py, get_coordinator_address). */
enum { SLURM_PORTS = 4096, SLURM_PORT_BASE = 65535 - 4096 + 1 };

typedef struct {
  executor base;
  slurm_opts o; /* strings below are owned copies */
  char **extra, **srun;
  int cpus_per_task; /* --cpus-per-task of every step (and of the allocation); 0: Slurm's */
  char port_used[SLURM_PORTS]; /* JAX_COORDINATOR_PORT offsets held by running trials */
  int64_t job;                 /* the allocation; 0: one job per trial */
  int own_job;                 /* cancel it at free */
  int restart;                 /* the job's SLURM_RESTART_COUNT: in every step's name */
} slurm_executor;

typedef struct {
  slurm_executor *sx;
  exec_trial *inner; /* the local srun process; NULL once it ended */
  exec_callbacks cb;
  void *ud;
  int number; /* FLAGTUNE_TRIAL, -1 if absent */
  int64_t job;
  int step; /* -1 until srun said */
  char node[64];
  char step_name[128]; /* the step's --job-name (slurm_step_name) */
  char *file;          /* the command's argv[0], for messages */
  exec_spec spec;      /* what each attempt runs: deep copies (the caller's die after start) */
  char **cmd, **envp;
  int attempts;      /* srun processes started */
  int program_lines; /* lines of the program's own delivered (not Slurm's) */
  uv_timer_t timeout_timer, grace_timer;
  int refs; /* the inner trial and the two timers */
  int port; /* offset in sx->port_used held by this trial; -1: none */
  double grace_s;
  int stop_sent, kill_sent;
  exec_stop stopped;
  int lost, missing; /* srun said: node failure / preemption / end of allocation; execve() */
  char lost_why[128];
  exec_result res;
} slurm_trial;

/* Appends S (owned) to ARGV, K entries long; drops it when ARGV is full. */
static void add(char **argv, int *k, char *s) {
  if (*k < SLURM_ARGV_MAX - 1)
    argv[(*k)++] = s;
  else
    free(s);
}

/* The site options every allocation and every job-per-trial srun carries. */
static void add_site(const slurm_executor *sx, char **argv, int *k) {
  if (sx->o.partition) add(argv, k, xasprintf("--partition=%s", sx->o.partition));
  if (sx->o.account) add(argv, k, xasprintf("--account=%s", sx->o.account));
  if (sx->o.time) add(argv, k, xasprintf("--time=%s", sx->o.time));
  for (int i = 0; sx->extra && sx->extra[i]; i++) add(argv, k, xstrdup(sx->extra[i]));
}

static void free_argv(char **argv) {
  for (int i = 0; argv[i]; i++) free(argv[i]);
}

/* salloc --no-shell for PARALLEL trials at once: multi-node trials get whole nodes each;
 * one-node trials share one node holding every slot's GPUs (extra = { ... } can say more). */
static int allocate(slurm_executor *sx, char **err) {
  const slurm_opts *o = &sx->o;
  int multi = o->nodes > 1;
  int nodes = multi ? o->nodes * o->parallel : 1;
  int tasks = (multi ? o->nodes : 1) * o->tasks_per_node * o->parallel;
  int gpus = multi ? o->gpus_per_trial : o->gpus_per_trial * o->parallel;
  char *argv[SLURM_ARGV_MAX] = {0};
  int k = 0;
  add(argv, &k, xstrdup("salloc"));
  add(argv, &k, xstrdup("--no-shell"));
  add(argv, &k, xasprintf("--job-name=%s", o->job_name ? o->job_name : "flagtune"));
  add(argv, &k, xasprintf("--nodes=%d", nodes));
  add(argv, &k, xasprintf("--ntasks=%d", tasks));
  if (multi) add(argv, &k, xasprintf("--ntasks-per-node=%d", o->tasks_per_node));
  if (o->cpus_per_trial > 0) add(argv, &k, xasprintf("--cpus-per-task=%d", sx->cpus_per_task));
  if (gpus > 0) add(argv, &k, xasprintf("--gres=gpu:%d", gpus));
  add_site(sx, argv, &k);
  diag_note("flagtune: slurm: asking for an allocation (%d node%s, %d task%s, gpu:%d per node)",
            nodes, nodes == 1 ? "" : "s", tasks, tasks == 1 ? "" : "s", gpus);
  char *out = NULL;
  int rc = slurm_run(argv, &out);
  free_argv(argv);
  /* salloc says "salloc: Granted job allocation N" (src/salloc/salloc.c). */
  const char *g = out ? strstr(out, "Granted job allocation ") : NULL;
  long long job = g ? atoll(g + strlen("Granted job allocation ")) : 0;
  if (rc != 0 || job <= 0) {
    if (out && strlen(out) > 300) out[300] = '\0';
    for (char *p = out; p && *p; p++)
      if (*p == '\n') *p = ' ';
    int r = diag_set(err, FT_ESYS, "slurm: salloc failed (exit %d): %s", rc,
                     out && *out ? out : "no output (is Slurm installed and SLURM_CONF set?)");
    free(out);
    return r;
  }
  free(out);
  sx->job = job;
  sx->own_job = 1;
  diag_note("flagtune: slurm: holding allocation %lld", job);
  return 0;
}

static int hold_allocation(slurm_executor *sx, char **err) {
  if (sx->o.job_per_trial) return 0;
  const char *inside = getenv("SLURM_JOB_ID");
  if (inside && atoll(inside) > 0) { /* flagtune itself runs in the allocation (sbatch) */
    sx->job = atoll(inside);
    const char *r = getenv("SLURM_RESTART_COUNT");
    sx->restart = r && *r ? atoi(r) : 0;
    diag_note("flagtune: slurm: using the allocation this runs in, job %lld%s", (long long)sx->job,
              sx->restart > 0 ? " (requeued: its steps are named after its restart count)" : "");
    return 0;
  }
  if (sx->o.job > 0) {
    char *st = slurm_job_state(sx->o.job, sx->o.controller_wait_s);
    if (!st)
      return diag_set(err, FT_ESYS,
                      "slurm: the controller did not answer about allocation %lld for %.0f s; "
                      "no new allocation was asked for (it may still run). `flagtune resume` "
                      "tries again",
                      (long long)sx->o.job, sx->o.controller_wait_s);
    int running = strcmp(st, "RUNNING") == 0;
    if (running) {
      sx->job = sx->o.job;
      sx->own_job = 1;
      diag_note("flagtune: slurm: reusing allocation %lld", (long long)sx->job);
    } else {
      diag_note("flagtune: slurm: allocation %lld has ended (%s); asking for a new one",
                (long long)sx->o.job, *st ? st : "gone");
      slurm_cancel_old(sx->o.job, st);
    }
    free(st);
    if (running) return 0;
  }
  return allocate(sx, err);
}

/* ---- one trial ------------------------------------------------------------------------------ */

static void maybe_finish(slurm_trial *t);

static void free_strv(char **v) {
  for (int i = 0; v && v[i]; i++) free(v[i]);
  free(v);
}

static void on_timer_closed(uv_handle_t *h) {
  slurm_trial *t = h->data;
  t->refs--;
  maybe_finish(t);
}

/* Every handle is closed: the trial's on_exit, then it is freed. */
static void maybe_finish(slurm_trial *t) {
  if (t->refs > 0) return;
  if (t->cb.on_exit) t->cb.on_exit(t->ud, &t->res);
  if (t->port >= 0) t->sx->port_used[t->port] = 0;
  free_strv(t->cmd);
  free_strv(t->envp);
  free((char *)t->spec.cwd);
  free((char *)t->spec.log_path);
  free(t->file);
  free(t);
}

/* The last stage of a stop: scancel J.S kills the step (SIGKILL, KillWait after SIGCONT
 * and SIGTERM); the srun process goes if it lingers. */
static void on_grace(uv_timer_t *timer) {
  slurm_trial *t = timer->data;
  if (!t->inner) return;
  if (t->step >= 0 && !t->kill_sent) {
    t->kill_sent = 1;
    slurm_scancel(t->job, t->step, NULL);
    uv_timer_start(&t->grace_timer, on_grace, (uint64_t)(t->grace_s * 1000.0) + 2000, 0);
    return;
  }
  exec_kill_trial(t->inner);
}

/* TERM to the step's tasks now (scancel --signal only signals, it does not cancel), the
 * cancel after the grace. A step not started yet (srun still waiting for resources) has no
 * id: then srun itself is stopped, which withdraws the request. */
static void stop_step(slurm_trial *t) {
  if (!t->inner || t->stop_sent) return;
  t->stop_sent = 1;
  if (t->step < 0) {
    exec_stop_trial(t->inner);
    return;
  }
  slurm_scancel(t->job, t->step, "TERM");
  uv_timer_start(&t->grace_timer, on_grace, (uint64_t)(t->grace_s * 1000.0), 0);
}

static void on_timeout(uv_timer_t *timer) {
  slurm_trial *t = timer->data;
  if (t->stopped == EXEC_STOP_NONE) t->stopped = EXEC_STOP_TIMEOUT;
  stop_step(t);
}

static int has(const char *line, size_t len, const char *what) {
  size_t n = strlen(what);
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(line + i, what, n) == 0) return 1;
  return 0;
}

/* "srun: launching StepId=J.S on host NODE, N tasks: ..." (srun -v, Slurm 21.08+). */
static void read_step(slurm_trial *t, const char *line, size_t len) {
  char buf[256];
  if (len >= sizeof buf || t->step >= 0) return;
  memcpy(buf, line, len);
  buf[len] = '\0';
  long long job;
  int step;
  char node[64];
  if (sscanf(buf, "srun: launching StepId=%lld.%d on host %63[^,]", &job, &step, node) != 3) return;
  t->job = job;
  t->step = step;
  snprintf(t->node, sizeof t->node, "%s", node);
  if (t->sx->o.on_step) t->sx->o.on_step(t->sx->o.ud, t->number, job, step, t->node);
  /* A stop asked for before the step had an id stopped srun; nothing more to do. */
}

/* What Slurm itself says about a step that did not end by its own doing (slurmstepd's
 * "*** STEP J.S ON N CANCELLED AT T DUE TO NODE FAILURE ***", srun's "Node failure on N"). */
static void read_slurm_line(slurm_trial *t, const char *line, size_t len) {
  static const char *const lost[] = {"DUE TO NODE FAILURE",
                                     "srun: error: Node failure",
                                     "DUE TO PREEMPTION",
                                     "DUE TO JOB REQUEUE",
                                     "DUE TO TIME LIMIT",
                                     "Job allocation",
                                     "CANCELLED",
                                     "Unable to confirm allocation",
                                     "Expired or invalid job"};
  if (has(line, len, "execve():") && has(line, len, "No such file")) t->missing = 1;
  for (int i = 0; i < 9 && !t->lost_why[0]; i++) {
    if (!has(line, len, lost[i])) continue;
    /* "Job allocation N has been revoked" (the allocation ended); a CANCELLED we did not
     * ask for is someone's scancel of the allocation or the step: not the trial's fault. */
    if (i == 5 && !has(line, len, "revoked")) continue;
    if (i == 6 && t->stop_sent) continue;
    snprintf(t->lost_why, sizeof t->lost_why, "%s", lost[i]);
  }
}

/* srun -v's own progress lines are kept out of the trial's lines (they stay in the log);
 * its errors and slurmstepd's go through, so the excerpt shows them. */
static void on_line(void *ud, int stream, const char *line, size_t len, int truncated) {
  slurm_trial *t = ud;
  if (stream == EXEC_STDERR) {
    if (len > 6 && memcmp(line, "srun: ", 6) == 0) {
      read_step(t, line, len);
      read_slurm_line(t, line, len);
      if (!(len > 13 && memcmp(line, "srun: error: ", 13) == 0)) return;
    } else if (len > 10 && memcmp(line, "slurmstepd", 10) == 0) {
      read_slurm_line(t, line, len);
    } else {
      t->program_lines++;
    }
  } else {
    t->program_lines++;
  }
  if (t->cb.on_line) t->cb.on_line(t->ud, stream, line, len, truncated);
}

/* A partial line after a quiet moment (exec_callbacks.on_partial): the program's own, for its
 * signals; Slurm's lines always end. */
static void on_partial(void *ud, int stream, const char *line, size_t len) {
  slurm_trial *t = ud;
  if (t->cb.on_partial) t->cb.on_partial(t->ud, stream, line, len);
}

static int start_attempt(slurm_trial *t, char **err);

/* A trial lost before its program printed anything (the allocation ended or was preempted
 * between trials, the node failed while the step started) is run again, in a new allocation
 * when the old one is gone: nothing of it reached the trial, so nobody can tell. Later
 * losses are reported (exec_result.lost): a re-run would repeat lines already parsed. */
static int retry(slurm_trial *t) {
  slurm_executor *sx = t->sx;
  if (!t->lost_why[0] || t->program_lines > 0 || t->stopped != EXEC_STOP_NONE ||
      t->attempts >= SLURM_ATTEMPTS)
    return 0;
  diag_note("flagtune: slurm: trial %d lost before it started (%s); trying again", t->number,
            t->lost_why);
  char *err = NULL;
  int rc = 0;
  if (sx->job > 0 && !sx->o.job_per_trial) {
    char *st = slurm_job_state(sx->job, sx->o.controller_wait_s);
    if (!st) {
      rc = diag_set(&err, FT_ESYS, "slurm: allocation %lld: state unknown, trial %d not retried",
                    (long long)sx->job, t->number);
    } else if (strcmp(st, "RUNNING") != 0) {
      diag_note("flagtune: slurm: allocation %lld has ended (%s)", (long long)sx->job,
                *st ? st : "gone");
      if (sx->own_job) slurm_cancel_old(sx->job, st);
      sx->own_job = 0;
      sx->o.job = 0;
      rc = allocate(sx, &err);
    }
    free(st);
  }
  if (rc == 0) {
    t->job = sx->job;
    t->step = -1;
    t->node[0] = t->lost_why[0] = '\0';
    t->missing = 0;
    rc = start_attempt(t, &err);
  }
  if (rc != 0) diag_warn("%s", err ? err : "slurm: cannot start the trial again");
  free(err);
  return rc == 0;
}

/* A step ended by a signal flagtune did not send (srun exits 128 + N): when the allocation
 * is no longer RUNNING (someone cancelled it, Slurm preempted it) before srun said so, the
 * trial is lost, not a crash. */
static void check_killed(slurm_trial *t, const exec_result *r) {
  slurm_executor *sx = t->sx;
  int killed = r->term_signal != 0 || (r->exit_status > 128 && r->exit_status < 128 + 32);
  if (!killed || r->spawn_error || t->lost_why[0] || t->stopped != EXEC_STOP_NONE || sx->job <= 0 ||
      sx->o.job_per_trial)
    return;
  char *st = slurm_job_state(sx->job, sx->o.controller_wait_s);
  if (st && strcmp(st, "RUNNING") != 0)
    snprintf(t->lost_why, sizeof t->lost_why, "allocation %lld %s", (long long)sx->job,
             *st ? st : "gone");
  free(st);
}

static void on_inner_exit(void *ud, const exec_result *r) {
  slurm_trial *t = ud;
  t->inner = NULL;
  check_killed(t, r);
  if (retry(t)) return;
  t->res = *r;
  if (t->stopped != EXEC_STOP_NONE) t->res.stopped = t->stopped;
  /* srun exits 2 when the step's execve() failed (slurmstepd's "execve(): X: No such file or
   * directory"): the local backend's "command not found", with the node named. */
  if (t->missing && !r->spawn_error && r->term_signal == 0 && r->exit_status == 2) {
    t->res.spawn_error = UV_ENOENT;
    t->res.exit_status = 127;
    snprintf(t->res.spawn_message, sizeof t->res.spawn_message,
             "command not found: %s (execve() on node %s)", t->file, t->node[0] ? t->node : "?");
  }
  /* One job per trial: its own --time ran out, which is the trial's timeout. */
  if (t->sx->job <= 0 && strcmp(t->lost_why, "DUE TO TIME LIMIT") == 0 &&
      t->res.stopped == EXEC_STOP_NONE) {
    t->res.stopped = EXEC_STOP_TIMEOUT;
    t->lost_why[0] = '\0';
  }
  if (t->lost_why[0] && t->res.stopped == EXEC_STOP_NONE) {
    t->res.lost = 1;
    /* srun may exit 0 when its node failed: never let that read as a clean end. */
    if (t->res.exit_status == 0 && t->res.term_signal == 0) t->res.term_signal = SIGKILL;
    diag_note("flagtune: slurm: trial %d lost (%s, step %lld.%d on %s)", t->number, t->lost_why,
              (long long)t->job, t->step, t->node[0] ? t->node : "?");
  }
  uv_timer_stop(&t->timeout_timer);
  uv_timer_stop(&t->grace_timer);
  uv_close((uv_handle_t *)&t->timeout_timer, on_timer_closed);
  uv_close((uv_handle_t *)&t->grace_timer, on_timer_closed);
  t->refs--;
  maybe_finish(t);
}

static int env_int(char *const *envp, const char *name, int dflt) {
  size_t n = strlen(name);
  for (int i = 0; envp && envp[i]; i++)
    if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=') return atoi(envp[i] + n + 1);
  return dflt;
}

/* The step's environment: the trial's, less CUDA_VISIBLE_DEVICES (Slurm's gres sets it per
 * step) and an enclosing job's SLURM_* (they would describe that job to srun, not this
 * step; SLURM_CONF stays). A new vector of copies. */
static char **step_env(char *const *envp) {
  int n = 0;
  while (envp && envp[n]) n++;
  char **v = xcalloc((size_t)n + 1, sizeof(char *));
  int k = 0;
  for (int i = 0; i < n; i++) {
    const char *e = envp[i];
    if (strncmp(e, "CUDA_VISIBLE_DEVICES=", 21) == 0) continue;
    if (strncmp(e, "SLURM_", 6) == 0 && strncmp(e, "SLURM_CONF=", 11) != 0) continue;
    v[k++] = xstrdup(e);
  }
  return v;
}

static char **copy_strv(char *const *src) {
  int n = 0;
  while (src[n]) n++;
  char **v = xcalloc((size_t)n + 1, sizeof(char *));
  for (int i = 0; i < n; i++) v[i] = xstrdup(src[i]);
  return v;
}

/* srun [-v] --jobid=J --exact -N.. -n.. [--ntasks-per-node=..] --gres=.. -J .. -- CMD...;
 * the first FIXED entries are owned, the command's are borrowed. */
static char **srun_argv(const slurm_executor *sx, const slurm_trial *t, char *const *cmd,
                        int *fixed) {
  const slurm_opts *o = &sx->o;
  int n = 0;
  while (cmd[n]) n++;
  char **v = xcalloc((size_t)(SLURM_ARGV_MAX + n + 1), sizeof(char *));
  int k = 0;
  add(v, &k, xstrdup("srun"));
  add(v, &k, xstrdup("--verbose")); /* for "launching StepId=J.S on host N" */
  if (sx->job > 0) add(v, &k, xasprintf("--jobid=%lld", (long long)sx->job));
  add(v, &k, xstrdup("--exact"));
  add(v, &k, xasprintf("--nodes=%d", o->nodes));
  add(v, &k, xasprintf("--ntasks=%d", o->nodes * o->tasks_per_node));
  if (o->nodes > 1) add(v, &k, xasprintf("--ntasks-per-node=%d", o->tasks_per_node));
  add(v, &k,
      o->gpus_per_trial > 0 ? xasprintf("--gres=gpu:%d", o->gpus_per_trial)
                            : xstrdup("--gres=none"));
  if (sx->cpus_per_task > 0) add(v, &k, xasprintf("--cpus-per-task=%d", sx->cpus_per_task));
  add(v, &k, xasprintf("--job-name=%s", t->step_name));
  add(v, &k, xstrdup("--kill-on-bad-exit=1"));
  if (sx->job <= 0) add_site(sx, v, &k);
  for (int i = 0; sx->srun && sx->srun[i]; i++) add(v, &k, xstrdup(sx->srun[i]));
  add(v, &k, xstrdup("--"));
  *fixed = k;
  for (int i = 0; i < n; i++) v[k++] = cmd[i];
  return v;
}

/* Starts one srun process for T (its first attempt or a retry). */
static int start_attempt(slurm_trial *t, char **err) {
  int fixed = 0;
  char **argv = srun_argv(t->sx, t, t->cmd, &fixed);
  exec_spec s = t->spec;
  s.argv = argv;
  s.envp = t->envp;
  exec_callbacks icb = {.on_line = on_line, .on_exit = on_inner_exit, .on_partial = on_partial};
  t->attempts++;
  t->program_lines = 0;
  int rc = exec_start(t->sx->base.loop, &s, &icb, t, &t->inner, err);
  for (int i = 0; i < fixed; i++) free(argv[i]);
  free(argv);
  return rc;
}

static int env_has(char *const *envp, const char *name) {
  size_t n = strlen(name);
  for (int i = 0; envp && envp[i]; i++)
    if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=') return 1;
  return 0;
}

/* A multi-process trial (nodes x tasks_per_node > 1) calls jax.distributed.initialize(),
 * which finds its coordinator from the step: the first node of SLURM_STEP_NODELIST, at
 * $JAX_COORDINATOR_PORT when set, else at a port derived from SLURM_JOB_ID alone
 * (jax/_src/clusters/cluster.py, ClusterEnv.auto_detect_unset_distributed_params), which two
 * steps of one allocation sharing a first node would both take. Each such trial gets a port
 * no other running trial of this executor holds, unless the experiment sets its own. */
static void give_port(slurm_trial *t) {
  slurm_executor *sx = t->sx;
  t->port = -1;
  if (sx->o.nodes * sx->o.tasks_per_node <= 1 || env_has(t->envp, "JAX_COORDINATOR_PORT") ||
      env_has(t->envp, "JAX_COORDINATOR_ADDRESS"))
    return;
  int first = (int)((sx->job > 0 ? sx->job : 0) % SLURM_PORTS) + 1; /* next to JAX's default */
  for (int i = 0; i < SLURM_PORTS && t->port < 0; i++)
    if (!sx->port_used[(first + i) % SLURM_PORTS]) t->port = (first + i) % SLURM_PORTS;
  if (t->port < 0) return;
  sx->port_used[t->port] = 1;
  int n = 0;
  while (t->envp[n]) n++;
  t->envp = xrealloc(t->envp, (size_t)(n + 2) * sizeof(char *));
  t->envp[n] = xasprintf("JAX_COORDINATOR_PORT=%d", SLURM_PORT_BASE + t->port);
  t->envp[n + 1] = NULL;
}

static int slurm_start(executor *x, const exec_spec *spec, const exec_callbacks *cb, void *ud,
                       exec_trial **out, char **err) {
  slurm_executor *sx = (slurm_executor *)x;
  if (out) *out = NULL;
  if (!spec || !cb || !out || !spec->argv || !spec->argv[0] || !spec->argv[0][0])
    return diag_set(err, FT_EINPUT, "slurm_start: missing callbacks or command");
  slurm_trial *t = xcalloc(1, sizeof *t);
  t->sx = sx;
  t->cb = *cb;
  t->ud = ud;
  t->number = env_int(spec->envp, "FLAGTUNE_TRIAL", -1);
  t->job = sx->job;
  t->step = -1;
  t->file = xstrdup(spec->argv[0]);
  slurm_step_name(t->step_name, sizeof t->step_name, sx->o.job_name ? sx->o.job_name : "flagtune",
                  t->number, sx->restart);
  t->grace_s = spec->grace_s > 0 ? spec->grace_s : SLURM_DEFAULT_GRACE_S;
  t->cmd = copy_strv(spec->argv);
  t->envp = step_env(spec->envp);
  give_port(t);
  t->spec = *spec;
  t->spec.cwd = spec->cwd ? xstrdup(spec->cwd) : NULL;
  t->spec.log_path = spec->log_path ? xstrdup(spec->log_path) : NULL;
  t->spec.timeout_s = 0;             /* the timeout is ours: it must cancel the step */
  t->spec.grace_s = t->grace_s + 10; /* srun's own stop outlives the step's grace */
  t->spec.supervisor = sx->o.supervisor;
  uv_timer_init(x->loop, &t->timeout_timer);
  uv_timer_init(x->loop, &t->grace_timer);
  t->timeout_timer.data = t->grace_timer.data = t;
  t->refs = 3;
  int rc = start_attempt(t, err);
  if (rc != 0) { /* on_exit will never come: close the timers without it */
    t->cb.on_exit = NULL;
    t->refs = 2;
    uv_close((uv_handle_t *)&t->timeout_timer, on_timer_closed);
    uv_close((uv_handle_t *)&t->grace_timer, on_timer_closed);
    return rc;
  }
  if (spec->timeout_s > 0)
    uv_timer_start(&t->timeout_timer, on_timeout, (uint64_t)(spec->timeout_s * 1000.0 + 0.5), 0);
  *out = (exec_trial *)t;
  return 0;
}

static void slurm_stop(exec_trial *et) {
  slurm_trial *t = (slurm_trial *)et;
  if (!t || !t->inner) return;
  if (t->stopped == EXEC_STOP_NONE) t->stopped = EXEC_STOP_REQUESTED;
  stop_step(t);
}

static void slurm_kill(exec_trial *et) {
  slurm_trial *t = (slurm_trial *)et;
  if (!t || !t->inner) return;
  if (t->stopped == EXEC_STOP_NONE) t->stopped = EXEC_STOP_REQUESTED;
  t->stop_sent = 1;
  if (t->step >= 0 && !t->kill_sent) {
    t->kill_sent = 1;
    slurm_scancel(t->job, t->step, NULL);
  }
  exec_kill_trial(t->inner);
}

/* The local srun's pid: what the local reap would prove and kill; the step's ids are
 * reported through on_step. */
static int slurm_pid(const exec_trial *et) {
  const slurm_trial *t = (const slurm_trial *)et;
  return t && t->inner ? exec_pid(t->inner) : 0;
}

static int slurm_reap_op(executor *x, int64_t sweep_id, const exec_orphan *o, int n) {
  (void)x;
  /* An orphan's srun may still run here too (its supervisor died with the orchestrator). */
  return exec_reap(sweep_id, o, n) + slurm_reap(sweep_id, o, n);
}

static void slurm_free(executor *x) {
  slurm_executor *sx = (slurm_executor *)x;
  if (sx->own_job && sx->job > 0) {
    diag_note("flagtune: slurm: releasing allocation %lld", (long long)sx->job);
    slurm_scancel(sx->job, -1, NULL);
  }
  free_strv(sx->extra);
  free_strv(sx->srun);
  free((char *)sx->o.partition);
  free((char *)sx->o.account);
  free((char *)sx->o.time);
  free((char *)sx->o.job_name);
  free((char *)sx->o.supervisor);
  free(sx);
}

static const executor_ops slurm_ops = {
    .name = "slurm",
    .start = slurm_start,
    .stop = slurm_stop,
    .kill = slurm_kill,
    .pid = slurm_pid,
    .reap = slurm_reap_op,
    .free = slurm_free,
};

static char *dup_or_null(const char *s) {
  return s && *s ? xstrdup(s) : NULL;
}

int slurm_executor_new(uv_loop_t *loop, const slurm_opts *o, executor **out, char **err) {
  *out = NULL;
  slurm_executor *sx = xcalloc(1, sizeof *sx);
  sx->base.ops = &slurm_ops;
  sx->base.loop = loop;
  sx->o = *o;
  sx->o.partition = dup_or_null(o->partition);
  sx->o.account = dup_or_null(o->account);
  sx->o.time = dup_or_null(o->time);
  sx->o.job_name = dup_or_null(o->job_name);
  sx->o.supervisor = dup_or_null(o->supervisor);
  sx->o.nodes = o->nodes > 1 ? o->nodes : 1;
  sx->o.tasks_per_node = o->tasks_per_node > 0 ? o->tasks_per_node : 1;
  sx->o.parallel = o->parallel > 0 ? o->parallel : 1;
  if (!(o->controller_wait_s > 0)) sx->o.controller_wait_s = SLURM_CONTROLLER_WAIT_S;
  char *const none[] = {NULL};
  sx->extra = copy_strv(o->extra ? o->extra : none);
  sx->srun = copy_strv(o->srun ? o->srun : none);
  sx->o.extra = sx->extra;
  sx->o.srun = sx->srun;
  sx->cpus_per_task = slurm_cpus_per_task(&sx->o);
  int rc = hold_allocation(sx, err);
  if (rc != 0) {
    slurm_free(&sx->base);
    return rc;
  }
  *out = &sx->base;
  return 0;
}

int64_t slurm_executor_job(const executor *x) {
  return x && x->ops == &slurm_ops ? ((const slurm_executor *)x)->job : 0;
}
