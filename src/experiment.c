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
  e->metric_skip = get_int(L, m, "skip", 0);
  char *reduce = get_str(L, m, "reduce");
  int r = reduce ? stats_reduce_from_name(reduce) : -1;
  e->metric_reduce = r < 0 ? REDUCE_MEDIAN : (reduce_kind)r;
  free(reduce);
  e->metric_scale = get_num(L, m, "scale", 1);
  char *better = get_str(L, m, "better");
  e->metric_higher = better && strcmp(better, "higher") == 0;
  free(better);
  e->min_steps = get_int(L, m, "min_steps", e->metric_skip + 1);
  if (lua_getfield(L, m, "check") == LUA_TTABLE) { /* [..., metric, check] */
    int c = lua_gettop(L);
    kind = get_str(L, c, "kind");
    e->check_on = 1;
    e->check_kind = kind && strcmp(kind, "pattern") == 0 ? METRIC_PATTERN : METRIC_JSON;
    free(kind);
    e->check_field = get_str(L, c, "field");
    e->check_pattern = get_str(L, c, "pattern");
    e->check_tolerance = get_num(L, c, "tolerance", 0.02);
    e->check_abs = get_num(L, c, "abs", 0);
  }
  lua_pop(L, 2);
}

static void copy_budget(lua_State *L, int t, experiment *e) {
  field(L, t, "budget"); /* [..., budget] */
  int b = lua_gettop(L);
  e->budget_trials = get_int(L, b, "trials", 20);
  e->budget_hours = get_num(L, b, "hours", 0);
  e->budget_steps = get_int(L, b, "steps", 0);
  lua_pop(L, 1);
}

static void copy_strategy(lua_State *L, int t, experiment *e) {
  field(L, t, "strategy"); /* [..., strategy] */
  int s = lua_gettop(L);
  e->strategy_name = get_str(L, s, "path");
  if (!e->strategy_name) e->strategy_name = get_str(L, s, "name");
  if (!e->strategy_name) e->strategy_name = xstrdup("random");
  e->strategy_desc = get_str(L, s, "desc");
  if (!e->strategy_desc) e->strategy_desc = xasprintf("%s{}", e->strategy_name);
  lua_pop(L, 1);
}

/* confirm = { top, repeats }, prune = { margin, min_steps }, warm_start: the defaults
 * below are the ones lua/dsl.lua fills in. */
static void copy_search_options(lua_State *L, int t, experiment *e) {
  field(L, t, "confirm"); /* [..., confirm] */
  e->confirm_top = get_int(L, lua_gettop(L), "top", 3);
  e->confirm_repeats = get_int(L, lua_gettop(L), "repeats", 1);
  lua_pop(L, 1);
  field(L, t, "prune"); /* [..., prune] */
  e->prune_margin = get_num(L, lua_gettop(L), "margin", 0.25);
  e->prune_min_steps = get_int(L, lua_gettop(L), "min_steps", 3);
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
  e->pgle_steps = get_int(L, p, "steps", 0);
  e->pgle_command = e->pgle_manual ? get_strv(L, p, "command", NULL) : NULL;
  lua_pop(L, 1);
}

/* The validated executor table (lua/dsl.lua's check_executor) into E. */
static void copy_executor(lua_State *L, int t, experiment *e) {
  field(L, t, "executor");
  int x = lua_gettop(L);
  e->executor = get_str(L, x, "kind");
  if (!e->executor) e->executor = xstrdup("local");
  e->slurm_partition = get_str(L, x, "partition");
  e->slurm_account = get_str(L, x, "account");
  e->slurm_time = get_str(L, x, "time");
  e->slurm_mode = get_str(L, x, "mode");
  e->slurm_nodes = get_int(L, x, "nodes", 1);
  e->slurm_tasks_per_node = get_int(L, x, "tasks_per_node", 1);
  e->slurm_gpus_per_trial = get_int(L, x, "gpus_per_trial", e->gpus_per_trial);
  e->slurm_extra = get_strv(L, x, "extra", NULL);
  e->slurm_cpus_per_trial = get_int(L, x, "cpus_per_trial", 0);
  e->slurm_srun = get_strv(L, x, "srun", NULL);
  e->slurm_chain = get_int(L, x, "chain", 0);
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
  e->parallel = get_int(L, t, "parallel", 1);
  e->gpus_per_trial = get_int(L, t, "gpus_per_trial", 0);
  e->timeout_s = get_num(L, t, "timeout", 0);
  e->grace_s = get_num(L, t, "grace", 10);
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
static int call_load(lhost *h, const char *path, const char *text, size_t len, char **err) {
  lua_State *L = lhost_state(h);
  int rc = lhost_require(h, "dsl", err);
  if (rc != 0) return rc;
  lua_getfield(L, -1, "load"); /* [dsl, load] */
  lua_remove(L, -2);           /* [load] */
  lua_pushstring(L, path);
  lua_pushlstring(L, text, len); /* [load, path, text] */
  rc = lhost_pcall(h, 2, 1, LOAD_BUDGET, err);
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
  int rc = call_load(h, path, owned, len, err);
  if (rc != 0) goto cleanup;
  int t = lua_gettop(L); /* [spec] */
  rc = release_warnings(h, t, path, err);
  if (rc != 0) goto cleanup;
  copy_fields(L, t, e);
  rc = copy_space(h, t, e, err);
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
  lua_State *L = lhost_state(e->host);
  e->budget_trials = trials;
  e->budget_hours = hours;
  lhost_push_ref(e->host, e->spec_ref);              /* [spec] */
  if (lua_getfield(L, -1, "budget") == LUA_TTABLE) { /* [spec, budget] */
    lua_pushinteger(L, trials);
    lua_setfield(L, -2, "trials");
    lua_pushnumber(L, hours);
    lua_setfield(L, -2, "hours");
  }
  lua_pop(L, 2);
}

void experiment_allow_flags(lhost *h, const char *const *names, int n) {
  lua_State *L = lhost_state(h);
  lua_getglobal(L, "ft");   /* [ft] */
  lua_createtable(L, 0, n); /* [ft, set] */
  for (int i = 0; i < n; i++) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, names[i]);
  }
  lua_setfield(L, -2, "imported_flags");
  lua_pop(L, 1);
}

/* Hands the flag names of the database's imported jaxlib lists (if any) to the experiment
 * checks. Reads the database only if it already exists. */
void experiment_allow_imported(lhost *h, const char *db_path) {
  store *db = NULL;
  cJSON *rows = NULL;
  if (store_open(db_path, STORE_READONLY, &db, NULL) != 0) return;
  if (store_flags_names(db, &rows, NULL) == 0) {
    int n = cJSON_GetArraySize(rows), k = 0;
    const char **names = xcalloc((size_t)n + 1, sizeof(char *));
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
      if (cJSON_IsString(name)) names[k++] = name->valuestring;
    }
    experiment_allow_flags(h, names, k);
    free(names);
  }
  cJSON_Delete(rows);
  store_close(db);
}
