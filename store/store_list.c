/* The store: listings as cJSON for the CLI and reports (sweeps, one sweep, best per model
 * and hardware) and imported jaxlib flag lists. Column names are the keys. Must not call up
 * into other modules. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "stats.h"
#include "store_impl.h"

/* ---- JSON listings ---- */

static cJSON *blob_hex(const unsigned char *p, int n) {
  char *hex = xmalloc((size_t)n * 2 + 1);
  for (int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", p[i]);
  hex[2 * n] = '\0';
  cJSON *j = cJSON_CreateString(hex);
  free(hex);
  return j;
}

cJSON *store_col_json(sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
      return cJSON_CreateNumber((double)sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: {
      double v = sqlite3_column_double(st, i);
      return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
    }
    case SQLITE_TEXT:
      return cJSON_CreateString((const char *)sqlite3_column_text(st, i));
    case SQLITE_BLOB:
      return blob_hex(sqlite3_column_blob(st, i), sqlite3_column_bytes(st, i));
    default:
      return cJSON_CreateNull();
  }
}

/* One row as an object keyed by column name. JSON columns (config, env, command) stay
 * strings, exactly as stored, so what a caller parses is what `flagtune query` shows. */
static cJSON *row_object(sqlite3_stmt *st) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; i < sqlite3_column_count(st); i++)
    cJSON_AddItemToObject(o, sqlite3_column_name(st, i), store_col_json(st, i));
  return o;
}

/* Steps a bound statement to the end: rows as objects appended to ARR. Resets it. */
static int rows_append(store *s, sqlite3_stmt *st, cJSON *arr, char **err) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) cJSON_AddItemToArray(arr, row_object(st));
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading");
  store_stmt_done(st);
  return rc;
}

/* Runs cached statement ID with :id bound (when it has one); rows into a new array. */
static int rows_by_id(store *s, stmt_id id, int64_t key, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  int rc = store_stmt_get(s, id, &st, err);
  if (rc) return rc;
  if (store_bind_index(st, ":id") && store_bind_int(st, ":id", key))
    return store_bind_fail(s, st, err);
  *out = cJSON_CreateArray();
  rc = rows_append(s, st, *out, err);
  if (rc) cJSON_Delete(*out), *out = NULL;
  return rc;
}

static int steps_array(store *s, int64_t trial_id, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_TRIAL_STEPS, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":trial_id", trial_id)) return store_bind_fail(s, st, err);
  *out = cJSON_CreateArray();
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    cJSON_AddItemToArray(*out, cJSON_CreateNumber(sqlite3_column_double(st, 0)));
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading step times");
  store_stmt_done(st);
  return rc;
}

/* The step times of trial ID in *V (*N of them; the caller frees *V). */
static int steps_doubles(store *s, int64_t id, double **v, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int cap = 0, rc = store_stmt_get(s, ST_TRIAL_STEPS, &st, err);
  *v = NULL;
  *n = 0;
  if (rc) return rc;
  if (store_bind_int(st, ":trial_id", id)) return store_bind_fail(s, st, err);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) *v = xrealloc(*v, sizeof **v * (size_t)(cap = cap ? cap * 2 : 256));
    (*v)[(*n)++] = sqlite3_column_double(st, 0);
  }
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading step times");
  store_stmt_done(st);
  return rc;
}

int store_sweep_cache_interval(store *s, int64_t sweep_id, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SWEEP_CI_SOURCE, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", sweep_id)) return store_bind_fail(s, st, err);
  rc = sqlite3_step(st);
  int64_t best = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  int64_t base = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
  int skip = rc == SQLITE_ROW ? sqlite3_column_int(st, 2) : 0;
  rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading the best trial");
  store_stmt_done(st);
  if (rc || best == 0 || base == 0) return rc;
  double *a = NULL, *b = NULL, sp, lo = NAN, hi = NAN;
  int na = 0, nb = 0;
  rc = steps_doubles(s, base, &a, &na, err);
  if (!rc) rc = steps_doubles(s, best, &b, &nb, err);
  if (skip < 0) skip = 0;
  if (!rc && na > skip && nb > skip)
    stats_speedup_ci(a + skip, na - skip, b + skip, nb - skip, STATS_DISPLAY_SEED, &sp, &lo, &hi);
  free(a);
  free(b);
  if (rc || isnan(lo)) return rc;
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_CI_SET, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":best", best) || store_bind_int(st, ":base", base) ||
      store_bind_real(st, ":lo", lo) || store_bind_real(st, ":hi", hi) ||
      store_bind_int(st, ":id", sweep_id))
    return store_bind_fail(s, st, err);
  return store_step_done(s, st, "caching the interval", err);
}

