/* What can be known about a Slurm sweep before anything is asked of Slurm: srun (and salloc
 * where flagtune asks for the allocation) on $PATH, the partition known to sinfo, a database
 * on a network file system (SQLite's locking and WAL need a local one), the partition's GPUs,
 * nodes and time limit against what a trial asks for, and the CPU share of
 * each step. Split from slurm.c, which runs the executor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "diag.h"
#include "slurm.h"

static int on_path(const char *name) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *copy = xstrdup(path), *save = NULL;
  int found = 0;
  for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
    char *full = xasprintf("%s/%s", *d ? d : ".", name);
    struct stat st;
    found = stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0;
    free(full);
  }
  free(copy);
  return found;
}

long slurm_time_seconds(const char *s) {
  if (!s) return -2;
  if (strcasecmp(s, "infinite") == 0 || strcasecmp(s, "unlimited") == 0 || strcmp(s, "-1") == 0)
    return -1;
  /* As Slurm's time_str2secs reads --time (SchedMD/slurm 284c3b95f0,
   * src/common/parse_time.c:799-836): with a '-', D-HH[:MM[:SS]]; else HH:MM:SS with two
   * colons, MM[:SS] with fewer. sinfo's %l prints "infinite", else the same forms
   * (src/sinfo/print.c:1142-1152). */
  long f[4] = {0, 0, 0, 0}, days = 0;
  int n = 0, dash = 0;
  const char *p = s;
  for (;;) {
    if (*p < '0' || *p > '9') return -2;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
      if (v > 10000000) return -2;
      v = v * 10 + (*p++ - '0');
    }
    if (*p == '-' && !dash && n == 0) {
      dash = 1;
      days = v;
      p++;
      continue;
    }
    if (n == 3) return -2;
    f[n++] = v;
    if (*p == '\0') break;
    if (*p != ':') return -2;
    p++;
  }
  if (dash) return days * 86400 + f[0] * 3600 + f[1] * 60 + f[2]; /* up to D-HH:MM:SS */
  if (n == 3) return f[0] * 3600 + f[1] * 60 + f[2];
  return f[0] * 60 + f[1];
}

/* GPUs of one node from sinfo's %G ("gpu:4", "gpu:a100:8(S:0-1)", "gpu:a100:2,gpu:v100:2",
 * "(null)"): the sum of the counts of its gpu entries. */
static int gres_gpus(const char *g) {
  int total = 0;
  while (g && *g) {
    size_t len = strcspn(g, ",");
    if (strncmp(g, "gpu:", 4) == 0) {
      const char *e = g + len; /* the count is the last ':' field before any '(' */
      const char *paren = memchr(g, '(', len);
      if (paren) e = paren;
      const char *c = e;
      while (c > g && c[-1] != ':') c--;
      total += atoi(c);
    }
    g += len;
    if (*g == ',') g++;
  }
  return total;
}

static char *fmt_time(long secs, char *buf, size_t size) {
  if (secs >= 86400)
    snprintf(buf, size, "%ld-%02ld:%02ld:%02ld", secs / 86400, secs / 3600 % 24, secs / 60 % 60,
             secs % 60);
  else
    snprintf(buf, size, "%02ld:%02ld:%02ld", secs / 3600, secs / 60 % 60, secs % 60);
  return buf;
}

/* The partition has nodes with the GPUs a trial asks for, enough of them, and a time limit the
 * allocation's time fits in: `sinfo -h -p P -o '%G %l %D'`, one line per group of like nodes.
 * A failing or unreadable sinfo proves nothing. */
static int partition_fits(const slurm_opts *o, const char *path, int line, char **err) {
  long want_time = o->time ? slurm_time_seconds(o->time) : -1;
  int gpus = o->gpus_per_trial > 0 ? o->gpus_per_trial : 0;
  int nodes = o->nodes > 1 ? o->nodes : 1;
  char *argv[] = {"sinfo", "-h", "-p", (char *)o->partition, "-o", "%G %l %D", NULL};
  char *out = NULL;
  if (slurm_run(argv, &out) != 0 || !out) {
    free(out);
    return 0;
  }
  int most = 0, total = 0, fit = 0, lines = 0;
  long limit = -3; /* -3: not read */
  char *save = NULL;
  for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char g[256], t[64];
    int count = 0;
    if (sscanf(l, "%255s %63s %d", g, t, &count) != 3 || count <= 0) continue;
    lines++;
    int per = gres_gpus(g);
    long lim = slurm_time_seconds(t);
    if (lim != -2 && (limit == -3 || lim == -1 || (limit != -1 && lim > limit))) limit = lim;
    if (per > most) most = per;
    total += count;
    if (per >= gpus) fit += count;
  }
  free(out);
  if (lines == 0) return 0;
  if (gpus > most)
    return diag_set(err, FT_EINPUT,
                    "%s:%d: gpus_per_trial = %d, but a node of partition '%s' has at most %d "
                    "GPU%s (sinfo -h -p %s -o %%G); ask for %d or fewer, or another partition",
                    path, line, gpus, o->partition, most, most == 1 ? "" : "s", o->partition, most);
  if (nodes > fit) {
    if (gpus > 0 && fit < total)
      return diag_set(err, FT_EINPUT,
                      "%s:%d: executor.nodes = %d, but partition '%s' has %d node%s with %d "
                      "GPUs (of %d nodes); ask for %d or fewer",
                      path, line, nodes, o->partition, fit, fit == 1 ? "" : "s", gpus, total, fit);
    return diag_set(err, FT_EINPUT,
                    "%s:%d: executor.nodes = %d, but partition '%s' has %d node%s (sinfo -h -p "
                    "%s -o %%D); ask for %d or fewer",
                    path, line, nodes, o->partition, total, total == 1 ? "" : "s", o->partition,
                    total);
  }
  if (o->time && limit >= 0 && (want_time == -1 || want_time > limit)) {
    char a[48], b[48];
    if (want_time == -1) snprintf(a, sizeof a, "no limit");
    return diag_set(err, FT_EINPUT,
                    "%s:%d: executor.time '%s' (%s) exceeds partition '%s''s time limit %s "
                    "(sinfo -h -p %s -o %%l); ask for %s or less",
                    path, line, o->time, want_time == -1 ? a : fmt_time(want_time, a, sizeof a),
                    o->partition, fmt_time(limit, b, sizeof b), o->partition, b);
  }
  return 0;
}

