/* The trial supervisor's cgroup v2 (supervise_impl.h): where trial cgroups go, making one per
 * trial (a child of the supervisor's own), counting, killing (cgroup.kill) and removing it,
 * and removing the stale ones of supervisors that died. Silently nothing where cgroup v2 is
 * missing or not writable. Libc only (built into flagtune-supervise). Must not know about the
 * command or the report. */
#define _GNU_SOURCE /* O_DIRECTORY */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise_impl.h"

/* ---- the cgroup ------------------------------------------------------------------------- */

/* Where cgroup v2 is mounted (from /proc/self/mountinfo, field 5 of a "cgroup2" line). */
static int cgroup2_mount(char *out, size_t n) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return 0;
  char line[1024];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    const char *sep = strstr(line, " - ");
    if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0) continue;
    char mnt[512];
    if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1 && strlen(mnt) < n && !strchr(mnt, '\\')) {
      snprintf(out, n, "%s", mnt);
      found = 1;
    }
  }
  fclose(f);
  return found;
}

/* This process's cgroup v2 path (the "0::" line of /proc/self/cgroup). */
static int cgroup_self(char *out, size_t n) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return 0;
  char line[1024];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, "0::", 3) != 0) continue;
    line[strcspn(line, "\n")] = '\0';
    if (strlen(line + 3) < n) {
      snprintf(out, n, "%s", strcmp(line + 3, "/") == 0 ? "" : line + 3);
      found = 1;
    }
  }
  fclose(f);
  return found;
}

/* Removes the cgroups of supervisors that are gone (one killed by SIGKILL cannot remove its
 * own) from PARENT: only "flagtune-trial-PID" whose PID no longer exists, and rmdir() removes
 * a cgroup only when it is empty. */
static void cgroup_sweep_stale(const char *parent) {
  DIR *d = opendir(parent);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    char *end = NULL;
    if (strncmp(de->d_name, "flagtune-trial-", 15) != 0) continue;
    long pid = strtol(de->d_name + 15, &end, 10);
    if (*end || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    char path[SUP_PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", parent, de->d_name);
    rmdir(path);
  }
  closedir(d);
}

/* Where this process's trial cgroups go (the cgroup v2 mount and our own cgroup's path), found
 * once per process: the fork server primes it (sup_cgroup_prime), so that its spares and the
 * supervisors it forks inherit it instead of each reading /proc/self/mountinfo and
 * /proc/self/cgroup again (they are in the server's cgroup until their command starts). */
static char cg_parent[SUP_PATH_MAX + 16];
static int cg_parent_known; /* 0: not looked up yet; 1: found; -1: none */

void sup_cgroup_prime(void) {
  if (cg_parent_known) return;
  char mnt[512], self[512];
  cg_parent_known = -1;
  if (!cgroup2_mount(mnt, sizeof mnt) || !cgroup_self(self, sizeof self)) return;
  int n = snprintf(cg_parent, sizeof cg_parent, "%s%s", mnt, self);
  if (n > 0 && n < (int)sizeof cg_parent) cg_parent_known = 1;
  sup_cgroup_sweep();
}

void sup_cgroup_sweep(void) {
  if (cg_parent_known == 1) cgroup_sweep_stale(cg_parent);
}

/* Makes the trial's cgroup, a child of our own, when cgroup v2 is there and writable;
 * otherwise leaves CG empty and says nothing (containers often allow none). */
void sup_cgroup_begin(sup_cgroup *cg, int wanted) {
  cg->dir[0] = '\0';
  cg->dir_fd = -1;
  cg->procs_fd = -1;
  cg->drained = 0;
  if (!wanted) return;
  sup_cgroup_prime();
  if (cg_parent_known != 1) return;
  int n = snprintf(cg->dir, sizeof cg->dir, "%s/flagtune-trial-%d", cg_parent, (int)getpid());
  /* EEXIST: a stale one of an earlier process with our pid, removed if empty. */
  if (n <= 0 || n >= (int)sizeof cg->dir ||
      (mkdir(cg->dir, 0755) != 0 &&
       (errno != EEXIST || rmdir(cg->dir) != 0 || mkdir(cg->dir, 0755) != 0))) {
    cg->dir[0] = '\0';
    return;
  }
  char path[SUP_PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/cgroup.procs", cg->dir);
  cg->procs_fd = open(path, O_WRONLY | O_CLOEXEC);
  cg->dir_fd = open(cg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg->procs_fd < 0) {
    if (cg->dir_fd >= 0) close(cg->dir_fd);
    cg->dir_fd = -1;
    rmdir(cg->dir);
    cg->dir[0] = '\0';
  }
}

/* How many processes are in the trial's cgroup now. */
static int cgroup_count(const sup_cgroup *cg) {
  char path[SUP_PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/cgroup.procs", cg->dir);
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  int n = 0, c, at_bol = 1;
  while ((c = fgetc(f)) != EOF) {
    if (at_bol && c != '\n') n++;
    at_bol = c == '\n';
  }
  fclose(f);
  return n;
}

/* Kills what is still in the trial's cgroup (cgroup.kill, kernel 5.14+), waits for it to
 * empty and removes it. Returns how many processes were still in it. */
int sup_cgroup_end(sup_cgroup *cg) {
  if (!cg->dir[0]) return 0;
  if (cg->procs_fd >= 0) close(cg->procs_fd);
  if (cg->dir_fd >= 0) close(cg->dir_fd);
  cg->procs_fd = cg->dir_fd = -1;
  char path[SUP_PATH_MAX + 16];
  int left = cg->drained ? 0 : cgroup_count(cg);
  if (left > 0) {
    snprintf(path, sizeof path, "%s/cgroup.kill", cg->dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t w = write(fd, "1", 1);
      (void)w;
      close(fd);
    }
  }
  for (int i = 0; i < 200; i++) { /* a killed cgroup empties within milliseconds */
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    if (rmdir(cg->dir) == 0 || errno != EBUSY) break;
    usleep(5000);
  }
  cg->dir[0] = '\0';
  return left;
}

/* Empties the trial's cgroup: when processes are still in it, kills them and removes it
 * (sup_cgroup_end); when it is empty, leaves its removal (rmdir, 150 µs and more here) to
 * sup_cgroup_end after the trial's end is reported. Returns how many were still in it. */
int sup_cgroup_drain(sup_cgroup *cg) {
  if (!cg->dir[0]) return 0;
  if (cgroup_count(cg) == 0) {
    cg->drained = 1;
    return 0;
  }
  return sup_cgroup_end(cg);
}
