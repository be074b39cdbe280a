/* The strategy host's Lua side, for src/luahost/strategy.c (lhost_strategy.h): lua/host.lua's host
 * object made and kept as a counted ref, its methods called under the budget given, the
 * trial records pushed as Lua tables and the proposals read back into C. Returns the
 * protected call's code and message as they are: which errors are the user's is
 * strategy.c's to say. */
#include "lhost_strategy.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* A string field of the table at IDX, copied, or NULL. */
static char *dup_field(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  char *s = lua_type(L, -1) == LUA_TSTRING ? xstrdup(lua_tostring(L, -1)) : NULL;
  lua_pop(L, 1);
  return s;
}

void lhost_strategy_paths(lhost *h, int spec_ref, char **file_path, char **name, char **exp_path) {
  lua_State *L = lhost_state(h);
  *file_path = *name = NULL;
  lhost_push_ref(h, spec_ref);     /* [spec] */
  lua_getfield(L, -1, "strategy"); /* [spec, strategy] */
  if (lua_istable(L, -1)) {
    *file_path = dup_field(L, -1, "path");
    *name = dup_field(L, -1, "name");
  }
  lua_pop(L, 1);
  *exp_path = dup_field(L, -1, "path");
  lua_pop(L, 1);
}

static void push_steps(lua_State *L, const double *steps, int n) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, steps[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* Pushes { status=, value=, steps={...} (or n_steps=, without WITH_STEPS), steps_budget=,
 * number= } (value absent if NaN). */
static void push_result_of(lua_State *L, const trial_record *r, int with_steps) {
  lua_createtable(L, 0, 5);
  const char *status = outcome_name(r->status);
  lua_pushstring(L, status ? status : "crash");
  lua_setfield(L, -2, "status");
  if (!isnan(r->value)) {
    lua_pushnumber(L, r->value);
    lua_setfield(L, -2, "value");
  }
  if (with_steps) {
    push_steps(L, r->steps, r->n_steps);
    lua_setfield(L, -2, "steps");
  } else {
    lua_pushinteger(L, r->n_steps);
    lua_setfield(L, -2, "n_steps");
  }
  lua_pushinteger(L, r->steps_budget);
  lua_setfield(L, -2, "steps_budget");
  lua_pushinteger(L, r->number);
  lua_setfield(L, -2, "number");
}

static void push_result(lua_State *L, const trial_record *r) {
  push_result_of(L, r, 1);
}

/* Pushes the history list: each item is a result plus json = config_json. */
static void push_history(lua_State *L, const trial_record *history, int n, int with_steps) {
  lua_createtable(L, n > 0 ? n : 0, 0);
  for (int i = 0; i < n; i++) {
    push_result_of(L, &history[i], with_steps);
    lua_pushstring(L, history[i].config_json ? history[i].config_json : "{}");
    lua_setfield(L, -2, "json");
    lua_rawseti(L, -2, i + 1);
  }
}

int lhost_strategy_open(lhost *h, int spec_ref, const experiment *e, long budget, int *ref,
                        char **level, char **space_digest, char **err) {
  *ref = LHOST_NOREF;
  *level = *space_digest = NULL;
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  int rc = lhost_require(h, "host", err);
  if (rc != 0) return rc;
  lua_getfield(L, -1, "open"); /* [host_module, open] */
  lua_remove(L, -2);
  lhost_push_ref(h, spec_ref);
  /* The sweep's budget (the command line's over the file's, experiment_override_budget). */
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, e->budget_trials);
  lua_setfield(L, -2, "trials");
  lua_pushnumber(L, e->budget_hours);
  lua_setfield(L, -2, "hours");
  lua_pushinteger(L, e->budget_steps);
  lua_setfield(L, -2, "steps"); /* [open, spec, budget] */
  rc = lhost_pcall(h, 2, 1, budget, err);
  if (rc == 0) {
    *level = dup_field(L, -1, "level");
    *space_digest = dup_field(L, -1, "space_digest");
    *ref = lhost_ref(h); /* pops the host object */
  }
  lua_settop(L, top);
  return rc;
}

/* Pushes host.METHOD and the host object REF; the caller pushes the arguments, then runs
 * lhost_pcall with one more. */
static void push_method(lhost *h, int ref, const char *method) {
  lua_State *L = lhost_state(h);
  lhost_push_ref(h, ref);      /* [host] */
  lua_getfield(L, -1, method); /* [host, fn] */
  lua_insert(L, -2);           /* [fn, host] */
}

int lhost_strategy_add(lhost *h, int ref, const trial_record *history, int n, int with_steps,
                       long budget, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, "add");
  push_history(L, history, n, with_steps); /* [add, host, history] */
  int rc = lhost_pcall(h, 2, 0, budget, err);
  lua_settop(L, top);
  return rc;
}

