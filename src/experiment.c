/* The experiment file on the C side. Owns reading the file, its hash, the call into
 * lua/dsl.lua (the one place that knows the file's keys and rules), the copy of the
 * validated table into the C struct, the Lua-backed pattern matcher for step times, and
 * handing the installed jax version (the file's software probe) to lua/checks.lua when the
 * file names a catalog entry with a jax release range.
 * Must not validate anything itself (dsl.lua does, with line numbers) and must not run
 * trials or write the store: a loaded experiment is inert data plus two registry refs. */
#include "experiment.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "hardware.h"
#include "store.h"
#include "trialcfg.h"

/* Instructions the experiment file and its validation may use: a file that loops forever
 * fails with its line instead of hanging `flagtune run`. Real files need well under 1M. */
#define LOAD_BUDGET 100000000L
/* One pattern match per output line is a single string.match; the budget only guards it. */
#define MATCH_BUDGET 100000L

/* The public struct first, so experiment_free can cast back. The match function lives
 * here rather than in experiment.h because only experiment_metric's callback needs it. */
/* A pattern metric's dsl.matcher(pattern), kept in the registry. */
typedef struct {
  lhost *h;
  int ref; /* LUA_NOREF for json metrics */
} matcher;

typedef struct {
  experiment pub;
  matcher step, check; /* metric.pattern, metric.check.pattern */
  const char *missing; /* the first key lua/validate.lua left unset (a runtime bug) */
} experiment_impl;

