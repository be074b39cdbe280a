/* Unit tests for the trial supervisor's containment (supervise.c), without a loop: the
 * supervisor runs in a forked child that leads its own session, as the executor would start
 * it, with its report on a pipe and the command's stdout in a file. Each case checks that
 * every process the command started is gone once the supervisor has exited, by the /proc walk
 * alone (--no-cgroup) and with the cgroup where this machine allows one. The executor-level
 * cases (timeouts, kill at once, the record) are in test_exec.c. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise.h"
#include "test.h"

typedef struct {
  int status;       /* the supervisor's wait status */
  char report[256]; /* everything it wrote on its report fd */
  int helpers[8];   /* pids the command announced ("helper PID") */
  int n_helpers;
  int pid;         /* the supervisor's */
  char first[256]; /* the command's first stdout line */
} sup_run;

/* Runs `__supervise [--no-cgroup] --grace GRACE --report FD -- ARGV...` in a child. With
 * DEAD_READER the report pipe's read end is closed before the command runs, as when the
 * orchestrator reading it has been SIGKILLed. */
static void supervise_as(sup_run *r, int cgroup, const char *grace, char **cmd, int dead_reader) {
  memset(r, 0, sizeof *r);
  char out[64];
  snprintf(out, sizeof out, "/tmp/ft-sup-out-%d", (int)getpid());
  int rep[2];
  CHECK_INT(pipe(rep), 0);
  char fd[16];
  snprintf(fd, sizeof fd, "%d", rep[1]);
  char *argv[32] = {"__supervise", "--grace", (char *)grace, "--report", fd};
  int argc = 5;
  if (!cgroup) argv[argc++] = "--no-cgroup";
  argv[argc++] = "--";
  for (int i = 0; cmd[i] && argc < 31; i++) argv[argc++] = cmd[i];
  argv[argc] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    close(rep[0]);
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    close(o);
    _exit(supervise_main(argc, argv));
  }
  r->pid = (int)pid;
  close(rep[1]);
  if (dead_reader) close(rep[0]);
  size_t n = 0;
  ssize_t k;
  while (!dead_reader && (k = read(rep[0], r->report + n, sizeof r->report - 1 - n)) > 0)
    n += (size_t)k;
  r->report[n] = '\0';
  if (!dead_reader) close(rep[0]);
  while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {
  }
  FILE *f = fopen(out, "r");
  char line[128];
  while (f && fgets(line, sizeof line, f)) {
    if (!r->first[0]) snprintf(r->first, sizeof r->first, "%s", line);
    if (sscanf(line, "helper %d", &r->helpers[r->n_helpers]) == 1 && r->n_helpers < 7)
      r->n_helpers++;
  }
  if (f) fclose(f);
  unlink(out);
}

static void supervise(sup_run *r, int cgroup, const char *grace, char **cmd) {
  supervise_as(r, cgroup, grace, cmd, 0);
}

/* Gone, or a zombie: not a live process. */
static int alive(int pid) {
  char path[64], stat[256] = "";
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(stat, 1, sizeof stat - 1, f);
  fclose(f);
  stat[n] = '\0';
  const char *paren = strrchr(stat, ')');
  return !(paren && paren[1] == ' ' && paren[2] == 'Z');
}

/* Every announced helper is dead right after the supervisor exited: no waiting. */
static int none_alive(const sup_run *r) {
  int ok = 1;
  for (int i = 0; i < r->n_helpers; i++) {
    if (!alive(r->helpers[i])) continue;
    kill(r->helpers[i], SIGKILL); /* clean up what the test started, then fail */
    ok = 0;
  }
  return ok;
}

static int reported_killed(const sup_run *r) {
  const char *k = strstr(r->report, "killed ");
  return k ? atoi(k + 7) : -1;
}

/* The report after its "cgroup DIR" line (there when the command runs in a cgroup of its own,
 * so that the executor can end it should the supervisor die before its cleanup). */
static const char *after_cgroup(const sup_run *r) {
  if (strncmp(r->report, "cgroup /", 8) != 0) return r->report;
  const char *nl = strchr(r->report, '\n');
  return nl ? nl + 1 : "";
}

/* The three ways out of a process group, and the exit code mirrored after the cleanup. */
static void three_escapes(int cgroup) {
  char *cmd[] = {STUB_CHILD, "helper", "600", "setsid-helper", "600", "double-fork", "600",
                 "exit",     "5",      NULL};
  sup_run r;
  supervise(&r, cgroup, "1", cmd);
  CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 5);
  CHECK_INT(r.n_helpers, 3);
  CHECK(none_alive(&r));
  CHECK_INT(reported_killed(&r), 3);
  CHECK(strncmp(after_cgroup(&r), "exit ", 5) == 0);
  /* with a cgroup, its directory comes first: the trial's own, flagtune-trial-PID */
  if (cgroup && strncmp(r.report, "cgroup /", 8) == 0)
    CHECK(strstr(r.report, "/flagtune-trial-") != NULL && after_cgroup(&r) != r.report);
}
TEST(walk_three_escapes) {
  three_escapes(0);
}
TEST(cgroup_three_escapes) {
  three_escapes(1);
}

/* 200 background helpers (the 2-trial sweep left 400): all gone. */
static void many_helpers(int cgroup) {
  char *cmd[] = {"/bin/sh", "-c", "i=0; while [ $i -lt 200 ]; do sleep 600 & i=$((i+1)); done",
                 NULL};
  sup_run r;
  supervise(&r, cgroup, "1", cmd);
  CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
  CHECK_INT(reported_killed(&r), 200);
}
TEST(walk_many_helpers) {
  many_helpers(0);
}
TEST(cgroup_many_helpers) {
  many_helpers(1);
}

