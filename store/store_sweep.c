/* The store: the sweeps' rows. Creating a sweep (with its claim, one transaction), what `run`
 * records of it as it starts (its place, hardware, budget) and its status to the end; finding
 * a sweep by id or name ("did you mean" for a near miss) and reading its row. Must not call up
 * into other modules, print or exit: every failure goes back through char **err. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "store_impl.h"

static int sweep_insert(store *s, const store_sweep_new *n, int64_t *id, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SWEEP_CREATE, &st, err);
  if (rc) return rc;
  rc = store_bind_text(st, ":name", n->name) | store_bind_text(st, ":model", n->model) |
       store_bind_text(st, ":hardware", n->hardware) |
       store_bind_text(st, ":experiment_path", n->experiment_path) |
       store_bind_text(st, ":experiment_text", n->experiment_text) |
       store_bind_text(st, ":experiment_hash", n->experiment_hash) |
       store_bind_text(st, ":strategy", n->strategy) | store_bind_int(st, ":seed", n->seed) |
       store_bind_pos(st, ":budget_trials", n->budget_trials) |
       store_bind_real(st, ":budget_hours", n->budget_hours > 0 ? n->budget_hours : NAN) |
       store_bind_pos(st, ":budget_steps", n->budget_steps) |
       store_bind_int(st, ":parallel", n->parallel > 0 ? n->parallel : 1) |
       store_bind_text(st, ":host", n->host) |
       store_bind_text(st, ":options_json", n->options_json) |
       store_bind_int(st, ":pid", getpid()) | store_bind_text(st, ":software", n->software) |
       store_bind_text(st, ":jaxlib", n->jaxlib) |
       store_bind_text(st, ":space_digest", n->space_digest);
  if (rc) return store_bind_fail(s, st, err);
  rc = store_step_done(s, st, "creating a sweep", err);
  if (!rc) *id = sqlite3_last_insert_rowid(s->db);
  return rc;
}

/* The row and its claim in one transaction: no other process sees the sweep unclaimed. */
int store_sweep_create(store *s, const store_sweep_new *n, int64_t *id, char **err) {
  int64_t new_id = 0;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_run_cached(s, ST_BEGIN_WRITE, "creating a sweep", err);
  if (!rc) rc = sweep_insert(s, n, &new_id, err);
  if (!rc) rc = store_claim_in_tx(s, new_id, 0, err);
  store_durable(s, 1);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "creating a sweep", err);
  store_durable(s, 0);
  if (rc) store_tx_rollback(s);
  if (!rc && id) *id = new_id;
  return rc;
}

int store_sweep_set_place(store *s, int64_t id, const char *workdir, const char *command_json,
                          char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_PLACE, &st, err);
  if (rc) return rc;
  if (store_bind_text(st, ":workdir", workdir) |
      store_bind_text(st, ":command_json", command_json) | store_bind_int(st, ":id", id))
    return store_bind_fail(s, st, err);
  return store_step_done(s, st, "recording a sweep's directory", err);
}

int store_sweep_set_hardware(store *s, int64_t id, const char *hardware, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_HARDWARE, &st, err);
  if (rc) return rc;
  if (store_bind_text(st, ":hardware", hardware) | store_bind_int(st, ":id", id))
    return store_bind_fail(s, st, err);
  return store_step_done(s, st, "recording a sweep's hardware", err);
}

int store_sweep_forget_space_digest(store *s, int64_t id, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_FORGET_DIGEST, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", id)) return store_bind_fail(s, st, err);
  return store_step_done(s, st, "forgetting a sweep's space digest", err);
}

int store_sweep_set_budget(store *s, int64_t id, int budget_trials, const char *options_json,
                           char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_BUDGET, &st, err);
  if (rc) return rc;
  if (store_bind_pos(st, ":budget_trials", budget_trials) |
      store_bind_text(st, ":options_json", options_json) | store_bind_int(st, ":id", id))
    return store_bind_fail(s, st, err);
  return store_step_done(s, st, "recording a sweep's budget", err);
}

static int set_status_once(store *s, int64_t id, const char *status, const char *error, int pid,
                           char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_STATUS, &st, err);
  if (rc) return rc;
  rc = store_bind_text(st, ":status", status) | store_bind_text(st, ":error", error) |
       store_bind_int(st, ":pid", pid) | store_bind_int(st, ":id", id);
  if (rc) return store_bind_fail(s, st, err);
  store_durable(s, 1);
  rc = store_step_done(s, st, "setting a sweep's status", err);
  store_durable(s, 0);
  return rc;
}

int store_sweep_set_status(store *s, int64_t id, const char *status, const char *error, int pid,
                           char **err) {
  int rc = set_status_once(s, id, status, error, pid, err);
  /* On a full disk the last word still fits: the lock file's reserve is given back first
   * (the lock is on the descriptor, whatever the file's size). */
  if (rc && s->full && s->claim_fd >= 0) {
    if (err) {
      free(*err);
      *err = NULL;
    }
    int given = ftruncate(s->claim_fd, 0);
    (void)given; /* if it fails, the retry says why the status could not be written */
    rc = set_status_once(s, id, status, error, pid, err);
  }
  if (!rc && sqlite3_changes(s->db) == 0)
    return diag_set(err, FT_EINPUT, "no sweep %lld", (long long)id);
  /* An ended sweep's interval is computed once, here, not at every display. Best effort: a
   * failure only leaves readers computing it themselves. */
  if (!rc && strcmp(status, "running") != 0) store_sweep_cache_interval(s, id, NULL);
  return rc;
}

