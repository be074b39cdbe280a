/* The experiment file's Lua side, for src/luahost/experiment.c (lhost_experiment.h): dsl.load with
 * the imported flag names, the catalog's jax release warnings, the validated table copied
 * into the C struct and kept as its spec ref, and the step-time pattern matchers. Knows the
 * validated table's keys (lua/validate.lua fills them in), not what the sweep does with
 * them. */
#include "lhost_experiment.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "stats.h"

/* Instructions the experiment file and its validation may use: a file that loops forever
 * fails with its line instead of hanging `flagtune run`. Real files need well under 1M. */
#define LOAD_BUDGET 100000000L
/* One pattern match per output line is a single string.match; the budget only guards it. */
#define MATCH_BUDGET 100000L

/* The first key lua/validate.lua left unset in the copy in progress (need_num): set and read
 * within one lhost_experiment_load. */
static const char *missing;

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
 * reads them without a default of its own. A key it left unset is noted in `missing` (the
 * first one, WHAT names it), for lhost_experiment_load to fail on, and reads as 0 or NULL. */
static double need_num(lua_State *L, int t, const char *key, const char *what, experiment *e) {
  field(L, t, key);
  int ok = lua_type(L, -1) == LUA_TNUMBER;
  double v = ok ? lua_tonumber(L, -1) : 0;
  lua_pop(L, 1);
  (void)e;
  if (!ok && !missing) missing = what;
  return v;
}

static int need_int(lua_State *L, int t, const char *key, const char *what, experiment *e) {
  return (int)need_num(L, t, key, what, e);
}

static char *need_str(lua_State *L, int t, const char *key, const char *what, experiment *e) {
  char *s = get_str(L, t, key);
  (void)e;
  if (!s && !missing) missing = what;
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
  e->slurm_chain = slurm ? need_int(L, x, "chain", "executor.chain", e) : 0;
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

/* The catalog's jax release ranges against the installed jax: when the spec at index T names
 * an entry with a range (checks.has_ranges), runs the experiment's software probe (the one
 * sweeps record) and lets checks.release_warnings append "absent from jax X you have
 * installed" to spec.warnings before copy_fields reads them. A probe that finds no jax only
 * means no such warning; `software_probe = false` skips it. */
static int release_warnings(lhost *h, int t, const char *path, lhost_software_fn software,
                            char **err) {
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
    char *probe = get_str(L, t, "software_probe"), *jax = NULL, *jaxlib = NULL;
    software(probe, &jax, &jaxlib);
    lua_pushvalue(L, t);
    lua_pushstring(L, path);
    lua_pushstring(L, jax);    /* NULL pushes nil */
    lua_pushstring(L, jaxlib); /* [checks, bool, fn, spec, path, jax, jaxlib] */
    free(probe);
    free(jax);
    free(jaxlib);
    rc = lhost_pcall(h, 4, 0, LOAD_BUDGET, err);
  }
  lua_settop(L, top);
  return rc;
}

int lhost_matcher_new(lhost *h, const char *pattern, int *ref, char **err) {
  lua_State *L = lhost_state(h);
  int rc = lhost_require(h, "dsl", err);
  if (rc != 0) return rc;
  lua_getfield(L, -1, "matcher"); /* [dsl, matcher] */
  lua_remove(L, -2);
  lua_pushstring(L, pattern); /* [matcher, pattern] */
  rc = lhost_pcall(h, 1, 1, MATCH_BUDGET, err);
  if (rc != 0) return rc;
  *ref = lhost_ref(h);
  return 0;
}

int lhost_experiment_load(lhost *h, const char *path, const char *text, size_t len,
                          const char *const *imported, int n, lhost_software_fn software,
                          experiment *e, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  int rc = call_load(h, path, text, len, imported, n, err);
  int t = lua_gettop(L); /* [spec] */
  if (rc == 0) rc = release_warnings(h, t, path, software, err);
  if (rc == 0) {
    missing = NULL;
    copy_fields(L, t, e);
    if (missing) rc = diag_set(err, FT_ELUA, "%s: lua/validate.lua left '%s' unset", path, missing);
    missing = NULL;
  }
  if (rc == 0) rc = copy_space(h, t, e, err);
  if (rc == 0) e->spec_ref = lhost_ref(h); /* pops the spec */
  lua_settop(L, top);
  return rc;
}

int lhost_matcher_match(lhost *h, int ref, const char *line, size_t len, double *out) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  lhost_push_ref(h, ref);
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
