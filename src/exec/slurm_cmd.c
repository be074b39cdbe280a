/* Slurm's short commands for the executor (src/exec/slurm.c) and resume: running them
 * (slurm_run), asking squeue/scontrol with a patient retry (a silent controller is never
 * read as a job's end), scancel, and the reaping of a dead orchestrator's steps by their
 * stored ids and their names. Must not hold an allocation nor touch the store. */
#include "slurm_cmd.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "slurm.h"

extern char **environ;

#define SLURM_CONTROLLER_WAIT_S 300.0 /* how long a silent controller is waited for */
enum { SLURM_OUT_MAX = 64 * 1024 };

int slurm_run(char *const *argv, char **out) {
  int fd[2];
  if (out) *out = NULL;
  if (pipe(fd) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", 0, 0);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addclose(&fa, fd[1]);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  char *buf = xmalloc(SLURM_OUT_MAX + 1);
  size_t len = 0;
  ssize_t n;
  while (rc == 0 && (n = read(fd[0], buf + len, SLURM_OUT_MAX - len)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    len += (size_t)n;
    if (len == SLURM_OUT_MAX) { /* keep draining so the command cannot block on us */
      char sink[4096];
      while ((n = read(fd[0], sink, sizeof sink)) > 0 || (n < 0 && errno == EINTR)) {
      }
      break;
    }
  }
  close(fd[0]);
  buf[len] = '\0';
  int status = 0;
  if (rc == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  if (out)
    *out = buf;
  else
    free(buf);
  if (rc != 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int slurm_scancel(int64_t job, int step, const char *signal) {
  char id[64], sig[32];
  if (step >= 0)
    snprintf(id, sizeof id, "%lld.%d", (long long)job, step);
  else
    snprintf(id, sizeof id, "%lld", (long long)job);
  char *argv[5] = {"scancel", id, NULL, NULL, NULL};
  if (signal) {
    snprintf(sig, sizeof sig, "--signal=%s", signal);
    argv[1] = sig;
    argv[2] = id;
  }
  return slurm_run(argv, NULL);
}

/* The first line squeue ARGV prints, "" when Slurm no longer knows what it asked about (no
 * line, or "slurm_load_jobs error: Invalid job id specified"), NULL when the controller did
 * not answer within WAIT_S seconds. A failed squeue ("Unable to contact slurm controller",
 * a failover, a restart) is never read as the job's end: it is asked again after 1, 2, 4 ...
 * (at most 30) seconds. Caller frees. */
char *slurm_ask(char *const *argv, const char *what, double wait_s) {
  double waited = 0, delay = 1;
  for (;;) {
    char *out = NULL;
    int rc = slurm_run(argv, &out);
    if (rc == 0) {
      out[strcspn(out, "\n")] = '\0';
      return out;
    }
    if (rc > 0 && strstr(out, "Invalid job id")) {
      free(out);
      return xstrdup("");
    }
    out[strcspn(out, "\n")] = '\0';
    if (waited >= wait_s) {
      diag_warn("slurm: squeue for %s failed for %.0f s (exit %d: %s); its state is unknown", what,
                waited, rc, *out ? out : "no output");
      free(out);
      return NULL;
    }
    if (delay > wait_s - waited) delay = wait_s - waited;
    diag_note("flagtune: slurm: squeue failed (exit %d: %s); asking again in %.0f s", rc,
              *out ? out : "no output", delay);
    free(out);
    struct timespec ts = {(time_t)delay, (long)((delay - (time_t)delay) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    waited += delay;
    delay = delay * 2 > 30 ? 30 : delay * 2;
  }
}

/* squeue's state of JOB ("RUNNING", "PENDING", ...); "" and NULL as ask_squeue's. */
char *slurm_job_state(int64_t job, double wait_s) {
  char id[32], what[48];
  snprintf(id, sizeof id, "%lld", (long long)job);
  snprintf(what, sizeof what, "job %lld", (long long)job);
  char *argv[] = {"squeue", "-h", "-j", id, "-o", "%T", NULL};
  return slurm_ask(argv, what, wait_s);
}

/* An allocation of ours that is no longer RUNNING is cancelled before another is asked for,
 * so that it cannot come back and be held beside the new one. A PENDING job is left alone:
 * salloc's allocations are never requeued, so it is a batch job Slurm requeued, which will
 * run its own script. */
void slurm_cancel_old(int64_t job, const char *state) {
  if (job <= 0 || !state || !*state || strcmp(state, "PENDING") == 0) return;
  diag_note("flagtune: slurm: cancelling allocation %lld (%s) before asking for a new one",
            (long long)job, state);
  slurm_scancel(job, -1, NULL);
}

void slurm_step_name(char *buf, size_t size, const char *prefix, int number, int restart) {
  if (restart > 0)
    snprintf(buf, size, "%s-trial-%d-restart-%d", prefix, number, restart);
  else
    snprintf(buf, size, "%s-trial-%d", prefix, number);
}

int slurm_restart_count(int64_t job) {
  const char *inside = getenv("SLURM_JOB_ID");
  if (inside && atoll(inside) == job) {
    const char *r = getenv("SLURM_RESTART_COUNT");
    return r && *r ? atoi(r) : 0;
  }
  char id[32], what[48];
  snprintf(id, sizeof id, "%lld", (long long)job);
  snprintf(what, sizeof what, "job %lld", (long long)job);
  char *argv[] = {"squeue", "-h", "-j", id, "-O", "RestartCnt", NULL};
  char *out = slurm_ask(argv, what, SLURM_CONTROLLER_WAIT_S);
  int n = out && *out >= '0' && *out <= '9' ? atoi(out) : -1;
  free(out);
  return n;
}

/* squeue's %L: [days-][hours:]minutes:seconds, or "UNLIMITED" / "INVALID". */
static double parse_time_left(const char *s) {
  int d = 0, f[3] = {0, 0, 0}, n = 0;
  const char *dash = strchr(s, '-');
  if (dash) {
    d = atoi(s);
    s = dash + 1;
  }
  if (*s < '0' || *s > '9') return -1;
  for (const char *p = s; n < 3; n++) {
    f[n] = atoi(p);
    p = strchr(p, ':');
    if (!p) break;
    p++;
  }
  if (n == 0) return -1;
  double secs = n == 2 ? f[0] * 3600.0 + f[1] * 60.0 + f[2] : f[0] * 60.0 + f[1];
  return d * 86400.0 + secs;
}

double slurm_time_left(int64_t job) {
  char id[32], what[48];
  snprintf(id, sizeof id, "%lld", (long long)job);
  snprintf(what, sizeof what, "job %lld", (long long)job);
  char *argv[] = {"squeue", "-h", "-j", id, "-o", "%L", NULL};
  char *out = slurm_ask(argv, what, SLURM_CONTROLLER_WAIT_S);
  double left = out && *out ? parse_time_left(out) : -1;
  free(out);
  return left;
}

/* Whether NAME is trial NUMBER of sweep SWEEP_ID launched in run RESTART of its job; also
 * flagtune-trial-N in a job's first run, the name of a step of an executor given no
 * job_name. */
static int step_is_trial(const char *name, int64_t sweep_id, int number, int restart) {
  char prefix[48], mine[128], plain[64];
  snprintf(prefix, sizeof prefix, "flagtune-sweep-%lld", (long long)sweep_id);
  slurm_step_name(mine, sizeof mine, prefix, number, restart);
  slurm_step_name(plain, sizeof plain, "flagtune", number, 0);
  return strcmp(name, mine) == 0 || (restart == 0 && strcmp(name, plain) == 0);
}

int slurm_reap(int64_t sweep_id, const exec_orphan *o, int n) {
  int ended = 0;
  for (int i = 0; i < n; i++) {
    if (o[i].slurm_job <= 0 || o[i].slurm_step < 0) continue;
    /* Step ids restart at 0 when Slurm requeues a batch job: J.S may now be another
     * trial's, another sweep's, or another run's of this job. The step's name says whose
     * it is: its sweep, its trial and the job's restart count it was launched under. A
     * step of an earlier run of the job cannot still run (a requeue ends every step), so
     * only a name with the job's current count is this orphan's. */
    char id[64], what[80];
    snprintf(id, sizeof id, "%lld.%d", (long long)o[i].slurm_job, o[i].slurm_step);
    char *argv[] = {"squeue", "-h", "-s", id, "-o", "%j", NULL};
    snprintf(what, sizeof what, "step %s", id);
    char *name = slurm_ask(argv, what, SLURM_CONTROLLER_WAIT_S);
    if (!name) continue;
    if (!*name) { /* ended with the orchestrator */
      free(name);
      continue;
    }
    int restart = slurm_restart_count(o[i].slurm_job);
    if (restart < 0 || !step_is_trial(name, sweep_id, o[i].number, restart)) {
      diag_note(
          "flagtune: step %s (trial %d of the previous run) is now '%s': left alone (its job "
          "was requeued)",
          id, o[i].number, name);
      free(name);
      continue;
    }
    free(name);
    diag_note("flagtune: cancelling step %s (trial %d) left running by the previous run", id,
              o[i].number);
    if (slurm_scancel(o[i].slurm_job, o[i].slurm_step, NULL) == 0) ended++;
  }
  return ended;
}