/* Adds "steps" of the trial whose id is in O's field ID_KEY, as field KEY ([] if none). */
static int add_steps(store *s, cJSON *o, const char *id_key, const char *key, char **err) {
  cJSON *id = cJSON_GetObjectItemCaseSensitive(o, id_key), *arr = NULL;
  int rc = cJSON_IsNumber(id) ? steps_array(s, (int64_t)id->valuedouble, &arr, err) : 0;
  cJSON_AddItemToObject(o, key, arr ? arr : cJSON_CreateArray());
  return rc;
}

int store_list_sweeps(store *s, cJSON **out, char **err) {
  return rows_by_id(s, ST_LIST_SWEEPS, 0, out, err);
}

/* The single trial that statement ID finds for the sweep, with its steps when STEPS, or
 * null. */
static int trial_with_steps(store *s, stmt_id id, int64_t sweep_id, int steps, cJSON **out,
                            char **err) {
  cJSON *rows = NULL;
  int rc = rows_by_id(s, id, sweep_id, &rows, err);
  cJSON *t = rc ? NULL : cJSON_DetachItemFromArray(rows, 0);
  cJSON_Delete(rows);
  if (t && steps) rc = add_steps(s, t, "id", "steps", err);
  *out = t ? t : cJSON_CreateNull();
  return rc;
}

static int show_counts(store *s, int64_t sweep_id, cJSON *o, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SHOW_COUNTS, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", sweep_id)) return store_bind_fail(s, st, err);
  cJSON *counts = cJSON_AddObjectToObject(o, "counts");
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    cJSON_AddNumberToObject(counts, (const char *)sqlite3_column_text(st, 0),
                            sqlite3_column_int(st, 1));
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "counting trials");
  store_stmt_done(st);
  return rc;
}

/* The fastest LIMIT ok trials of the sweep, into a new array. */
static int fastest_trials(store *s, int64_t sweep_id, int limit, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  int rc = store_stmt_get(s, ST_SHOW_TRIALS_FASTEST, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", sweep_id) || store_bind_int(st, ":limit", limit))
    return store_bind_fail(s, st, err);
  *out = cJSON_CreateArray();
  rc = rows_append(s, st, *out, err);
  if (rc) cJSON_Delete(*out), *out = NULL;
  return rc;
}

/* How many of the sweep's trials say their log could not be written (listing_log_failures). */
static int log_failures(store *s, int64_t sweep_id, cJSON *o, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SHOW_LOG_FAILURES, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", sweep_id)) return store_bind_fail(s, st, err);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) cJSON_AddNumberToObject(o, "log_failures", sqlite3_column_int(st, 0));
  rc = rc == SQLITE_ROW ? 0 : store_db_fail(s, err, "counting log failures");
  store_stmt_done(st);
  return rc;
}

/* "cost": what the sweep's latest finished trials cost in wall time (listing_cost), absent
 * before the first finished trial. */
static int show_cost(store *s, int64_t sweep_id, cJSON *o, char **err) {
  static const char *const keys[] = {"trials", "trial_s",        "first_step_s",    "step_ms",
                                     "steps",  "no_step_trials", "no_step_trial_s", "sampled"};
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SHOW_COST, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", sweep_id)) return store_bind_fail(s, st, err);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && sqlite3_column_int(st, 7) > 0) {
    cJSON *c = cJSON_AddObjectToObject(o, "cost");
    for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++)
      if (sqlite3_column_type(st, i) != SQLITE_NULL)
        cJSON_AddNumberToObject(c, keys[i], sqlite3_column_double(st, i));
  }
  rc = rc == SQLITE_ROW ? 0 : store_db_fail(s, err, "reading what trials cost");
  store_stmt_done(st);
  return rc;
}

/* "trials" as LIMIT asks (store_show_sweep_page), and "trials_listed" saying which. */
static int show_trials(store *s, int64_t sweep_id, int limit, cJSON *o, char **err) {
  cJSON *part = NULL;
  int total = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "n_trials"));
  const char *listed = "all";
  int rc = 0;
  if (limit == 0 || limit == STORE_SHOW_SUMMARY) {
    listed = "none";
    part = cJSON_CreateArray();
    if (limit == STORE_SHOW_SUMMARY) rc = log_failures(s, sweep_id, o, err);
  } else if (limit > 0 && total > limit) {
    listed = "fastest";
    rc = fastest_trials(s, sweep_id, limit, &part, err);
  } else {
    rc = rows_by_id(s, ST_SHOW_TRIALS, sweep_id, &part, err);
  }
  if (!rc) cJSON_AddItemToObject(o, "trials", part);
  if (!rc) cJSON_AddStringToObject(o, "trials_listed", listed);
  return rc;
}