static char *read_all(const char *path, char **err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_set(err, FT_EINPUT, "cannot read %s: %s", path, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  size_t cap = 0, n = 0, r;
  do {
    if (n + 4096 > cap) buf = xrealloc(buf, cap = cap * 2 + 4096);
    r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
  } while (r > 0);
  int failed = ferror(f);
  int saved = errno;
  fclose(f);
  if (failed) {
    free(buf);
    diag_set(err, FT_EINPUT, "cannot read %s: %s", path, strerror(saved));
    return NULL;
  }
  buf[n] = '\0';
  return buf;
}

/* FNV-1a 64 over the bytes: a cheap, stable identity for "the same experiment text". */
static void fnv1a_hex(const char *s, size_t n, char out[17]) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ULL;
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- reading fields of the validated table (plain tables: no metamethods run) ---- */

/* Pushes T[KEY], or nil when T is not a table (so a malformed table never raises). */
static int field(lua_State *L, int t, const char *key) {
  if (lua_type(L, t) != LUA_TTABLE) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  return lua_getfield(L, t, key);
}

/* The string at T[KEY] as a new copy, or NULL when absent. */
static char *get_str(lua_State *L, int t, const char *key) {
  field(L, t, key);
  char *s = lua_type(L, -1) == LUA_TSTRING ? xstrdup(lua_tostring(L, -1)) : NULL;
  lua_pop(L, 1);
  return s;
}

static double get_num(lua_State *L, int t, const char *key, double dflt) {
  field(L, t, key);
  double v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : dflt;
  lua_pop(L, 1);
  return v;
}

static int get_int(lua_State *L, int t, const char *key, int dflt) {
  return (int)get_num(L, t, key, dflt);
}

/* The defaults are lua/validate.lua's, in one place: it fills in every key below, and C
 * reads them without a default of its own. A key it left unset is noted in E (the first
 * one, WHAT names it), for experiment_load to fail on, and reads as 0 or NULL. */
static double need_num(lua_State *L, int t, const char *key, const char *what, experiment *e) {
  field(L, t, key);
  int ok = lua_type(L, -1) == LUA_TNUMBER;
  double v = ok ? lua_tonumber(L, -1) : 0;
  lua_pop(L, 1);
  experiment_impl *x = (experiment_impl *)e;
  if (!ok && !x->missing) x->missing = what;
  return v;
}

static int need_int(lua_State *L, int t, const char *key, const char *what, experiment *e) {
  return (int)need_num(L, t, key, what, e);
}

static char *need_str(lua_State *L, int t, const char *key, const char *what, experiment *e) {
  char *s = get_str(L, t, key);
  experiment_impl *x = (experiment_impl *)e;
  if (!s && !x->missing) x->missing = what;
  return s;
}

/* The array at T[KEY] as a NULL-terminated vector of copies; its length in *N. */
static char **get_strv(lua_State *L, int t, const char *key, int *n) {
  field(L, t, key);
  int len = lua_type(L, -1) == LUA_TTABLE ? (int)lua_rawlen(L, -1) : 0;
  char **v = xcalloc((size_t)len + 1, sizeof *v);
  int k = 0;
  for (int i = 1; i <= len; i++) {
    if (lua_rawgeti(L, -1, i) == LUA_TSTRING) v[k++] = xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (n) *n = k;
  return v;
}

static void copy_metric(lua_State *L, int t, experiment *e) {
  field(L, t, "metric"); /* [..., metric] */
  int m = lua_gettop(L);
  char *kind = get_str(L, m, "kind");
  e->metric = kind && strcmp(kind, "pattern") == 0 ? METRIC_PATTERN : METRIC_JSON;
  free(kind);
  e->metric_field = get_str(L, m, "field");
  e->metric_pattern = get_str(L, m, "pattern");
  e->metric_skip = need_int(L, m, "skip", "metric.skip", e);
  char *reduce = need_str(L, m, "reduce", "metric.reduce", e);
  int r = reduce ? stats_reduce_from_name(reduce) : -1;
  e->metric_reduce = r < 0 ? REDUCE_MEDIAN : (reduce_kind)r;
  free(reduce);
  e->metric_scale = need_num(L, m, "scale", "metric.scale", e);
  char *better = get_str(L, m, "better");
  e->metric_higher = better && strcmp(better, "higher") == 0;
  free(better);
  e->min_steps = need_int(L, m, "min_steps", "metric.min_steps", e);
  if (lua_getfield(L, m, "check") == LUA_TTABLE) { /* [..., metric, check] */
    int c = lua_gettop(L);
    kind = get_str(L, c, "kind");
    e->check_on = 1;
    e->check_kind = kind && strcmp(kind, "pattern") == 0 ? METRIC_PATTERN : METRIC_JSON;
    free(kind);
    e->check_field = get_str(L, c, "field");
    e->check_pattern = get_str(L, c, "pattern");
    e->check_tolerance = need_num(L, c, "tolerance", "metric.check.tolerance", e);
    e->check_abs = need_num(L, c, "abs", "metric.check.abs", e);
  }
  lua_pop(L, 2);
}

static void copy_budget(lua_State *L, int t, experiment *e) {
  field(L, t, "budget"); /* [..., budget] */
  int b = lua_gettop(L);
  e->budget_trials = need_int(L, b, "trials", "budget.trials", e);
  e->budget_hours = need_num(L, b, "hours", "budget.hours", e);
  e->budget_steps = need_int(L, b, "steps", "budget.steps", e);
  lua_pop(L, 1);
}

static void copy_strategy(lua_State *L, int t, experiment *e) {
  field(L, t, "strategy"); /* [..., strategy] */
  int s = lua_gettop(L);
  e->strategy_name = get_str(L, s, "path");
  if (!e->strategy_name) e->strategy_name = need_str(L, s, "name", "strategy.name", e);
  if (!e->strategy_name) e->strategy_name = xstrdup("?");
  e->strategy_desc = get_str(L, s, "desc");
  if (!e->strategy_desc) e->strategy_desc = xasprintf("%s{}", e->strategy_name);
  lua_pop(L, 1);
}

/* confirm = { top, repeats }, prune = { margin, min_steps }, warm_start, pgle: as
 * lua/validate.lua fills them in. */
static void copy_search_options(lua_State *L, int t, experiment *e) {
  field(L, t, "confirm"); /* [..., confirm] */
  e->confirm_top = need_int(L, lua_gettop(L), "top", "confirm.top", e);
  e->confirm_repeats = need_int(L, lua_gettop(L), "repeats", "confirm.repeats", e);
  lua_pop(L, 1);
  field(L, t, "prune"); /* [..., prune] */
  e->prune_margin = need_num(L, lua_gettop(L), "margin", "prune.margin", e);
  e->prune_min_steps = need_int(L, lua_gettop(L), "min_steps", "prune.min_steps", e);
  lua_pop(L, 1);
  field(L, t, "warm_start");
  e->warm_start = lua_toboolean(L, -1);
  lua_pop(L, 1);
  field(L, t, "software_probe");
  e->software_probe_off = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
  lua_pop(L, 1);
  e->software_probe = get_str(L, t, "software_probe");
  field(L, t, "pgle"); /* [..., pgle] */
  int p = lua_gettop(L);
  e->pgle_manual = lua_type(L, p) == LUA_TTABLE;
  e->pgle_steps = e->pgle_manual ? need_int(L, p, "steps", "pgle.steps", e) : 0;
  e->pgle_command = e->pgle_manual ? get_strv(L, p, "command", NULL) : NULL;
  lua_pop(L, 1);
}

/* The validated executor table (lua/dsl.lua's check_executor) into E. */
static void copy_executor(lua_State *L, int t, experiment *e) {
  field(L, t, "executor");
  int x = lua_gettop(L);
  e->executor = need_str(L, x, "kind", "executor.kind", e);
  if (!e->executor) e->executor = xstrdup("?");
  int slurm = strcmp(e->executor, "slurm") == 0;
  e->slurm_partition = get_str(L, x, "partition");
  e->slurm_account = get_str(L, x, "account");
  e->slurm_time = get_str(L, x, "time");
  e->slurm_mode = get_str(L, x, "mode");
  /* A local executor has none of these: one node, one task, the trial's GPUs. */
  e->slurm_nodes = slurm ? need_int(L, x, "nodes", "executor.nodes", e) : 1;
  e->slurm_tasks_per_node =
      slurm ? need_int(L, x, "tasks_per_node", "executor.tasks_per_node", e) : 1;
  e->slurm_gpus_per_trial =
      slurm ? need_int(L, x, "gpus_per_trial", "executor.gpus_per_trial", e) : e->gpus_per_trial;
  e->slurm_extra = get_strv(L, x, "extra", NULL);
  e->slurm_cpus_per_trial =
      slurm ? need_int(L, x, "cpus_per_trial", "executor.cpus_per_trial", e) : 0;
  e->slurm_srun = get_strv(L, x, "srun", NULL);
  lua_pop(L, 1);
}

/* Copies the scalar fields of the validated table at index T into E. */
static void copy_fields(lua_State *L, int t, experiment *e) {
  e->name = get_str(L, t, "name");
  e->model = get_str(L, t, "model");
  e->hardware = get_str(L, t, "hardware");
  e->workdir = get_str(L, t, "workdir");
  e->command = get_strv(L, t, "command", NULL);
  e->on_done = get_strv(L, t, "on_done", NULL);
  field(L, t, "lines"); /* [..., lines] */
  e->command_line = get_int(L, lua_gettop(L), "command", 0);
  e->on_done_line = get_int(L, lua_gettop(L), "on_done", 0);
  e->executor_line = get_int(L, lua_gettop(L), "executor", 0);
  lua_pop(L, 1);
  copy_metric(L, t, e);
  copy_budget(L, t, e);
  e->parallel = need_int(L, t, "parallel", "parallel", e);
  e->gpus_per_trial = need_int(L, t, "gpus_per_trial", "gpus_per_trial", e);
  e->timeout_s = need_num(L, t, "timeout", "timeout", e);
  e->grace_s = need_num(L, t, "grace", "grace", e);
  field(L, t, "seed");
  e->has_seed = lua_type(L, -1) == LUA_TNUMBER;
  e->seed = e->has_seed ? (int64_t)lua_tointeger(L, -1) : 0;
  lua_pop(L, 1);
  e->oom_patterns = get_strv(L, t, "oom_patterns", &e->n_oom_patterns);
  e->invalid_patterns = get_strv(L, t, "invalid_patterns", &e->n_invalid_patterns);
  copy_strategy(L, t, e);
  copy_search_options(L, t, e);
  copy_executor(L, t, e);
  e->warnings = get_strv(L, t, "warnings", &e->n_warnings);
}

/* Warnings stop nothing, so they are printed here, once per load, in the compiler-style
 * form the errors use ("path:line: warning: ..."). */
static void print_warnings(const experiment *e) {
  for (int i = 0; i < e->n_warnings; i++) diag_error(e->warnings[i]);
}

/* n_params and space_size from the space object: size() is a method, so it goes through
 * the protected path like every other call into Lua. */
static int copy_space(lhost *h, int t, experiment *e, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  field(L, t, "space");        /* [space] */
  field(L, top + 1, "params"); /* [space, params] */
  e->n_params = lua_type(L, -1) == LUA_TTABLE ? (int)lua_rawlen(L, -1) : 0;
  lua_pop(L, 1);
  if (field(L, top + 1, "size") != LUA_TFUNCTION) { /* [space, size] */
    lua_settop(L, top);
    return diag_set(err, FT_ELUA, "%s: the space has no size()", e->path);
  }
  lua_pushvalue(L, -2); /* [space, size, space] */
  int rc = lhost_pcall(h, 1, 1, LOAD_BUDGET, err);
  if (rc == 0) e->space_size = lua_tonumber(L, -1);
  lua_settop(L, top);
  return rc;
}

/* Pushes dsl.load's result, or sets *err to its "path:line: message". */
static int call_load(lhost *h, const char *path, const char *text, size_t len,
                     const char *const *imported, int n_imported, char **err) {
  lua_State *L = lhost_state(h);
  int rc = lhost_require(h, "dsl", err);
  if (rc != 0) return rc;
  lua_getfield(L, -1, "load"); /* [dsl, load] */
  lua_remove(L, -2);           /* [load] */
  lua_pushstring(L, path);
  lua_pushlstring(L, text, len); /* [load, path, text] */
  lua_createtable(L, 0, n_imported);
  for (int i = 0; i < n_imported; i++) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, imported[i]);
  } /* [load, path, text, imported] */
  rc = lhost_pcall(h, 3, 1, LOAD_BUDGET, err);
  /* Any error here is the file's: dsl.load raises "path:line: message" for everything. */
  return rc == 0 ? 0 : FT_EINPUT;
}

