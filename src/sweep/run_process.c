/* The process that runs a sweep (run, resume, minimize): its signals before and beside the
 * sweep's loop, --detach, and the notify hook with the sweep's summary at its end. A closed
 * pipe (`| tee` gone) is a write error, not a death; SIGHUP is ignored until the sweep's loop
 * handles it; SIGBUS gets a message instead of a silent exit 135; a SIGINT/SIGTERM before the
 * loop watches is noted for it; --detach runs the sweep in a new session with its output in a
 * log, the parent returning once the sweep is claimed. Must not know what a sweep does: it
 * runs the body it is given. */
#include "run_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "metric.h"
#include "sweep.h"

static void on_sigbus(int sig) {
  static const char msg[] =
      "flagtune: SIGBUS: a memory-mapped file went bad under the sweep (the database's WAL "
      "index, its -shm file, was made unwritable or truncated, or its disk went away); "
      "stopping. `flagtune resume` continues the sweep once the database is writable again.\n";
  (void)sig;
  ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)n;
  _exit(1);
}

/* A SIGINT/SIGTERM that arrives before the loop watches for them (while the experiment
 * loads, the software probe runs, the sweep row is written) is noted here and acted on as
 * soon as the loop starts: the sweep stops cleanly (recorded interrupted, exit 130) instead
 * of being killed halfway through its first writes, or lost when a shell started flagtune in
 * the background with SIGINT ignored. A second one ends the process at once. */
static volatile sig_atomic_t early_signal;

static void on_early_signal(int sig) {
  if (early_signal) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  early_signal = sig;
}

void run_process_catch_early_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_early_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int run_process_early_signal(void) {
  return early_signal;
}

int run_process_take_early_signal(void) {
  int sig = early_signal;
  early_signal = 0;
  return sig;
}

/* A sweep outlives its terminal and its readers: a closed pipe (`| tee` gone) is a write
 * error, not a death (the sweep stops printing and keeps running); SIGHUP is handled on the
 * sweep's loop (noted, ignored); SIGBUS gets a message instead of a silent exit 135. */
void run_process_signals(void) {
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN); /* until the sweep's loop handles it (a hangup during validation) */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, NULL);
  run_process_catch_early_signals(); /* a Ctrl-C before the sweep's loop runs is not lost */
}

typedef struct {
  int fd;          /* the pipe to the waiting parent */
  const char *log; /* --log, absolute; NULL: run.log in the sweep's log directory */
} detach_ctx;

/* In the detached child, once the sweep is claimed: output goes to the log from here on,
 * and the parent learns the sweep's id and the log's path. */
static void detached_started(int64_t id, const char *log_dir, void *ud) {
  detach_ctx *d = ud;
  char cwd[4096];
  char *path = d->log                    ? xstrdup(d->log)
               : log_dir[0] == '/'       ? xasprintf("%s/run.log", log_dir)
               : getcwd(cwd, sizeof cwd) ? xasprintf("%s/%s/run.log", cwd, log_dir)
                                         : xasprintf("%s/run.log", log_dir);
  fflush(stdout);
  fflush(stderr);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  char *line = xasprintf("%lld\t%s\n", (long long)id, fd >= 0 ? path : "-");
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ssize_t n = write(d->fd, line, strlen(line));
  (void)n;
  close(d->fd);
  d->fd = -1;
  free(line);
  free(path);
}

/* The parent of a detached sweep: waits for the child's "ID\tLOG" line, prints it and
 * returns 0; if the child ends first (bad input, nothing started), returns its exit code. */
static int detach_parent(pid_t child, int fd) {
  char buf[4200];
  size_t len = 0;
  ssize_t n;
  while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) != 0) {
    if (n > 0) len += (size_t)n;
  }
  close(fd);
  buf[len] = '\0';
  char *tab = strchr(buf, '\t');
  if (tab) {
    char *nl = strchr(tab, '\n');
    if (nl) *nl = '\0';
    *tab = '\0';
    printf("flagtune: sweep %s runs in the background (pid %d)\nlog: %s\n", buf, (int)child,
           tab + 1);
    return 0;
  }
  int st = 0;
  if (waitpid(child, &st, 0) < 0) return 1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int run_process_detach(const char *log_arg, sweep_opts *o, run_process_body body, void *ctx,
                       int *code, char **err) {
  int p[2];
  char *log = NULL;
  if (log_arg) {
    char cwd[4096];
    log = log_arg[0] == '/' || !getcwd(cwd, sizeof cwd) ? xstrdup(log_arg)
                                                        : xasprintf("%s/%s", cwd, log_arg);
  }
  if (pipe(p) != 0) {
    free(log);
    return diag_set(err, FT_ESYS, "cannot detach: pipe: %s", strerror(errno));
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    free(log);
    return diag_set(err, FT_ESYS, "cannot detach: fork: %s", strerror(errno));
  }
  if (pid > 0) {
    close(p[1]);
    free(log);
    *code = detach_parent(pid, p[0]);
    return 0;
  }
  close(p[0]);
  setsid();
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) dup2(null, STDIN_FILENO);
  if (null >= 0) close(null);
  fcntl(p[1], F_SETFD, FD_CLOEXEC);
  /* D lives on this frame: the caller's options carry its address only while BODY runs. */
  detach_ctx d = {.fd = p[1], .log = log};
  void (*started)(int64_t, const char *, void *) = o->on_started;
  void *ud = o->ud;
  o->on_started = detached_started;
  o->ud = &d;
  *code = body(ctx, o);
  o->on_started = started;
  o->ud = ud;
  if (d.fd >= 0) close(d.fd);
  free(log);
  return 0;
}