static int show_parts(store *s, int64_t sweep_id, int limit, int steps, cJSON *o, char **err) {
  cJSON *part = NULL;
  int rc = show_counts(s, sweep_id, o, err);
  if (!rc) rc = show_cost(s, sweep_id, o, err);
  if (!rc) rc = show_trials(s, sweep_id, limit, o, err);
  if (!rc) rc = trial_with_steps(s, ST_SHOW_BEST, sweep_id, steps, &part, err);
  if (part) cJSON_AddItemToObject(o, "best", part), part = NULL;
  if (!rc) rc = trial_with_steps(s, ST_SHOW_BASELINE, sweep_id, steps, &part, err);
  if (part) cJSON_AddItemToObject(o, "baseline", part);
  return rc;
}

int store_each_trial(store *s, int64_t sweep_id, store_trial_fn fn, void *ud, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SHOW_TRIALS, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", sweep_id)) return store_bind_fail(s, st, err);
  int stop = 0;
  while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    cJSON *row = row_object(st);
    stop = fn(row, ud);
    cJSON_Delete(row);
  }
  rc = stop ? stop : rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading trials");
  store_stmt_done(st);
  return rc;
}

/* Column I as listing_num reads a listing's number: a finite integer or real, else NaN. */
static double col_num(sqlite3_stmt *st, int i) {
  int t = sqlite3_column_type(st, i);
  double v = t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, i) : NAN;
  return isfinite(v) ? v : NAN;
}

/* Column I as listing_str reads a listing's string (store_col_json): text as stored, a blob as
 * its hex (into *HEX, grown as needed and reused), else NULL. */
static const char *col_str(sqlite3_stmt *st, int i, char **hex, size_t *cap) {
  int t = sqlite3_column_type(st, i);
  if (t == SQLITE_TEXT) return (const char *)sqlite3_column_text(st, i);
  if (t != SQLITE_BLOB) return NULL;
  const unsigned char *p = sqlite3_column_blob(st, i);
  size_t n = (size_t)sqlite3_column_bytes(st, i);
  if (2 * n + 1 > *cap) *hex = xrealloc(*hex, *cap = 2 * n + 1);
  for (size_t k = 0; k < n; k++) snprintf(*hex + 2 * k, 3, "%02x", p[k]);
  (*hex)[2 * n] = '\0';
  return *hex;
}

int store_each_trial_line(store *s, int64_t sweep_id, store_trial_line_fn fn, void *ud,
                          char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SHOW_TRIAL_LINES, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", sweep_id)) return store_bind_fail(s, st, err);
  char *hex[4] = {NULL};
  size_t cap[4] = {0};
  int stop = 0;
  while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    store_trial_line t = {col_num(st, 0),
                          col_num(st, 3),
                          col_num(st, 4),
                          col_num(st, 5),
                          col_num(st, 6),
                          col_str(st, 1, &hex[0], &cap[0]),
                          col_str(st, 2, &hex[1], &cap[1]),
                          col_str(st, 7, &hex[2], &cap[2]),
                          col_str(st, 8, &hex[3], &cap[3])};
    stop = fn(&t, ud);
  }
  rc = stop ? stop : rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading trials");
  store_stmt_done(st);
  for (int i = 0; i < 4; i++) free(hex[i]);
  return rc;
}

static int show_sweep(store *s, int64_t sweep_id, int limit, int steps, cJSON **out, char **err) {
  cJSON *rows = NULL;
  *out = NULL;
  int rc = store_run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc) rc = rows_by_id(s, ST_SHOW_SWEEP, sweep_id, &rows, err);
  cJSON *o = rc ? NULL : cJSON_DetachItemFromArray(rows, 0);
  cJSON_Delete(rows);
  if (!rc && !o) rc = diag_set(err, FT_EINPUT, "no sweep '%lld'", (long long)sweep_id);
  if (!rc) rc = show_parts(s, sweep_id, limit, steps, o, err);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "ending a read", err);
  if (rc) {
    store_tx_rollback(s);
    cJSON_Delete(o);
    return rc;
  }
  *out = o;
  return 0;
}

int store_show_sweep_page(store *s, int64_t sweep_id, int limit, cJSON **out, char **err) {
  return show_sweep(s, sweep_id, limit, 1, out, err);
}