/* "jax A, jaxlib B" (hardware_software's answer) -> a new "A", or NULL. */
static char *jax_version_of(const char *sw) {
  const char *end = sw && strncmp(sw, "jax ", 4) == 0 ? strchr(sw + 4, ',') : NULL;
  return end ? xstrndup(sw + 4, (size_t)(end - sw - 4)) : NULL;
}

/* The catalog's jax release ranges against the installed jax: when the spec at index T names
 * an entry with a range (checks.has_ranges), runs the experiment's software probe (the one
 * sweeps record) and lets checks.release_warnings append "absent from jax X you have
 * installed" to spec.warnings before copy_fields reads them. A probe that finds no jax only
 * means no such warning; `software_probe = false` skips it. */
static int release_warnings(lhost *h, int t, const char *path, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  field(L, t, "software_probe");
  int off = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
  lua_pop(L, 1);
  int rc = off ? 0 : lhost_require(h, "checks", err); /* [checks] */
  if (off || rc != 0) return rc;
  lua_getfield(L, -1, "has_ranges"); /* [checks, has_ranges] */
  lua_pushvalue(L, t);
  rc = lhost_pcall(h, 1, 1, LOAD_BUDGET, err); /* [checks, bool] */
  if (rc == 0 && lua_toboolean(L, -1)) {
    lua_getfield(L, -2, "release_warnings"); /* [checks, bool, fn] */
    char *probe = get_str(L, t, "software_probe"), *jaxlib = NULL;
    char *sw = hardware_software(probe, &jaxlib), *jax = jax_version_of(sw);
    lua_pushvalue(L, t);
    lua_pushstring(L, path);
    lua_pushstring(L, jax);    /* NULL pushes nil */
    lua_pushstring(L, jaxlib); /* [checks, bool, fn, spec, path, jax, jaxlib] */
    free(probe);
    free(sw);
    free(jax);
    free(jaxlib);
    rc = lhost_pcall(h, 4, 0, LOAD_BUDGET, err);
  }
  lua_settop(L, top);
  return rc;
}

