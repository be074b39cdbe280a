/* Launch building: a rendered proposal into the argv, environment and log of one phase of
 * one trial, and the slots' GPUs. Owns the FLAGTUNE_* variables a trial sees and the
 * profile-path placeholder's substitution. Must not start processes, touch the store, or
 * know any flag by name (proposals arrive rendered: lua/host.lua, lua/pgle.lua). */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "json.h"

enum { MAX_EXTRA = 6 };

/* S with every PROPOSAL_PROFILE_PATH replaced by PATH (empty when PATH is NULL). */
static char *with_profile_path(const char *s, const char *path) {
  const char *hole = strstr(s, PROPOSAL_PROFILE_PATH);
  if (!hole) return xstrdup(s);
  char *rest = with_profile_path(hole + strlen(PROPOSAL_PROFILE_PATH), path);
  char *out = xasprintf("%.*s%s%s", (int)(hole - s), s, path ? path : "", rest);
  free(rest);
  return out;
}

/* The phase's settings with the profile path filled in; values are new strings (free them
 * with free_values), names are borrowed. */
static setting *phase_settings(const proposal *p, const launch_where *w, int *n) {
  const setting *src = w->profile ? p->profile : p->settings;
  *n = w->profile ? p->n_profile : p->n_settings;
  setting *out = xcalloc((size_t)*n + 1, sizeof *out);
  for (int i = 0; i < *n; i++) {
    out[i] = src[i];
    out[i].value = with_profile_path(src[i].value, w->profile_path);
  }
  return out;
}

static void free_values(setting *s, int n) {
  for (int i = 0; i < n; i++) free((char *)s[i].value);
  free(s);
}

/* The sweep's own persistent compilation cache: LOG_DIR/jax-cache, absolute (a trial may
 * run elsewhere). Caller frees. */
char *launch_cache_dir(const char *log_dir) {
  char *cwd = log_dir[0] == '/' ? NULL : launch_cwd();
  char *abs = launch_absolute(log_dir, cwd);
  char *dir = xasprintf("%s/" LAUNCH_CACHE_NAME, abs);
  free(abs);
  free(cwd);
  return dir;
}

/* The value of NAME in ENVP (borrowed), NULL when unset. */
static const char *envp_get(char *const *envp, const char *name) {
  size_t n = strlen(name);
  for (int i = 0; envp && envp[i]; i++)
    if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=') return envp[i] + n + 1;
  return NULL;
}

/* Makes LOG_DIR/jax-cache (0700) and says whether it is safely ours: a directory we own that
 * nobody else may write, in a log directory others cannot write without the sticky bit
 * (anyone else could plant compiled programs the trials would run). The log directory is the
 * sweep's (made when it starts); one removed under the sweep is not made again here, so its
 * loss is reported as the trials' logs report it, and the trials run uncached. */