int store_show_sweep_brief(store *s, int64_t sweep_id, int limit, cJSON **out, char **err) {
  return show_sweep(s, sweep_id, limit, 0, out, err);
}

static int best_rows(store *s, const char *model, const char *hardware, int with_steps, cJSON **out,
                     char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  int rc = store_stmt_get(s, ST_BEST, &st, err);
  if (rc) return rc;
  if (store_bind_text(st, ":model", model) | store_bind_text(st, ":hardware", hardware))
    return store_bind_fail(s, st, err);
  cJSON *arr = cJSON_CreateArray(), *o;
  rc = rows_append(s, st, arr, err);
  if (with_steps) cJSON_ArrayForEach(o, arr) {
      if (!rc) rc = add_steps(s, o, "trial_id", "steps", err);
      if (!rc) rc = add_steps(s, o, "baseline_id", "baseline_steps", err);
    }
  if (rc) {
    cJSON_Delete(arr);
    return rc;
  }
  *out = arr;
  return 0;
}

int store_best(store *s, const char *model, const char *hardware, cJSON **out, char **err) {
  return best_rows(s, model, hardware, 1, out, err);
}

int store_best_brief(store *s, const char *model, const char *hardware, cJSON **out, char **err) {
  return best_rows(s, model, hardware, 0, out, err);
}

/* ---- imported jaxlib flag lists (issue 4). Rare, so the statements are prepared per call
 * rather than cached; each import is one write transaction. ---- */

static int flag_insert(store *s, sqlite3_stmt *st, const char *jaxlib, const store_flag_row *r,
                       char **err) {
  if (store_bind_text(st, ":jaxlib", jaxlib) | store_bind_text(st, ":name", r->name) |
      store_bind_text(st, ":type", r->type ? r->type : "") |
      store_bind_text(st, ":default_value", r->default_value) |
      store_bind_text(st, ":description", r->description))
    return store_bind_fail(s, st, err);
  return store_step_done(s, st, "storing an imported flag", err);
}

int store_flags_import(store *s, const char *jaxlib, const store_flag_row *rows, int n,
                       char **err) {
  sqlite3_stmt *del = NULL, *ins = NULL;
  int rc = store_run_cached(s, ST_BEGIN_WRITE, "starting a flag import", err);
  if (rc) return rc;
  if (sqlite3_prepare_v2(s->db, "DELETE FROM jaxlib_flags WHERE jaxlib = :jaxlib", -1, &del,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db,
                         "INSERT OR REPLACE INTO jaxlib_flags (jaxlib, name, type, default_value, "
                         "description) VALUES (:jaxlib, :name, :type, :default_value, "
                         ":description)",
                         -1, &ins, NULL) != SQLITE_OK) {
    rc = store_db_fail(s, err, "preparing a flag import");
    goto cleanup;
  }
  rc = store_bind_text(del, ":jaxlib", jaxlib)
           ? store_bind_fail(s, del, err)
           : store_step_done(s, del, "replacing a flag list", err);
  for (int i = 0; rc == 0 && i < n; i++) rc = flag_insert(s, ins, jaxlib, &rows[i], err);
  if (rc == 0) rc = store_run_cached(s, ST_COMMIT, "committing a flag import", err);

cleanup:
  sqlite3_finalize(del);
  sqlite3_finalize(ins);
  if (rc) store_tx_rollback(s);
  return rc;
}

/* Runs SQL with :jaxlib bound to JAXLIB (when it has the parameter); rows into a new array. */
static int flag_rows(store *s, const char *sql, const char *jaxlib, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
    return store_db_fail(s, err, "reading imported flags");
  if (store_bind_index(st, ":jaxlib") && store_bind_text(st, ":jaxlib", jaxlib)) {
    int rc = store_bind_fail(s, st, err);
    sqlite3_finalize(st);
    return rc;
  }
  *out = cJSON_CreateArray();
  int rc = rows_append(s, st, *out, err);
  sqlite3_finalize(st);
  if (rc) cJSON_Delete(*out), *out = NULL;
  return rc;
}

int store_flags_list(store *s, const char *jaxlib, cJSON **out, char **err) {
  return flag_rows(s,
                   "SELECT name, type, default_value, description, imported_at FROM jaxlib_flags "
                   "WHERE jaxlib = :jaxlib ORDER BY name",
                   jaxlib, out, err);
}

int store_flags_names(store *s, cJSON **out, char **err) {
  return flag_rows(s, "SELECT DISTINCT name FROM jaxlib_flags ORDER BY name", NULL, out, err);
}
