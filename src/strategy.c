/* The strategy host, C side: builds lua/host.lua's host object for an experiment, keeps it
 * as a counted registry ref, and turns its Lua proposals into C proposals. Every call goes
 * through lhost_pcall with STRATEGY_BUDGET, so a looping user strategy fails with a line
 * number instead of hanging the night. Owns the mapping of Lua errors to FT_EINPUT (the
 * user's strategy file, options or protocol violations) versus FT_ELUA (flagtune's own
 * Lua). Must not check the protocol itself: that is lua/host.lua's job. */
#include "strategy.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

struct strategy {
  lhost *h;           /* not owned */
  int ref;            /* the lua/host.lua object */
  char *file_path;    /* a user strategy file, or NULL for search/NAME.lua */
  char *exp_path;     /* the experiment file, where option errors are located */
  char *name;         /* the strategy's name (tpe), for messages */
  const char *method; /* the host method being called (ask, tell, ...) */
};

/* True when MSG starts with "PATH:" (a location in that file). */
static int located_in(const char *msg, const char *path) {
  if (!msg || !path || !*path) return 0;
  size_t n = strlen(path);
  return strncmp(msg, path, n) == 0 && msg[n] == ':';
}

/* Whose fault a failed call is: lua/host.lua prefixes its messages so that this is a
 * prefix test (see the comment at its top). Anything unrecognized is flagtune's bug. */
static int error_code(const char *file_path, const char *exp_path, int rc, char **err) {
  if (rc != FT_ELUA || !err || !*err) return rc;
  const char *msg = *err;
  if (located_in(msg, file_path) || located_in(msg, exp_path) ||
      strncmp(msg, "strategy '", 10) == 0)
    return FT_EINPUT;
  return FT_ELUA;
}

/* A spent instruction budget, said so that the reader can act on it: in a user's strategy
 * file its line (already at the front) plus what to change; in a shipped strategy, which one
 * and which call, as flagtune's bug, not the line of lua/host.lua where the fault surfaced.
 * RC is error_code's verdict and is kept. */
static int budget_hint(const strategy *s, const char *method, long budget, int rc, char **err) {
  const char *b = rc != 0 && err && *err ? strstr(*err, "instruction budget of ") : NULL;
  if (!b) return rc;
  char *msg;
  if (located_in(*err, s->file_path)) {
    msg = xasprintf(
        "%s in %s() (one call of a strategy may run %ld Lua instructions, about a "
        "second: bound its loops, return fewer proposals, or keep its model smaller)",
        *err, method, budget);
  } else {
    const char *name = s->name ? s->name : s->file_path ? s->file_path : "?";
    int where = (int)(b - *err);
    while (where > 0 && ((*err)[where - 1] == ' ' || (*err)[where - 1] == ':')) where--;
    msg = xasprintf(
        "strategy '%s': %s() ran past its instruction budget of %ld%s%.*s%s: a bug "
        "in flagtune's %s{}, please report it with the number of trials; the trials "
        "so far are kept",
        name, method, budget, where > 0 ? " (at " : "", where, *err, where > 0 ? ")" : "", name);
  }
  free(*err);
  *err = msg;
  return rc;
}

/* A string field of the table at IDX, copied, or NULL. */
static char *dup_field(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  char *s = lua_type(L, -1) == LUA_TSTRING ? xstrdup(lua_tostring(L, -1)) : NULL;
  lua_pop(L, 1);
  return s;
}

/* The strategy file and experiment path from the spec table, for error_code(). */
static void read_paths(strategy *s, experiment *e) {
  lua_State *L = lhost_state(s->h);
  lhost_push_ref(s->h, e->spec_ref); /* [spec] */
  lua_getfield(L, -1, "strategy");   /* [spec, strategy] */
  if (lua_istable(L, -1)) {
    s->file_path = dup_field(L, -1, "path");
    s->name = dup_field(L, -1, "name");
  }
  lua_pop(L, 1);
  s->exp_path = dup_field(L, -1, "path");
  if (!s->exp_path && e->path) s->exp_path = xstrdup(e->path);
  lua_pop(L, 1);
}