static int cache_dir_made(const char *log_dir) {
  int dfd = open(log_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ok = 0;
  struct stat st;
  if (dfd >= 0 && fstat(dfd, &st) == 0 && !((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))) {
    int made = mkdirat(dfd, LAUNCH_CACHE_NAME, 0700) == 0 || errno == EEXIST;
    if (made && fstatat(dfd, LAUNCH_CACHE_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0)
      ok = S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
  }
  if (dfd >= 0) close(dfd);
  return ok;
}

/* cache_dir_made's answer for CACHE_DIR (LOG_DIR's, absolute) at each trial, in two stat calls
 * while the directory is there (no descriptor, no mkdir): the same checks, made by path, as
 * JAX will use it. One that is not there any more is made again by cache_dir_made. */
static int cache_dir_ready(const char *log_dir, const char *cache_dir) {
  struct stat st;
  if (stat(log_dir, &st) != 0 || ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))) return 0;
  if (lstat(cache_dir, &st) != 0) return errno == ENOENT && cache_dir_made(log_dir);
  return S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int launch_build(const experiment *e, const proposal *p, const launch_where *w, char *const *base,
                 launch *out, char **err) {
  memset(out, 0, sizeof *out);
  int steps = w->profile && e->pgle_steps > 0 ? e->pgle_steps : w->steps;
  int rc = trialcfg_argv(w->profile ? e->pgle_command : e->command, steps, &out->argv, err);
  if (rc) return rc;
  char *extra[MAX_EXTRA + 1] = {0};
  int k = 0, n = 0;
  extra[k++] = xasprintf("FLAGTUNE_TRIAL=%d", w->number);
  extra[k++] = xasprintf("FLAGTUNE_SWEEP=%lld", (long long)w->sweep_id);
  extra[k++] = xasprintf("FLAGTUNE_STEPS=%d", steps);
  if (w->devices) extra[k++] = xasprintf("CUDA_VISIBLE_DEVICES=%s", w->devices);
  if (w->profile) extra[k++] = xasprintf("FLAGTUNE_PGLE_PROFILE=%s", w->profile_path);
  /* Each sweep compiles a program once: trials with the same XLA_FLAGS (re-measured
   * baselines, confirmation runs, settings only the runtime reads) hit its cache. Any
   * JAX_COMPILATION_CACHE_DIR the user set, empty included (jax then caches nothing:
   * jax/_src/compilation_cache.py:250), wins. A directory that is not safely ours leaves
   * the trial uncached, never failed. */
  char *cache_dir = w->log_dir ? launch_cache_dir(w->log_dir) : NULL;
  char *cache_env = cache_dir ? xasprintf("JAX_COMPILATION_CACHE_DIR=%s", cache_dir) : NULL;
  char *defaults[] = {cache_env, NULL};
  setting *settings = phase_settings(p, w, &n);
  rc = trialcfg_env_defaults(base, settings, n, p->unset, extra, defaults, &out->env, err);
  const char *chosen = rc ? NULL : envp_get(out->env.envp, "JAX_COMPILATION_CACHE_DIR");
  if (chosen && cache_dir && strcmp(chosen, cache_dir) == 0 &&
      !cache_dir_ready(w->log_dir, cache_dir)) {
    trialcfg_env_free(&out->env);
    rc = trialcfg_env(base, settings, n, p->unset, extra, &out->env, err);
  }
  free_values(settings, n);
  for (int i = 0; i < k; i++) free(extra[i]);
  free(cache_env);
  free(cache_dir);
  if (rc) {
    launch_free(out);
    return rc;
  }
  out->log_path =
      xasprintf("%s/trial-%04d%s.log", w->log_dir, w->number, w->profile ? ".profile" : "");
  return 0;
}

void launch_free(launch *l) {
  trialcfg_free_strv(l->argv);
  trialcfg_env_free(&l->env);
  free(l->log_path);
  memset(l, 0, sizeof *l);
}

char *launch_env_json(const proposal *p) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; i < p->n_settings; i++)
    if (p->settings[i].target == TARGET_ENV)
      cJSON_AddStringToObject(o, p->settings[i].name, p->settings[i].value);
  char *s = json_print(o);
  cJSON_Delete(o);
  return s;
}

char *launch_argv_json(char *const *argv) {
  cJSON *a = cJSON_CreateArray();
  for (char *const *p = argv; *p; p++) cJSON_AddItemToArray(a, cJSON_CreateString(*p));
  char *s = json_print(a);
  cJSON_Delete(a);
  return s;
}

/* Appends ID to the comma-separated list *LIST. */
static void list_add(char **list, const char *id) {
  char *grown = xasprintf("%s%s%s", *list ? *list : "", *list ? "," : "", id);
  free(*list);
  *list = grown;
}

int launch_plan_devices(int gpus_per_trial, int parallel, const char *visible, int present,
                        char ***devices, char **err) {
  *devices = xcalloc((size_t)parallel + 1, sizeof(char *));
  int need = gpus_per_trial * parallel, have = 0;
  if (need == 0) return 0;
  char **ids = xcalloc((size_t)need, sizeof(char *));
  if (visible && *visible) {
    char *copy = xstrdup(visible), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && have < need;
         tok = strtok_r(NULL, ",", &save))
      ids[have++] = xstrdup(tok);
    free(copy);
  } else {
    int n = present > 0 && present < need ? present : need;
    for (; have < n; have++) ids[have] = xasprintf("%d", have);
  }
  int rc = 0;
  if (have < need)
    rc = diag_set(err, FT_EINPUT, "parallel = %d with gpus_per_trial = %d needs %d GPUs, but %s %d",
                  parallel, gpus_per_trial, need,
                  visible && *visible ? "CUDA_VISIBLE_DEVICES lists" : "nvidia-smi lists", have);
  for (int i = 0; i < need && rc == 0; i++) list_add(&(*devices)[i / gpus_per_trial], ids[i]);
  for (int i = 0; i < have; i++) free(ids[i]);
  free(ids);
  return rc;
}

void launch_devices_free(char **devices, int parallel) {
  for (int i = 0; devices && i < parallel; i++) free(devices[i]);
  free(devices);
}