/* Keeps dsl.matcher(PATTERN) in the registry as *M, for match_line. */
static int make_matcher(lhost *h, const char *pattern, matcher *m, char **err) {
  lua_State *L = lhost_state(h);
  int rc = lhost_require(h, "dsl", err);
  if (rc != 0) return rc;
  lua_getfield(L, -1, "matcher"); /* [dsl, matcher] */
  lua_remove(L, -2);
  lua_pushstring(L, pattern); /* [matcher, pattern] */
  rc = lhost_pcall(h, 1, 1, MATCH_BUDGET, err);
  if (rc != 0) return rc;
  m->ref = lhost_ref(h);
  return 0;
}

int experiment_load(lhost *h, const char *path, const char *text, experiment **out, char **err) {
  return experiment_load_with(h, path, text, NULL, 0, out, err);
}

int experiment_load_with(lhost *h, const char *path, const char *text, const char *const *imported,
                         int n, experiment **out, char **err) {
  *out = NULL;
  char *owned = text ? xstrdup(text) : read_all(path, err);
  if (!owned) return FT_EINPUT;
  size_t len = strlen(owned);
  experiment_impl *x = xcalloc(1, sizeof *x);
  experiment *e = &x->pub;
  e->host = h;
  e->spec_ref = LUA_NOREF;
  x->step = x->check = (matcher){.h = h, .ref = LUA_NOREF};
  e->path = xstrdup(path);
  e->text = owned;
  fnv1a_hex(owned, len, e->hash);

  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  int rc = call_load(h, path, owned, len, imported, n, err);
  if (rc != 0) goto cleanup;
  int t = lua_gettop(L); /* [spec] */
  rc = release_warnings(h, t, path, err);
  if (rc != 0) goto cleanup;
  copy_fields(L, t, e);
  if (x->missing)
    rc = diag_set(err, FT_ELUA, "%s: lua/validate.lua left '%s' unset", path, x->missing);
  if (rc == 0) rc = copy_space(h, t, e, err);
  if (rc != 0) goto cleanup;
  e->spec_ref = lhost_ref(h); /* pops the spec */
  print_warnings(e);
  if (e->metric == METRIC_PATTERN) rc = make_matcher(h, e->metric_pattern, &x->step, err);
  if (rc == 0 && e->check_on && e->check_kind == METRIC_PATTERN)
    rc = make_matcher(h, e->check_pattern, &x->check, err);

cleanup:
  lua_settop(L, top);
  if (rc != 0) {
    experiment_free(e);
    return rc;
  }
  *out = e;
  return 0;
}

