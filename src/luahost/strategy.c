/* The strategy host, C side: builds lua/host.lua's host object for an experiment, keeps it
 * as a counted registry ref (the Lua side, proposals read back included, in
 * src/luahost/lhost_strategy.c). Every call runs with STRATEGY_BUDGET, so a looping user strategy
 * fails with a line number instead of hanging the night. Owns the mapping of Lua errors to
 * FT_EINPUT (the user's strategy file, options or protocol violations) versus FT_ELUA (flagtune's
 * own Lua). Must not check the protocol itself: that is lua/host.lua's job. */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "lhost_strategy.h"

struct strategy {
  lhost *h;               /* not owned */
  int ref;                /* the lua/host.lua object */
  char *file_path;        /* a user strategy file, or NULL for search/NAME.lua */
  char *exp_path;         /* the experiment file, where option errors are located */
  char *name;             /* the strategy's name (tpe), for messages */
  strategy_history level; /* what its history holds (the module's `history`) */
  int n_history;          /* trials added so far (start's instruction budget) */
  char *space_digest;     /* the identity of the keys its space makes (Space:digest) */
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

/* Whose fault a failed call of METHOD was, and a spent budget said so. */
static int mapped(const strategy *s, const char *method, long budget, int rc, char **err) {
  return budget_hint(s, method, budget, error_code(s->file_path, s->exp_path, rc, err), err);
}

int strategy_open(experiment *e, strategy **out, char **err) {
  *out = NULL;
  strategy *s = xcalloc(1, sizeof *s);
  s->h = e->host;
  s->ref = LHOST_NOREF;
  lhost_strategy_paths(s->h, e->spec_ref, &s->file_path, &s->name, &s->exp_path);
  if (!s->exp_path && e->path) s->exp_path = xstrdup(e->path);
  char *level = NULL;
  int rc = lhost_strategy_open(s->h, e->spec_ref, e, STRATEGY_BUDGET, &s->ref, &level,
                               &s->space_digest, err);
  if (rc != 0) {
    rc = mapped(s, "new", STRATEGY_BUDGET, rc, err);
    strategy_free(s);
    return rc;
  }
  s->level = level && strcmp(level, "seen") == 0      ? STRATEGY_HISTORY_SEEN
             : level && strcmp(level, "results") == 0 ? STRATEGY_HISTORY_RESULTS
                                                      : STRATEGY_HISTORY_STEPS;
  free(level);
  *out = s;
  return 0;
}

strategy_history strategy_history_of(const strategy *s) {
  return s->level;
}

int strategy_add(strategy *s, const trial_record *history, int n, char **err) {
  if (n <= 0) return 0;
  long budget = STRATEGY_BUDGET + STRATEGY_BUDGET_PER_HISTORY * (long)n;
  s->n_history += n;
  int rc =
      lhost_strategy_add(s->h, s->ref, history, n, s->level == STRATEGY_HISTORY_STEPS, budget, err);
  return rc != 0 ? mapped(s, "new", budget, rc, err) : 0;
}

const char *strategy_space_digest(const strategy *s) {
  return s->space_digest;
}

int strategy_add_keys(strategy *s, const char *const *keys, int n, char **err) {
  if (n <= 0) return 0;
  long budget = STRATEGY_BUDGET + STRATEGY_BUDGET_PER_HISTORY * (long)n;
  s->n_history += n;
  int rc = lhost_strategy_add_keys(s->h, s->ref, keys, n, budget, err);
  return rc != 0 ? mapped(s, "new", budget, rc, err) : 0;
}

int strategy_start(strategy *s, int64_t seed, char **err) {
  long budget = STRATEGY_BUDGET + STRATEGY_BUDGET_PER_HISTORY * (long)s->n_history;
  int rc = lhost_strategy_start(s->h, s->ref, seed, budget, err);
  return rc != 0 ? mapped(s, "new", budget, rc, err) : 0;
}

int strategy_new(experiment *e, int64_t seed, const trial_record *history, int n_history,
                 strategy **out, char **err) {
  strategy *s = NULL;
  int rc = strategy_open(e, &s, err);
  if (rc == 0) rc = strategy_add(s, history, n_history, err);
  if (rc == 0) rc = strategy_start(s, seed, err);
  if (rc != 0) {
    strategy_free(s);
    s = NULL;
  }
  *out = s;
  return rc;
}

int strategy_partial(strategy *s) {
  return lhost_strategy_partial(s->h, s->ref);
}

void strategy_free(strategy *s) {
  if (!s) return;
  lhost_unref(s->h, s->ref);
  free(s->file_path);
  free(s->name);
  free(s->exp_path);
  free(s->space_digest);
  free(s);
}

int strategy_ask(strategy *s, int n, proposal **out, int *n_out, char **err) {
  int rc = lhost_strategy_ask(s->h, s->ref, n, STRATEGY_BUDGET, out, n_out, err);
  return mapped(s, "ask", STRATEGY_BUDGET, rc, err);
}

int strategy_tell(strategy *s, const trial_record *r, char **err) {
  return strategy_tell_cost(s, r, NAN, NAN, err);
}

int strategy_tell_cost(strategy *s, const trial_record *r, double wall_s, double step_ms,
                       char **err) {
  int rc = lhost_strategy_tell(s->h, s->ref, r, wall_s, step_ms, STRATEGY_BUDGET, err);
  return mapped(s, "tell", STRATEGY_BUDGET, rc, err);
}

int strategy_estimate(strategy *s, const char *const *configs, int n, double *mean, double *sd,
                      char **err) {
  for (int i = 0; i < n; i++) mean[i] = sd[i] = NAN;
  if (n <= 0) return 0;
  int rc = lhost_strategy_estimate(s->h, s->ref, configs, n, STRATEGY_BUDGET, mean, sd, err);
  return mapped(s, "estimate", STRATEGY_BUDGET, rc, err);
}

int strategy_recipe(strategy *s, char **json, char **err) {
  int rc = lhost_strategy_recipe(s->h, s->ref, STRATEGY_BUDGET, json, err);
  return mapped(s, "recipe", STRATEGY_BUDGET, rc, err);
}

int strategy_done(strategy *s) {
  char *err = NULL;
  int done = 1;
  int rc = lhost_strategy_done(s->h, s->ref, STRATEGY_BUDGET, &done, &err);
  rc = mapped(s, "done", STRATEGY_BUDGET, rc, &err);
  /* A done() that fails cannot be reported through this interface: say so and stop
   * asking, rather than spin on a broken strategy. */
  if (rc != 0) {
    done = 1;
    diag_warn("%s", err ? err : "strategy done() failed");
  }
  free(err);
  return done;
}

int strategy_render(strategy *s, const char *config_json, proposal *out, char **err) {
  int rc = lhost_strategy_render(s->h, s->ref, "render", config_json, STRATEGY_BUDGET, out, err);
  return mapped(s, "render", STRATEGY_BUDGET, rc, err);
}

int strategy_render_subset(strategy *s, const char *config_json, proposal *out, char **err) {
  int rc =
      lhost_strategy_render(s->h, s->ref, "render_subset", config_json, STRATEGY_BUDGET, out, err);
  return mapped(s, "render_subset", STRATEGY_BUDGET, rc, err);
}