static void push_steps(lua_State *L, const double *steps, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, steps[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* Pushes { status=, value=, steps={...}, steps_budget=, number= } (value absent if NaN). */
static void push_result(lua_State *L, const trial_record *r) {
  lua_createtable(L, 0, 5);
  const char *status = outcome_name(r->status);
  lua_pushstring(L, status ? status : "crash");
  lua_setfield(L, -2, "status");
  if (!isnan(r->value)) {
    lua_pushnumber(L, r->value);
    lua_setfield(L, -2, "value");
  }
  push_steps(L, r->steps, r->n_steps);
  lua_setfield(L, -2, "steps");
  lua_pushinteger(L, r->steps_budget);
  lua_setfield(L, -2, "steps_budget");
  lua_pushinteger(L, r->number);
  lua_setfield(L, -2, "number");
}

/* Pushes the history list: each item is a result plus json = config_json. */
static void push_history(lua_State *L, const trial_record *history, int n) {
  lua_createtable(L, n > 0 ? n : 0, 0);
  for (int i = 0; i < n; i++) {
    push_result(L, &history[i]);
    lua_pushstring(L, history[i].config_json ? history[i].config_json : "{}");
    lua_setfield(L, -2, "json");
    lua_rawseti(L, -2, i + 1);
  }
}

int strategy_new(experiment *e, int64_t seed, const trial_record *history, int n_history,
                 strategy **out, char **err) {
  *out = NULL;
  strategy *s = xcalloc(1, sizeof *s);
  s->h = e->host;
  s->ref = LUA_NOREF;
  read_paths(s, e);
  lua_State *L = lhost_state(s->h);
  int top = lua_gettop(L);
  int rc = lhost_require(s->h, "host", err);
  if (rc != 0) goto cleanup;
  lua_getfield(L, -1, "new"); /* [host_module, new] */
  lua_remove(L, -2);
  lhost_push_ref(s->h, e->spec_ref);
  lua_pushinteger(L, (lua_Integer)seed);
  push_history(L, history, n_history); /* [new, spec, seed, history] */
  /* The sweep's budget (the command line's over the file's, experiment_override_budget). */
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, e->budget_trials);
  lua_setfield(L, -2, "trials");
  lua_pushnumber(L, e->budget_hours);
  lua_setfield(L, -2, "hours");
  lua_pushinteger(L, e->budget_steps);
  lua_setfield(L, -2, "steps"); /* [new, spec, seed, history, budget] */
  long budget = STRATEGY_BUDGET + STRATEGY_BUDGET_PER_HISTORY * (long)n_history;
  rc = lhost_pcall(s->h, 4, 1, budget, err);
  if (rc != 0) {
    rc = budget_hint(s, "new", budget, error_code(s->file_path, s->exp_path, rc, err), err);
    goto cleanup;
  }
  s->ref = lhost_ref(s->h); /* pops the host object */

cleanup:
  lua_settop(L, top);
  if (rc != 0) {
    strategy_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int strategy_partial(strategy *s) {
  lua_State *L = lhost_state(s->h);
  lhost_push_ref(s->h, s->ref);
  lua_getfield(L, -1, "n_partial");
  int n = (int)lua_tointeger(L, -1);
  lua_pop(L, 2);
  return n;
}

void strategy_free(strategy *s) {
  if (!s) return;
  lhost_unref(s->h, s->ref);
  free(s->file_path);
  free(s->name);
  free(s->exp_path);
  free(s);
}

static void settings_free(setting *s, int n) {
  for (int i = 0; i < n; i++) {
    free((char *)s[i].name);
    free((char *)s[i].value);
  }
  free(s);
}

void proposal_clear(proposal *p) {
  if (!p) return;
  free(p->config_json);
  free(p->label);
  settings_free(p->settings, p->n_settings);
  settings_free(p->profile, p->n_profile);
  free(p->profile_suffix);
  trialcfg_free_strv(p->unset);
  memset(p, 0, sizeof *p);
}

static int target_of(const char *t, setting_target *out) {
  if (!t) return -1;
  if (strcmp(t, "xla") == 0)
    *out = TARGET_XLA;
  else if (strcmp(t, "tpu") == 0)
    *out = TARGET_TPU;
  else if (strcmp(t, "env") == 0)
    *out = TARGET_ENV;
  else
    return -1;
  return 0;
}

/* One { target, name, value } at the top of the stack into *S. */
static int to_setting(lua_State *L, setting *s) {
  if (!lua_istable(L, -1)) return -1;
  char *target = dup_field(L, -1, "target");
  int rc = target_of(target, &s->target);
  free(target);
  s->name = dup_field(L, -1, "name");
  s->value = dup_field(L, -1, "value");
  return rc == 0 && s->name && s->value ? 0 : -1;
}

/* The list of settings at the top of the stack into *OUT / *N (what was converted so far on
 * failure, for the caller to free). */
static int to_settings(lua_State *L, setting **out, int *n_out) {
  int rc = lua_istable(L, -1) ? 0 : -1;
  int n = rc == 0 ? (int)lua_rawlen(L, -1) : 0;
  *out = n > 0 ? xcalloc((size_t)n, sizeof **out) : NULL;
  for (int i = 0; i < n && rc == 0; i++) {
    lua_rawgeti(L, -1, i + 1); /* [..., settings, setting] */
    *n_out = i + 1;
    rc = to_setting(L, &(*out)[i]);
    lua_pop(L, 1);
  }
  return rc;
}

static int int_field(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  int v = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
  lua_pop(L, 1);
  return v;
}

/* The optional profile = { settings, suffix } of the proposal at the top of the stack. */
static int to_profile(lua_State *L, proposal *p) {
  lua_getfield(L, -1, "profile"); /* [proposal, profile] */
  int rc = 0;
  if (lua_istable(L, -1)) {
    p->profile_suffix = dup_field(L, -1, "suffix");
    lua_getfield(L, -1, "settings"); /* [proposal, profile, settings] */
    rc = p->profile_suffix ? to_settings(L, &p->profile, &p->n_profile) : -1;
    lua_pop(L, 1);
  } else if (!lua_isnil(L, -1)) {
    rc = -1;
  }
  lua_pop(L, 1);
  return rc;
}

/* The optional unset = { "NAME", ... } of the proposal at the top of the stack into
 * P->unset (NULL-terminated; left NULL when the list is absent or empty). */
static int to_unset(lua_State *L, proposal *p) {
  lua_getfield(L, -1, "unset"); /* [proposal, unset] */
  int rc = lua_isnil(L, -1) || lua_istable(L, -1) ? 0 : -1;
  int n = rc == 0 && lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : 0;
  if (n > 0) p->unset = xcalloc((size_t)n + 1, sizeof *p->unset);
  for (int i = 0; i < n && rc == 0; i++) {
    lua_rawgeti(L, -1, i + 1); /* [proposal, unset, name] */
    if (lua_type(L, -1) == LUA_TSTRING)
      p->unset[i] = xstrdup(lua_tostring(L, -1));
    else
      rc = -1;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return rc;
}

/* The proposal table at the top of the stack ({ json, label, steps, settings, skip,
 * profile, unset }) into *P. On failure *P holds what was converted so far; the caller clears it.
 */
static int to_proposal(lua_State *L, proposal *p) {
  memset(p, 0, sizeof *p);
  if (!lua_istable(L, -1)) return -1;
  p->config_json = dup_field(L, -1, "json");
  p->label = dup_field(L, -1, "label");
  p->steps = int_field(L, -1, "steps");
  p->skip = int_field(L, -1, "skip");
  lua_getfield(L, -1, "settings"); /* [proposal, settings] */
  int rc = p->config_json && p->label ? to_settings(L, &p->settings, &p->n_settings) : -1;
  lua_pop(L, 1);
  if (rc == 0) rc = to_profile(L, p);
  if (rc == 0) rc = to_unset(L, p);
  return rc;
}

/* Pushes host.METHOD and the host object; the caller pushes the arguments, then runs
 * call_method. */
static void push_method(strategy *s, const char *method) {
  lua_State *L = lhost_state(s->h);
  s->method = method;
  lhost_push_ref(s->h, s->ref); /* [host] */
  lua_getfield(L, -1, method);  /* [host, fn] */
  lua_insert(L, -2);            /* [fn, host] */
}

/* Runs the method pushed by push_method with NARGS more arguments, budgeted. */
static int call_method(strategy *s, int nargs, int nresults, char **err) {
  int rc = lhost_pcall(s->h, nargs + 1, nresults, STRATEGY_BUDGET, err);
  return budget_hint(s, s->method, STRATEGY_BUDGET, error_code(s->file_path, s->exp_path, rc, err),
                     err);
}

int strategy_ask(strategy *s, int n, proposal **out, int *n_out, char **err) {
  *out = NULL;
  *n_out = 0;
  lua_State *L = lhost_state(s->h);
  int top = lua_gettop(L);
  proposal *ps = NULL;
  int count = 0;
  push_method(s, "ask");
  lua_pushinteger(L, n); /* [ask, host, n] */
  int rc = call_method(s, 1, 1, err);
  if (rc != 0) goto cleanup;
  count = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : 0; /* [list] */
  ps = count > 0 ? xcalloc((size_t)count, sizeof *ps) : NULL;
  for (int i = 0; i < count && rc == 0; i++) {
    lua_rawgeti(L, -1, i + 1); /* [list, proposal] */
    if (to_proposal(L, &ps[i]) != 0)
      rc = diag_set(err, FT_ELUA, "lua/host.lua returned a malformed proposal");
    lua_pop(L, 1);
  }
  if (rc != 0) {
    for (int i = 0; i < count; i++) proposal_clear(&ps[i]);
    free(ps);
    goto cleanup;
  }
  *out = ps;
  *n_out = count;

cleanup:
  lua_settop(L, top);
  return rc;
}

int strategy_tell(strategy *s, const trial_record *r, char **err) {
  lua_State *L = lhost_state(s->h);
  int top = lua_gettop(L);
  push_method(s, "tell");
  lua_pushstring(L, r->config_json ? r->config_json : "{}");
  push_result(L, r); /* [tell, host, json, result] */
  int rc = call_method(s, 2, 0, err);
  lua_settop(L, top);
  return rc;
}

/* A number field of the table at IDX, or NaN. */
static double num_field(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  double v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : NAN;
  lua_pop(L, 1);
  return v;
}

int strategy_estimate(strategy *s, const char *const *configs, int n, double *mean, double *sd,
                      char **err) {
  for (int i = 0; i < n; i++) mean[i] = sd[i] = NAN;
  if (n <= 0) return 0;
  lua_State *L = lhost_state(s->h);
  int top = lua_gettop(L);
  push_method(s, "estimate");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, configs[i] ? configs[i] : "{}");
    lua_rawseti(L, -2, i + 1);
  } /* [estimate, host, jsons] */
  int rc = call_method(s, 1, 1, err);
  if (rc == 0 && lua_istable(L, -1)) {
    for (int i = 0; i < n; i++) {
      if (lua_rawgeti(L, -1, i + 1) == LUA_TTABLE) { /* lua/host.lua checked it */
        mean[i] = num_field(L, -1, "mean");
        sd[i] = num_field(L, -1, "sd");
      }
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
  return rc;
}

int strategy_recipe(strategy *s, char **json, char **err) {
  *json = NULL;
  lua_State *L = lhost_state(s->h);
  int top = lua_gettop(L);
  push_method(s, "recipe"); /* [recipe, host] */
  int rc = call_method(s, 0, 1, err);
  if (rc == 0 && lua_type(L, -1) == LUA_TSTRING) *json = xstrdup(lua_tostring(L, -1));
  lua_settop(L, top);
  return rc;
}

int strategy_done(strategy *s) {
  lua_State *L = lhost_state(s->h);
  int top = lua_gettop(L);
  char *err = NULL;
  push_method(s, "done"); /* [done, host] */
  int rc = call_method(s, 0, 1, &err);
  /* A done() that fails cannot be reported through this interface: say so and stop
   * asking, rather than spin on a broken strategy. */
  int done = 1;
  if (rc == 0)
    done = lua_toboolean(L, -1);
  else
    diag_warn("%s", err ? err : "strategy done() failed");
  free(err);
  lua_settop(L, top);
  return done;
}

static int render_with(strategy *s, const char *method, const char *config_json, proposal *out,
                       char **err) {
  memset(out, 0, sizeof *out);
  lua_State *L = lhost_state(s->h);
  int top = lua_gettop(L);
  push_method(s, method);
  lua_pushstring(L, config_json ? config_json : "{}"); /* [render, host, json] */
  int rc = call_method(s, 1, 2, err);
  if (rc != 0) goto cleanup;
  if (lua_isnil(L, -2)) { /* [nil, message] */
    rc = diag_set(err, FT_EINPUT, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "bad config");
    goto cleanup;
  }
  lua_pop(L, 1); /* [proposal] */
  if (to_proposal(L, out) != 0) {
    proposal_clear(out);
    rc = diag_set(err, FT_ELUA, "lua/host.lua returned a malformed proposal");
  }

cleanup:
  lua_settop(L, top);
  return rc;
}

int strategy_render(strategy *s, const char *config_json, proposal *out, char **err) {
  return render_with(s, "render", config_json, out, err);
}

int strategy_render_subset(strategy *s, const char *config_json, proposal *out, char **err) {
  return render_with(s, "render_subset", config_json, out, err);
}