int slurm_preflight(const slurm_opts *o, const char *path, int line, int strict, char **err) {
  if (o->time && slurm_time_seconds(o->time) == -2)
    return diag_set(err, FT_EINPUT,
                    "%s:%d: executor.time '%s' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, "
                    "D-HH:MM, D-HH:MM:SS or UNLIMITED)",
                    path, line, o->time);
  const char *inside = getenv("SLURM_JOB_ID");
  int allocates = !o->job_per_trial && !(inside && atoll(inside) > 0);
  const char *need[] = {"srun", allocates ? "salloc" : NULL};
  for (int i = 0; i < 2; i++) {
    if (!need[i] || on_path(need[i])) continue;
    const char *fmt =
        "%s:%d: %sexecutor is slurm, but %s is not a program on $PATH (run "
        "flagtune where Slurm's commands are, or fix PATH)";
    if (strict) return diag_set(err, FT_EINPUT, fmt, path, line, "", need[i]);
    char *msg = xasprintf(fmt, path, line, "warning: ", need[i]);
    diag_error(msg);
    free(msg);
    return 0; /* without Slurm's commands there is nothing more to ask */
  }
  if (!o->partition || !on_path("sinfo")) return 0;
  char *argv[] = {"sinfo", "-h", "-p", (char *)o->partition, "-o", "%P", NULL};
  char *out = NULL;
  int rc = slurm_run(argv, &out);
  int known = rc == 0 && out && out[strspn(out, " \n")] != '\0';
  /* sinfo prints nothing for a partition it does not know; a failing sinfo (no controller)
   * proves nothing. */
  if (rc != 0 && !(out && strstr(out, "does not exist"))) {
    if (out) out[strcspn(out, "\n")] = '\0';
    diag_warn("%s:%d: warning: cannot check executor.partition '%s': sinfo failed (exit %d: %s)",
              path, line, o->partition, rc, out && *out ? out : "no output");
    free(out);
    return 0;
  }
  free(out);
  if (known) return partition_fits(o, path, line, err);
  char *all = NULL;
  char *list[] = {"sinfo", "-h", "-o", "%P", NULL};
  if (slurm_run(list, &all) == 0 && all) {
    for (char *p = all; *p; p++)
      if (*p == '\n') *p = ' ';
    size_t n = strlen(all);
    while (n > 0 && all[n - 1] == ' ') all[--n] = '\0';
  }
  int r =
      diag_set(err, FT_EINPUT,
               "%s:%d: executor.partition '%s' does not exist (sinfo -h -p %s lists nothing)%s%s",
               path, line, o->partition, o->partition, all && *all ? "; partitions: " : "",
               all && *all ? all : "");
  free(all);
  return r;
}

/* statfs(2)'s f_type of the file systems SQLite cannot lock reliably. */
enum {
  NFS_MAGIC = 0x6969,
  LUSTRE_MAGIC = 0x0BD00BD0,
  GPFS_MAGIC = 0x47504653,
};

const char *slurm_network_fs(const char *db_path) {
  char *dir = xstrdup(db_path && *db_path ? db_path : ".");
  struct statfs sf;
  int rc = statfs(dir, &sf);
  if (rc != 0) { /* the database may not exist yet: its directory */
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
      *slash = '\0';
    else if (slash)
      slash[1] = '\0';
    else
      snprintf(dir, strlen(dir) + 1, ".");
    rc = statfs(dir, &sf);
  }
  free(dir);
  if (rc != 0) return NULL;
  switch ((unsigned long)sf.f_type) {
    case NFS_MAGIC:
      return "NFS";
    case LUSTRE_MAGIC:
      return "Lustre";
    case GPFS_MAGIC:
      return "GPFS";
    default:
      return NULL;
  }
}

int slurm_cpus_per_task(const slurm_opts *o) {
  int tasks = o->tasks_per_node > 0 ? o->tasks_per_node : 1;
  if (o->cpus_per_trial > 0) return o->cpus_per_trial / tasks > 0 ? o->cpus_per_trial / tasks : 1;
  for (int i = 0; o->extra && o->extra[i]; i++) {
    const char *a = o->extra[i];
    if (strncmp(a, "--cpus-per-task=", 16) == 0) return atoi(a + 16);
    if (strncmp(a, "-c", 2) == 0 && a[2]) return atoi(a + 2);
    if (strcmp(a, "-c") == 0 && o->extra[i + 1]) return atoi(o->extra[i + 1]);
  }
  const char *job = getenv("SLURM_JOB_ID"), *c = getenv("SLURM_CPUS_PER_TASK");
  if (!o->job_per_trial && job && atoll(job) > 0 && c && atoi(c) > 0) return atoi(c);
  return 0;
}