int lhost_strategy_add_keys(lhost *h, int ref, const char *const *keys, int n, long budget,
                            char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, "add_ids");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) { /* each key's digest: no long string made, none hashed in Lua */
    char id[LHOST_DIGEST_MAX];
    lua_pushlstring(L, id, lhost_digest(keys[i], strlen(keys[i]), id));
    lua_rawseti(L, -2, i + 1);
  } /* [add_ids, host, ids] */
  int rc = lhost_pcall(h, 2, 0, budget, err);
  lua_settop(L, top);
  return rc;
}

int lhost_strategy_start(lhost *h, int ref, int64_t seed, long budget, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, "start");
  lua_pushinteger(L, (lua_Integer)seed); /* [start, host, seed] */
  int rc = lhost_pcall(h, 2, 0, budget, err);
  lua_settop(L, top);
  return rc;
}

int lhost_strategy_partial(lhost *h, int ref) {
  lua_State *L = lhost_state(h);
  lhost_push_ref(h, ref);
  lua_getfield(L, -1, "n_partial");
  int n = (int)lua_tointeger(L, -1);
  lua_pop(L, 2);
  return n;
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

/* A number field of the table at IDX, or NaN. */
static double num_field(lua_State *L, int idx, const char *key) {
  lua_getfield(L, idx, key);
  double v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : NAN;
  lua_pop(L, 1);
  return v;
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

/* The proposal table at the top of the stack ({ json, label, steps, rung_steps, rung_value,
 * settings, skip, profile, unset }) into *P. On failure *P holds what was converted so far; the
 * caller clears it.
 */
static int to_proposal(lua_State *L, proposal *p) {
  memset(p, 0, sizeof *p);
  if (!lua_istable(L, -1)) return -1;
  p->config_json = dup_field(L, -1, "json");
  p->label = dup_field(L, -1, "label");
  p->steps = int_field(L, -1, "steps");
  p->skip = int_field(L, -1, "skip");
  p->rung_steps = int_field(L, -1, "rung_steps");
  p->rung_value = p->rung_steps > 0 ? num_field(L, -1, "rung_value") : NAN;
  lua_getfield(L, -1, "settings"); /* [proposal, settings] */
  int rc = p->config_json && p->label ? to_settings(L, &p->settings, &p->n_settings) : -1;
  lua_pop(L, 1);
  if (rc == 0) rc = to_profile(L, p);
  if (rc == 0) rc = to_unset(L, p);
  return rc;
}

int lhost_strategy_ask(lhost *h, int ref, int n, long budget, proposal **out, int *n_out,
                       char **err) {
  *out = NULL;
  *n_out = 0;
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  proposal *ps = NULL;
  int count = 0;
  push_method(h, ref, "ask");
  lua_pushinteger(L, n); /* [ask, host, n] */
  int rc = lhost_pcall(h, 2, 1, budget, err);
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

int lhost_strategy_tell(lhost *h, int ref, const trial_record *r, double wall_s, double step_ms,
                        long budget, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, "tell");
  lua_pushstring(L, r->config_json ? r->config_json : "{}");
  push_result(L, r); /* [tell, host, json, result] */
  if (isfinite(wall_s)) {
    lua_pushnumber(L, wall_s * 1e3);
    lua_setfield(L, -2, "wall_ms");
  }
  if (isfinite(step_ms)) {
    lua_pushnumber(L, step_ms);
    lua_setfield(L, -2, "step_ms");
  }
  int rc = lhost_pcall(h, 3, 0, budget, err);
  lua_settop(L, top);
  return rc;
}

int lhost_strategy_estimate(lhost *h, int ref, const char *const *configs, int n, long budget,
                            double *mean, double *sd, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, "estimate");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, configs[i] ? configs[i] : "{}");
    lua_rawseti(L, -2, i + 1);
  } /* [estimate, host, jsons] */
  int rc = lhost_pcall(h, 2, 1, budget, err);
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

int lhost_strategy_recipe(lhost *h, int ref, long budget, char **json, char **err) {
  *json = NULL;
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, "recipe"); /* [recipe, host] */
  int rc = lhost_pcall(h, 1, 1, budget, err);
  if (rc == 0 && lua_type(L, -1) == LUA_TSTRING) *json = xstrdup(lua_tostring(L, -1));
  lua_settop(L, top);
  return rc;
}

int lhost_strategy_done(lhost *h, int ref, long budget, int *done, char **err) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, "done"); /* [done, host] */
  int rc = lhost_pcall(h, 1, 1, budget, err);
  if (rc == 0) *done = lua_toboolean(L, -1);
  lua_settop(L, top);
  return rc;
}

int lhost_strategy_render(lhost *h, int ref, const char *method, const char *config_json,
                          long budget, proposal *out, char **err) {
  memset(out, 0, sizeof *out);
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  push_method(h, ref, method);
  lua_pushstring(L, config_json ? config_json : "{}"); /* [render, host, json] */
  int rc = lhost_pcall(h, 2, 2, budget, err);
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
