/* The trial supervisor (see supervise.h): owns one command's process and the promise that it
 * does not outlive the orchestrator. It must stay small and synchronous: no libuv, no Lua, no
 * store, nothing allocated after fork but what exec needs. Signals are blocked and taken with
 * sigtimedwait(), so there is no asynchronous handler to get wrong.
 *
 * Who signals whom: the executor signals the whole group (kill(-pgid)), which already reaches
 * the command, so a SIGTERM/SIGINT sent by the original parent is not forwarded again (a
 * training script that treats a second SIGTERM as "die now" must see only one). A signal from
 * anyone else (a user's `kill PID`) is forwarded to the group. SIGTERM arriving after the
 * parent is gone (getppid() changed: the kernel's PR_SET_PDEATHSIG) ends the group: SIGTERM,
 * then SIGKILL after the grace. PR_SET_PDEATHSIG fires when the parent *thread* that forked us
 * exits; flagtune spawns from its loop thread, which lives as long as the process. */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SUPERVISE_DEFAULT_GRACE_S 5.0

typedef struct {
  pid_t parent;   /* whose death ends the trial */
  double grace_s; /* SIGTERM to SIGKILL after the parent died */
  char **cmd;     /* NULL-terminated */
} sup_args;

static int usage(void) {
  fprintf(stderr, "usage: flagtune " SUPERVISE_ARG
                  " [--parent PID] [--grace SECONDS] -- COMMAND [ARGS...]\n");
  return 2;
}

static int parse_args(int argc, char **argv, sup_args *a) {
  a->parent = 0;
  a->grace_s = SUPERVISE_DEFAULT_GRACE_S;
  a->cmd = NULL;
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (strcmp(argv[i], "--") == 0) {
      if (i + 1 >= argc) return -1;
      a->cmd = argv + i + 1;
      return 0;
    }
    if (i + 1 >= argc) return -1;
    if (strcmp(argv[i], "--parent") == 0) {
      long v = strtol(argv[++i], &end, 10);
      if (*end || v <= 0) return -1;
      a->parent = (pid_t)v;
    } else if (strcmp(argv[i], "--grace") == 0) {
      double v = strtod(argv[++i], &end);
      if (*end || !(v >= 0 && v <= 86400)) return -1;
      a->grace_s = v;
    } else {
      return -1;
    }
  }
  return -1;
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The message and exit code for a command that could not be executed (shell conventions). */
static int report_exec_error(const char *file, int err) {
  if (err == ENOENT || err == ENOTDIR) {
    fprintf(stderr, "command not found: %s\n", file);
    return 127;
  }
  if (err == EACCES)
    fprintf(stderr, "permission denied: %s\n", file);
  else
    fprintf(stderr, "cannot start %s: %s\n", file, strerror(err));
  return 126;
}

/* In the child: the mask and dispositions the command expects, then exec. On failure errno
 * goes back through the close-on-exec pipe and the child leaves without a word. */
static void run_child(char **cmd, const sigset_t *old, int errfd) {
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  sigprocmask(SIG_SETMASK, old, NULL);
  execvp(cmd[0], cmd);
  int e = errno;
  ssize_t w = write(errfd, &e, sizeof e);
  (void)w;
  _exit(127);
}

/* Starts the command. Returns its pid, or 0 with *code set when it could not be executed. */
static pid_t start(char **cmd, const sigset_t *old, int *code) {
  int p[2];
  if (pipe(p) != 0) {
    *code = report_exec_error(cmd[0], errno);
    return 0;
  }
  fcntl(p[0], F_SETFD, FD_CLOEXEC);
  fcntl(p[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    run_child(cmd, old, p[1]);
  }
  int saved = errno;
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    *code = report_exec_error(cmd[0], saved);
    return 0;
  }
  int e = 0;
  ssize_t n;
  do n = read(p[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close(p[0]);
  if (n == (ssize_t)sizeof e) { /* exec failed: the child is leaving; reap it quietly */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    *code = report_exec_error(cmd[0], e);
    return 0;
  }
  return pid;
}

/* Ends this process the way the command ended: same exit code, or the same signal. */
static int mirror(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  int sig = WTERMSIG(status);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core); /* the command's crash, not ours: no second core file */
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  raise(sig);
  return 128 + sig; /* a signal whose default is not to terminate */
}

/* Reaps the command if it has ended. Returns 1 with *status set when it has. */
static int reaped(pid_t child, int *status) {
  pid_t r;
  while ((r = waitpid(child, status, WNOHANG)) < 0 && errno == EINTR) {
  }
  return r == child;
}

/* The parent is gone: SIGTERM to the group now, SIGKILL once the command ended or the grace
 * ran out. The final SIGKILL reaches this process too, which is the point: nothing is left. */
static void end_group(pid_t child, double grace_s) {
  kill(0, SIGTERM);
  double until = mono_s() + grace_s;
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  int status;
  while (!reaped(child, &status)) {
    double left = until - mono_s();
    if (left <= 0) break;
    struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    sigtimedwait(&chld, NULL, &ts);
  }
  kill(0, SIGKILL);
}

static int watch(pid_t child, pid_t parent, double grace_s) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  for (;;) {
    int status;
    if (reaped(child, &status)) return mirror(status);
    if (getppid() != parent) {
      end_group(child, grace_s);
      return 1;
    }
    siginfo_t si;
    struct timespec poll = {1, 0}; /* a parent death between checks is seen within a second */
    int sig = sigtimedwait(&set, &si, &poll);
    if (sig <= 0 || sig == SIGCHLD) continue;
    if (getppid() != parent) continue; /* the kernel's death signal: handled above */
    if (si.si_pid == getpid() || si.si_pid == parent) continue; /* the group already has it */
    kill(0, sig);
  }
}

int supervise_main(int argc, char **argv) {
  sup_args a;
  if (parse_args(argc, argv, &a) != 0) return usage();
  if (a.parent == 0) a.parent = getppid();
  /* Lead a group of our own, so that group signals never reach whoever started us. Under
   * the executor (spawned detached) we already do. */
  if (getpgrp() != getpid()) setpgid(0, 0);
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, &old);
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != a.parent)
    return 1; /* the parent died before we could ask to be told: start nothing */
  int code = 0;
  pid_t child = start(a.cmd, &old, &code);
  if (child == 0) return code;
  return watch(child, a.parent, a.grace_s);
}