static int sweep_exists(store *s, int64_t id, int *found, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SWEEP_EXISTS, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", id)) return store_bind_fail(s, st, err);
  rc = sqlite3_step(st);
  *found = rc == SQLITE_ROW;
  rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? 0 : store_db_fail(s, err, "looking up a sweep");
  store_stmt_done(st);
  return rc;
}

/* Ids of sweeps named NAME, into IDS (up to CAP); *n gets the full count. */
static int sweeps_named(store *s, const char *name, int64_t *ids, int cap, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SWEEP_BY_NAME, &st, err);
  if (rc) return rc;
  if (store_bind_text(st, ":name", name)) return store_bind_fail(s, st, err);
  *n = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n < cap) ids[*n] = sqlite3_column_int64(st, 0);
    (*n)++;
  }
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "looking up a sweep");
  store_stmt_done(st);
  return rc;
}

static int ambiguous(const char *ref, const int64_t *ids, int n, int cap, char **err) {
  char list[256] = "";
  size_t len = 0;
  for (int i = 0; i < n && i < cap && len < sizeof list; i++)
    len +=
        (size_t)snprintf(list + len, sizeof list - len, "%s%lld", i ? ", " : "", (long long)ids[i]);
  return diag_set(err, FT_EINPUT, "sweep name '%s' is ambiguous: ids %s%s (use the id)", ref, list,
                  n > cap ? ", ..." : "");
}

/* The sweep name closest to REF for "did you mean": within 2 edits (the nearest, then the
 * first by name), else one REF (3 characters or more) begins; NULL when none or on error. */
static char *closest_name(store *s, const char *ref) {
  sqlite3_stmt *st = NULL;
  char *best = NULL;
  int best_d = 3;
  if (store_stmt_get(s, ST_SWEEP_NAMES, &st, NULL)) return NULL;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    int d = name ? diag_distance(ref, name, 2) : 3;
    if (name && d == 3 && strlen(ref) >= 3 && strncmp(name, ref, strlen(ref)) == 0) d = 2;
    if (d < best_d && d < (int)strlen(name)) free(best), best = xstrdup(name), best_d = d;
  }
  store_stmt_done(st);
  return best;
}

static int resolve_ref(store *s, const char *ref, int64_t *id, char **err) {
  size_t digits = strspn(ref, "0123456789");
  int is_id = digits > 0 && digits < 19 && ref[digits] == '\0', found = 0, n = 0, rc = 0;
  enum { CAP = 16 };
  int64_t ids[CAP];
  if (is_id) {
    *id = strtoll(ref, NULL, 10);
    if ((rc = sweep_exists(s, *id, &found, err)) || found) return rc;
  }
  if ((rc = sweeps_named(s, ref, ids, CAP, &n, err))) return rc;
  if (n == 1) *id = ids[0];
  if (n > 1) return ambiguous(ref, ids, n, CAP, err);
  if (n == 0 && is_id) return diag_set(err, FT_EINPUT, "no sweep '%s'", ref);
  if (n == 0) {
    char *hint = closest_name(s, ref);
    rc = hint
             ? diag_set(err, FT_EINPUT,
                        "no sweep named '%s' (did you mean '%s'? see `flagtune sweeps`)", ref, hint)
             : diag_set(err, FT_EINPUT, "no sweep named '%s' (see `flagtune sweeps`)", ref);
    free(hint);
  }
  return rc;
}

static void sweep_fill(sqlite3_stmt *st, store_sweep *out) {
  out->id = sqlite3_column_int64(st, 0);
  out->name = store_col_strdup(st, 1);
  out->model = store_col_strdup(st, 2);
  out->hardware = store_col_strdup(st, 3);
  out->experiment_path = store_col_strdup(st, 4);
  out->experiment_text = store_col_strdup(st, 5);
  out->strategy = store_col_strdup(st, 6);
  out->status = store_col_strdup(st, 7);
  out->options_json = store_col_strdup(st, 8);
  out->seed = sqlite3_column_int64(st, 9);
  out->budget_trials = sqlite3_column_int(st, 10);
  out->budget_steps = sqlite3_column_int(st, 11);
  out->parallel = sqlite3_column_int(st, 12);
  out->budget_hours = sqlite3_column_double(st, 13);
  out->pid = sqlite3_column_int(st, 14);
  out->host = store_col_strdup(st, 15);
  out->pid_start = sqlite3_column_int64(st, 16);
  out->claimed_at = store_col_strdup(st, 17);
  out->workdir = store_col_strdup(st, 18);
  out->command_json = store_col_strdup(st, 19);
  out->error = store_col_strdup(st, 20);
  out->space_digest = store_col_strdup(st, 21);
}

int store_sweep_get(store *s, const char *ref, store_sweep *out, char **err) {
  sqlite3_stmt *st = NULL;
  int64_t id = 0;
  memset(out, 0, sizeof *out);
  int rc = resolve_ref(s, ref, &id, err);
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_LOAD, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", id)) return store_bind_fail(s, st, err);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) sweep_fill(st, out);
  rc = rc == SQLITE_ROW    ? 0
       : rc == SQLITE_DONE ? diag_set(err, FT_EINPUT, "no sweep '%s'", ref)
                           : store_db_fail(s, err, "loading a sweep");
  store_stmt_done(st);
  return rc;
}

void store_sweep_clear(store_sweep *sw) {
  if (!sw) return;
  free(sw->name);
  free(sw->model);
  free(sw->hardware);
  free(sw->experiment_path);
  free(sw->experiment_text);
  free(sw->strategy);
  free(sw->status);
  free(sw->options_json);
  free(sw->host);
  free(sw->claimed_at);
  free(sw->workdir);
  free(sw->command_json);
  free(sw->error);
  free(sw->space_digest);
  memset(sw, 0, sizeof *sw);
}