/* The last component of PATH (borrowed). */
static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

char *launch_log_dir(const char *db_path, const char *override, int64_t id, int resumed) {
  const char *name = base_name(db_path);
  if (!*name) name = "flagtune.db";
  char *root;
  if (override && *override)
    root = xstrdup(override);
  else if (base_name(db_path) != db_path)
    root = xasprintf("%.*s/flagtune-logs", (int)(base_name(db_path) - db_path - 1), db_path);
  else
    root = xstrdup("flagtune-logs");
  char *keyed = xasprintf("%s/%s/sweep-%lld", root, name, (long long)id);
  /* A sweep logged before logs were keyed by database goes on where its logs are. */
  char *legacy = xasprintf("%s/sweep-%lld", root, (long long)id);
  struct stat st;
  char *dir = keyed;
  if (resumed && stat(keyed, &st) != 0 && stat(legacy, &st) == 0 && S_ISDIR(st.st_mode))
    dir = legacy;
  if (dir != keyed) free(keyed);
  if (dir != legacy) free(legacy);
  free(root);
  return dir;
}

int launch_make_dirs(const char *path, char **err) {
  char *copy = xstrdup(path);
  for (char *p = copy + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(copy, 0777) != 0 && errno != EEXIST) break;
    *p = '/';
  }
  int rc = 0;
  if (mkdir(copy, 0777) != 0 && errno != EEXIST)
    rc = diag_set(err, FT_ESYS, "cannot create log directory %s: %s", copy, strerror(errno));
  free(copy);
  return rc;
}

/* ---- where a sweep runs: its directory and its command as `run` resolved them ---- */

char *launch_cwd(void) {
  char buf[4096];
  return getcwd(buf, sizeof buf) ? xstrdup(buf) : NULL;
}

/* PATH made absolute against DIR (a copy). */
char *launch_absolute(const char *path, const char *dir) {
  if (path[0] == '/' || !dir) return xstrdup(path);
  return xasprintf("%s/%s", dir, path);
}

char *launch_which(const char *name, const char *path_value, const char *dir) {
  if (!path_value || !*path_value) return NULL;
  for (const char *p = path_value;;) {
    size_t n = strcspn(p, ":");
    char *full = n == 0 ? (dir ? xasprintf("%s/%s", dir, name) : xasprintf("./%s", name))
                 : p[0] == '/' || !dir ? xasprintf("%.*s/%s", (int)n, p, name)
                                       : xasprintf("%s/%.*s/%s", dir, (int)n, p, name);
    struct stat st;
    if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0) return full;
    free(full);
    if (!p[n]) return NULL; /* a trailing ':' leaves one more, empty, entry */
    p += n + 1;
  }
}

/* argv[0] as a trial started in TRIAL_DIR would run it: a name without '/' found on $PATH, a
 * relative path made absolute against the trial's directory; unchanged when not found. */
static char *resolve_program(const char *prog, const char *trial_dir) {
  if (strchr(prog, '/')) return launch_absolute(prog, trial_dir);
  char *found = launch_which(prog, getenv("PATH"), trial_dir);
  return found ? found : xstrdup(prog);
}

char *launch_command_json(const experiment *e, const char *cwd) {
  char *trial_dir = e->workdir ? launch_absolute(e->workdir, cwd) : cwd ? xstrdup(cwd) : NULL;
  cJSON *cmd = cJSON_CreateArray();
  for (int i = 0; e->command && e->command[i]; i++) {
    char *arg = i == 0 ? resolve_program(e->command[i], trial_dir) : xstrdup(e->command[i]);
    cJSON_AddItemToArray(cmd, cJSON_CreateString(arg));
    free(arg);
  }
  char *out = json_print(cmd);
  cJSON_Delete(cmd);
  free(trial_dir);
  return out;
}

/* On resume: the stored command's argv[0] (as `run` resolved it) replaces the template's,
 * when the template still has the stored shape. */
void launch_use_stored_command(experiment *e, const char *command_json) {
  cJSON *cmd = command_json ? cJSON_Parse(command_json) : NULL;
  int n = 0;
  while (e->command && e->command[n]) n++;
  const cJSON *first = cJSON_GetArrayItem(cmd, 0);
  if (n > 0 && cJSON_GetArraySize(cmd) == n && cJSON_IsString(first)) {
    free(e->command[0]);
    e->command[0] = xstrdup(first->valuestring);
  }
  cJSON_Delete(cmd);
}
