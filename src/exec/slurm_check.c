/* What can be known about a Slurm sweep before anything is asked of Slurm: srun (and salloc
 * where flagtune asks for the allocation) on $PATH, the partition known to sinfo, a database
 * on a network file system (SQLite's locking and WAL need a local one), and the CPU share of
 * each step. Split from slurm.c, which runs the executor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int slurm_preflight(const slurm_opts *o, const char *path, int line, int strict, char **err) {
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
  if (known) return 0;
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