/* A command killed by a signal is still mirrored after the cleanup, and a command that
 * leaves nothing reports none. */
TEST(signal_mirrored_after_cleanup) {
  char sig[16];
  snprintf(sig, sizeof sig, "%d", SIGUSR1);
  char *cmd[] = {STUB_CHILD, "helper", "600", "signal", sig, NULL};
  sup_run r;
  supervise(&r, 1, "1", cmd);
  CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGUSR1);
  CHECK(none_alive(&r));
  CHECK_INT(reported_killed(&r), 1);
  char *clean[] = {STUB_CHILD, "text", "1", NULL};
  supervise(&r, 1, "1", clean);
  CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
  CHECK_INT(reported_killed(&r), 0);
}

/* The report's first line: the command's own duration, and no stop reached it. */
TEST(report_duration) {
  char *cmd[] = {STUB_CHILD, "sleep", "0.3", NULL};
  sup_run r;
  supervise(&r, 1, "1", cmd);
  double wall = -1;
  int stopped = -1;
  CHECK(sscanf(after_cgroup(&r), "exit %lf %d", &wall, &stopped) == 2);
  /* at least the sleep; the upper bound only catches a wrong unit or clock (a loaded CI
   * machine has taken 0.45 s and more to start the stub) */
  CHECK(wall >= 0.29 && wall < 5.0);
  CHECK_INT(stopped, 0);
}

/* The trial's cgroup, when one was made, is removed at the end. */
TEST(no_cgroup_left) {
  char *cmd[] = {STUB_CHILD, "helper", "600", NULL};
  sup_run r;
  supervise(&r, 1, "1", cmd);
  CHECK(none_alive(&r));
  FILE *f = fopen("/proc/self/mountinfo", "r");
  char line[1024], mnt[512] = "";
  while (f && fgets(line, sizeof line, f)) {
    const char *sep = strstr(line, " - ");
    if (sep && strncmp(sep + 3, "cgroup2 ", 8) == 0) sscanf(line, "%*s %*s %*s %*s %511s", mnt);
  }
  if (f) fclose(f);
  if (!mnt[0]) return; /* no cgroup v2 here: nothing to leave */
  /* Where one can be made (root, writable), the command ran in it. */
  char *where[] = {"/bin/sh", "-c", "grep ^0:: /proc/self/cgroup", NULL};
  sup_run w;
  supervise(&w, 1, "1", where);
  char want[64];
  snprintf(want, sizeof want, "/flagtune-trial-%d\n", w.pid);
  if (geteuid() == 0 && access(mnt, W_OK) == 0) CHECK(strstr(w.first, want) != NULL);
  fprintf(stderr, "the command's cgroup: %s", w.first);
  char cmdline[700];
  snprintf(cmdline, sizeof cmdline, "find %s -maxdepth 4 -name 'flagtune-trial-%d' | grep -q .",
           mnt, r.pid);
  CHECK(system(cmdline) != 0);
  /* A supervisor killed by SIGKILL cannot remove its cgroup: the next one removes it. */
  if (!(geteuid() == 0 && access(mnt, W_OK) == 0)) return;
  char own[512] = "", stale[1200];
  f = fopen("/proc/self/cgroup", "r");
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "0::", 3) == 0) sscanf(line + 3, "%511s", own);
  if (f) fclose(f);
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, NULL, 0);
  snprintf(stale, sizeof stale, "%s%s/flagtune-trial-%d", mnt, strcmp(own, "/") ? own : "",
           (int)gone);
  CHECK_INT(mkdir(stale, 0755), 0);
  supervise(&r, 1, "1", where);
  CHECK(access(stale, F_OK) != 0);
  if (access(stale, F_OK) == 0) rmdir(stale);
}

/* The orchestrator that reads the report pipe is gone (SIGKILLed): the supervisor's "exit"
 * line then goes to a pipe without a reader. That write once ended the supervisor by SIGPIPE
 * between reaping the command and ending its leftovers, so a setsid() helper outlived the
 * trial (test_contain.sh (d), under load, on both the fork server and the per-trial exec
 * path). Now the write fails, the helpers are ended all the same and the exit is mirrored. */
static void report_reader_gone(int cgroup) {
  char *cmd[] = {STUB_CHILD, "setsid-helper", "600", "helper", "600", "exit", "3", NULL};
  sup_run r;
  supervise_as(&r, cgroup, "1", cmd, 1);
  CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
  CHECK_INT(r.n_helpers, 2);
  CHECK(none_alive(&r));
}
TEST(walk_report_reader_gone) {
  report_reader_gone(0);
}
TEST(cgroup_report_reader_gone) {
  report_reader_gone(1);
}

/* The supervisor ignores SIGPIPE, the command must not inherit that (an ignored disposition
 * survives exec): `yes | head -1` and every Python pipeline rely on the default. */
TEST(command_gets_default_sigpipe) {
  char *cmd[] = {"/bin/sh", "-c", "grep ^SigIgn: /proc/self/status", NULL};
  sup_run r;
  supervise(&r, 0, "1", cmd);
  unsigned long long ign = ~0ULL;
  CHECK(sscanf(r.first, "SigIgn: %llx", &ign) == 1);
  CHECK_INT((int)((ign >> (SIGPIPE - 1)) & 1), 0);
}