/* ---- the notify hook ---- */

static void put_env(const char *name, const char *value) {
  if (value) setenv(name, value, 1);
}

static void put_num(const char *name, double v, const char *fmt) {
  char buf[64];
  if (v != v) return; /* NaN: left unset */
  snprintf(buf, sizeof buf, fmt, v);
  setenv(name, buf, 1);
}

/* In the hook's child: the summary into the environment. */
static void summary_env(const run_process_summary *s) {
  char buf[64];
  snprintf(buf, sizeof buf, "%lld", s->sweep_id);
  put_env("FLAGTUNE_SWEEP_ID", buf);
  put_env("FLAGTUNE_SWEEP_NAME", s->name);
  put_env("FLAGTUNE_MODEL", s->model);
  put_env("FLAGTUNE_HARDWARE", s->hardware);
  put_env("FLAGTUNE_STATUS", s->status);
  put_env("FLAGTUNE_REASON", s->reason ? s->reason : "");
  put_env("FLAGTUNE_DB", s->db_path);
  put_env("FLAGTUNE_LOG_DIR", s->log_dir);
  put_num("FLAGTUNE_BEST_MS", s->best_ms, "%.4f");
  put_num("FLAGTUNE_BASELINE_MS", s->baseline_ms, "%.4f");
  if (s->best_ms > 0 && s->baseline_ms > 0)
    put_num("FLAGTUNE_SPEEDUP", s->baseline_ms / s->best_ms, "%.4f");
  put_env("FLAGTUNE_BEST_CONFIRMED", s->best_confirmed ? "1" : "0");
  snprintf(buf, sizeof buf, "%d", s->trials_done);
  put_env("FLAGTUNE_TRIALS_DONE", buf);
  snprintf(buf, sizeof buf, "%d", s->trials_planned);
  put_env("FLAGTUNE_TRIALS_PLANNED", buf);
  snprintf(buf, sizeof buf, "%d", s->trials_ok);
  put_env("FLAGTUNE_TRIALS_OK", buf);
  put_env("FLAGTUNE_BETTER", s->higher ? "higher" : "lower");
  char line[512], best[64], base[64];
  /* a rate sweep's values as its rate, as show gives them */
  metric_format(best, sizeof best, s->best_ms, s->higher);
  metric_format(base, sizeof base, s->baseline_ms, s->higher);
  if (s->best_ms > 0 && s->baseline_ms > 0)
    snprintf(line, sizeof line,
             "flagtune sweep %lld %s: best %s vs baseline %s (%.3fx), %d/%d trials", s->sweep_id,
             s->status, best, base, s->baseline_ms / s->best_ms, s->trials_done, s->trials_planned);
  else
    snprintf(line, sizeof line,
             "flagtune sweep %lld %s: no ok trial beats a baseline, %d/%d trials", s->sweep_id,
             s->status, s->trials_done, s->trials_planned);
  put_env("FLAGTUNE_SUMMARY", line);
}

/* The child: its own group (so a timeout ends all it started), stdin from /dev/null, the
 * signals a night ignores back to their defaults. */
static void notify_child(char *const *argv, const char *shell_cmd, const run_process_summary *s) {
  setpgid(0, 0);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, STDIN_FILENO);
  summary_env(s);
  if (argv) {
    execvp(argv[0], argv);
  } else {
    execl("/bin/sh", "sh", "-c", shell_cmd, (char *)NULL);
  }
  fprintf(stderr, "flagtune: warning: notify hook: cannot run %s: %s\n", argv ? argv[0] : "/bin/sh",
          strerror(errno));
  _exit(127);
}

/* Waits for PID up to TIMEOUT_S; 1 when it ended (*status set), 0 on timeout. */
static int wait_for(pid_t pid, double timeout_s, int *status) {
  for (double waited = 0; waited <= timeout_s; waited += 0.02) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return 1;
    usleep(20000);
  }
  return 0;
}

int run_process_notify(char *const *argv, const char *shell_cmd, const run_process_summary *s,
                       double timeout_s) {
  const char *what = argv ? argv[0] : shell_cmd;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    diag_warn("notify hook %s not run: fork: %s", what, strerror(errno));
    return -1;
  }
  if (pid == 0) notify_child(argv, shell_cmd, s);
  setpgid(pid, pid); /* also here: no race with the kill below */
  int status = 0;
  if (!wait_for(pid, timeout_s, &status)) {
    kill(-pid, SIGTERM);
    if (!wait_for(pid, 2, &status)) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    diag_warn("notify hook %s stopped after %g s (its time limit); the sweep's outcome stands",
              what, timeout_s);
    return -1;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFSIGNALED(status))
    diag_warn("notify hook %s killed by signal %d; the sweep's outcome stands", what,
              WTERMSIG(status));
  else
    diag_warn("notify hook %s exited %d; the sweep's outcome stands", what, WEXITSTATUS(status));
  return -1;
}