void experiment_free(experiment *e) {
  if (!e) return;
  experiment_impl *x = (experiment_impl *)e;
  if (e->host) {
    lhost_unref(e->host, e->spec_ref);
    lhost_unref(e->host, x->step.ref);
    lhost_unref(e->host, x->check.ref);
  }
  free(e->path);
  free(e->text);
  free(e->name);
  free(e->model);
  free(e->hardware);
  trialcfg_free_strv(e->command);
  trialcfg_free_strv(e->on_done);
  free(e->workdir);
  free(e->metric_field);
  free(e->metric_pattern);
  free(e->check_field);
  free(e->check_pattern);
  trialcfg_free_strv(e->oom_patterns);
  trialcfg_free_strv(e->invalid_patterns);
  trialcfg_free_strv(e->warnings);
  free(e->strategy_name);
  free(e->strategy_desc);
  free(e->software_probe);
  trialcfg_free_strv(e->pgle_command);
  free(e->executor);
  free(e->slurm_partition);
  free(e->slurm_account);
  free(e->slurm_time);
  free(e->slurm_mode);
  trialcfg_free_strv(e->slurm_extra);
  trialcfg_free_strv(e->slurm_srun);
  free(x);
}

/* parse_step's pattern callback: the number in the pattern's one capture, via
 * string.match under a small budget. Any Lua error counts as "no step time here". */
static int match_line(void *ctx, const char *line, size_t len, double *out) {
  matcher *m = ctx;
  lhost *h = m->h;
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  lhost_push_ref(h, m->ref);
  lua_pushlstring(L, line, len); /* [matcher, line] */
  char *err = NULL;
  int found = 0;
  if (lhost_pcall(h, 1, 1, MATCH_BUDGET, &err) == 0 && lua_type(L, -1) == LUA_TNUMBER) {
    *out = lua_tonumber(L, -1);
    found = 1;
  }
  free(err);
  lua_settop(L, top);
  return found;
}

metric_spec experiment_metric(experiment *e) {
  metric_spec m = {.kind = e->metric,
                   .field = e->metric_field,
                   .scale = e->metric_scale,
                   .rate = e->metric_higher};
  if (e->metric == METRIC_PATTERN) {
    m.match = match_line;
    m.match_ctx = &((experiment_impl *)e)->step;
  }
  return m;
}

metric_spec experiment_check_metric(experiment *e) {
  metric_spec m = {.kind = e->check_kind, .field = e->check_field, .scale = 1, .any_value = 1};
  if (e->check_on && e->check_kind == METRIC_PATTERN) {
    m.match = match_line;
    m.match_ctx = &((experiment_impl *)e)->check;
  }
  return m;
}

void experiment_override_budget(experiment *e, int trials, double hours) {
  e->budget_trials = trials;
  e->budget_hours = hours;
}

int experiment_load_for_db(lhost *h, const char *path, const char *text, const char *db_path,
                           experiment **out, char **err) {
  store *db = NULL;
  cJSON *rows = NULL;
  const char **names = NULL;
  int k = 0;
  if (db_path && store_open(db_path, STORE_READONLY, &db, NULL) == 0 &&
      store_flags_names(db, &rows, NULL) == 0) {
    names = xcalloc((size_t)cJSON_GetArraySize(rows) + 1, sizeof(char *));
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
      if (cJSON_IsString(name)) names[k++] = name->valuestring;
    }
  }
  int rc = experiment_load_with(h, path, text, names, k, out, err);
  free(names);
  cJSON_Delete(rows);
  store_close(db);
  return rc;
}
