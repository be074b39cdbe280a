/* The store: what `flagtune report` reads of a sweep beyond its listing, as plain rows rather
 * than a cJSON tree of every trial: schema 13's kept tables (store/0013_report.sql: the
 * curves' candidates, span and tails, the repeated configurations), the fastest trials, a
 * sample of runs of consecutive trials by number, one trial's settings by id, one trial's step
 * times by id (and a streaming pass over every trial, store_report_each, which the report no longer
 * makes). So a report of a 60,000-trial sweep reads about 2,000 rows. Must not call up into other
 * modules. Prepared per call (one report runs each a few times). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "store_impl.h"

/* clang-format off */
static const char *const sql_each =
  "SELECT id, number, role, status, config, value, steps_budget, started_at, finished_at "
  "FROM trials WHERE sweep_id = :id ORDER BY number";
static const char *const sql_trial =
  "SELECT id, number, role, status, value, steps_budget, label, config, xla_flags, tpu_args, "
  "env FROM trials WHERE id = :id";
static const char *const sql_steps = "SELECT ms FROM steps WHERE trial_id = :id ORDER BY step";
/* Schema 13's aggregates (store/0013_report.sql) and the reads they leave bounded. Every row
 * passed has the columns of sql_each, NULL where a read does not need them. */
static const char *const sql_span =
  "SELECT NULL, NULL, NULL, NULL, NULL, NULL, max_budget, first_start, NULL "
  "FROM report_span WHERE sweep_id = :id";
static const char *const sql_tail =
  "SELECT NULL, last_number, NULL, NULL, NULL, NULL, budget, NULL, last_finish "
  "FROM report_tail WHERE sweep_id = :id";
/* CROSS JOIN: the sweep's few report_curve rows first, whatever the statistics (the planner
 * otherwise starts from every ok trial of the file without them). */
static const char *const sql_curve =
  "SELECT t.id, t.number, t.role, t.status, NULL, t.value, t.steps_budget, NULL, t.finished_at "
  "FROM report_curve c CROSS JOIN trials t ON t.id = c.trial_id "
  "WHERE c.sweep_id = :id AND t.status = 'ok' AND t.value IS NOT NULL ORDER BY t.number";
/* The same over the sweep's trials, for a sweep in report_stale. */
static const char *const sql_stale = "SELECT 1 FROM report_stale WHERE sweep_id = :id";
static const char *const sql_span_all =
  "SELECT NULL, NULL, NULL, NULL, NULL, NULL, max(steps_budget), min(started_at), NULL "
  "FROM trials INDEXED BY sqlite_autoindex_trials_1 WHERE sweep_id = :id";
static const char *const sql_tail_all =
  "SELECT NULL, max(number), NULL, NULL, NULL, NULL, max(coalesce(steps_budget, 0), 0), NULL, "
  "max(finished_at) FROM trials WHERE sweep_id = :id AND status = 'ok' AND value IS NOT NULL "
  "AND role NOT IN ('baseline', 'confirm') GROUP BY max(coalesce(steps_budget, 0), 0)";
static const char *const sql_curve_all =
  "SELECT t.id, t.number, t.role, t.status, NULL, t.value, t.steps_budget, NULL, t.finished_at "
  "FROM trials t WHERE t.sweep_id = :id AND t.status = 'ok' AND t.value IS NOT NULL "
  "AND t.role NOT IN ('baseline', 'confirm') ORDER BY t.number";
static const char *const sql_repeats =
  "SELECT id, number, role, status, config, value, steps_budget, NULL, NULL "
  "FROM trials WHERE sweep_id = :id AND status = 'ok' AND config IN "
  "(SELECT config FROM report_repeats WHERE sweep_id = :id AND best <= :best "
  "UNION ALL SELECT '{}') "
  "ORDER BY config, number";
static const char *const sql_fastest =
  "SELECT id, number, role, status, config, value, steps_budget, NULL, NULL "
  "FROM trials WHERE sweep_id = :id AND status = 'ok' AND value IS NOT NULL AND config <> '{}' "
  "AND config NOT IN (SELECT config FROM report_repeats WHERE sweep_id = :id) "
  "ORDER BY value, number";
static const char *const sql_last = "SELECT max(number) FROM trials WHERE sweep_id = :id";
/* A run of consecutive trials by number, for the sample's runs. */
static const char *const sql_run =
  "SELECT id, number, role, status, config, value, steps_budget, NULL, NULL, "
  "CASE WHEN status IN ('ok', 'running') THEN NULL "
  "ELSE substr(error, 1, min(300, instr(error || char(10), char(10)) - 1)) END "
  "FROM trials WHERE sweep_id = :id AND number >= :from AND number < :to ORDER BY number";
/* clang-format on */

const char *store_report_read(int i) {
  const char *const all[STORE_REPORT_READS] = {
      sql_each,     sql_trial,    sql_steps,     sql_span,    sql_tail,    sql_curve, sql_stale,
      sql_span_all, sql_tail_all, sql_curve_all, sql_repeats, sql_fastest, sql_last,  sql_run};
  return i >= 0 && i < STORE_REPORT_READS ? all[i] : NULL;
}

static int prepare(store *s, const char *sql, int64_t id, sqlite3_stmt **st, char **err) {
  *st = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
    return store_db_fail(s, err, "preparing a report's read");
  if (store_bind_int(*st, ":id", id)) {
    int rc = store_db_fail(s, err, "binding a report's read");
    sqlite3_finalize(*st);
    *st = NULL;
    return rc;
  }
  return 0;
}

static const char *text_or_null(sqlite3_stmt *st, int i) {
  return (const char *)sqlite3_column_text(st, i);
}

/* A trial row of a report's read: columns id, number, role, status, config, value,
 * steps_budget, in that order (the timestamps, where a read has them, follow). */
static store_report_row row_of(sqlite3_stmt *st) {
  return (store_report_row){
      .id = sqlite3_column_int64(st, 0),
      .number = sqlite3_column_int(st, 1),
      .role = text_or_null(st, 2),
      .status = text_or_null(st, 3),
      .config = text_or_null(st, 4),
      .value = sqlite3_column_type(st, 5) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 5),
      .steps_budget = sqlite3_column_int(st, 6),
  };
}

/* Runs SQL (bound to sweep ID and, where it has them, :step, :last and :best) and passes its
 * rows to FN. */
static int each(store *s, const char *sql, int64_t id, int64_t step, int64_t last, double best,
                store_report_fn fn, void *ud, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = prepare(s, sql, id, &st, err), stop = 0;
  if (rc) return rc;
  int ib = sqlite3_bind_parameter_index(st, ":best");
  if ((sqlite3_bind_parameter_index(st, ":step") && store_bind_int(st, ":step", step)) ||
      (sqlite3_bind_parameter_index(st, ":last") && store_bind_int(st, ":last", last)) ||
      (ib && sqlite3_bind_double(st, ib, best) != SQLITE_OK)) {
    rc = store_db_fail(s, err, "binding a report's read");
    sqlite3_finalize(st);
    return rc;
  }
  while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    store_report_row r = row_of(st);
    r.started_at = text_or_null(st, 7);
    r.finished_at = text_or_null(st, 8);
    stop = fn(&r, ud);
  }
  rc = stop ? stop : rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading trials");
  sqlite3_finalize(st);
  return rc;
}

int store_report_each(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err) {
  return each(s, sql_each, sweep_id, 0, 0, 0, fn, ud, err);
}

static int is_stale(const store_report_row *r, void *ud) {
  (void)r;
  *(int *)ud = 1;
  return 0;
}

/* Whether an ok trial of the sweep was deleted by hand (report_stale): 1, 0, or -1 and *ERR. */
static int stale(store *s, int64_t sweep_id, char **err) {
  int yes = 0, rc = each(s, sql_stale, sweep_id, 0, 0, 0, is_stale, &yes, err);
  return rc ? -1 : yes;
}

int store_report_span(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err) {
  int st = stale(s, sweep_id, err);
  if (st < 0) return FT_ESTORE;
  return each(s, st ? sql_span_all : sql_span, sweep_id, 0, 0, 0, fn, ud, err);
}

int store_report_tail(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err) {
  int st = stale(s, sweep_id, err);
  if (st < 0) return FT_ESTORE;
  return each(s, st ? sql_tail_all : sql_tail, sweep_id, 0, 0, 0, fn, ud, err);
}

int store_report_curve(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err) {
  int st = stale(s, sweep_id, err);
  if (st < 0) return FT_ESTORE;
  return each(s, st ? sql_curve_all : sql_curve, sweep_id, 0, 0, 0, fn, ud, err);
}

int store_report_repeats(store *s, int64_t sweep_id, double best, store_report_fn fn, void *ud,
                         char **err) {
  return each(s, sql_repeats, sweep_id, 0, 0, isnan(best) ? HUGE_VAL : best, fn, ud, err);
}

int store_report_fastest(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err) {
  int rc = each(s, sql_fastest, sweep_id, 0, 0, 0, fn, ud, err);
  return rc == STORE_REPORT_STOP ? 0 : rc;
}

int store_report_runs(store *s, int64_t sweep_id, int period, int run, store_report_fn fn, void *ud,
                      char **err) {
  sqlite3_stmt *st = NULL;
  int64_t last = -1;
  int rc = prepare(s, sql_last, sweep_id, &st, err), stop = 0;
  if (rc) return rc;
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
    last = sqlite3_column_int64(st, 0);
  rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading trials");
  sqlite3_finalize(st);
  if (rc || last < 0) return rc;
  if (period < 1) period = 1;
  if (run < 1) run = 1;
  if ((rc = prepare(s, sql_run, sweep_id, &st, err))) return rc;
  int ifrom = sqlite3_bind_parameter_index(st, ":from"),
      ito = sqlite3_bind_parameter_index(st, ":to");
  for (int64_t from = 0; !rc && !stop && from <= last; from += period) {
    if (sqlite3_bind_int64(st, ifrom, from) != SQLITE_OK ||
        sqlite3_bind_int64(st, ito, from + run) != SQLITE_OK) {
      rc = store_db_fail(s, err, "binding a report's read");
      break;
    }
    int got = SQLITE_DONE;
    while (!stop && (got = sqlite3_step(st)) == SQLITE_ROW) {
      store_report_row r = row_of(st);
      r.error = text_or_null(st, 9);
      stop = fn(&r, ud);
    }
    if (!stop && got != SQLITE_DONE) rc = store_db_fail(s, err, "reading trials");
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc ? rc : stop;
}

int store_report_cache(store *s, int pages, char **err) {
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA cache_size = %d", pages > 0 ? pages : 1);
  if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return store_db_fail(s, err, "setting the page cache's size");
  return 0;
}

int store_report_trial(store *s, int64_t trial_id, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  int rc = prepare(s, sql_trial, trial_id, &st, err);
  if (rc) return rc;
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < sqlite3_column_count(st); i++)
      cJSON_AddItemToObject(o, sqlite3_column_name(st, i), store_col_json(st, i));
    *out = o;
  }
  rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading a trial");
  sqlite3_finalize(st);
  if (!rc && !*out) *out = cJSON_CreateNull();
  return rc;
}

int store_report_steps(store *s, int64_t trial_id, double **out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int cap = 0, rc = prepare(s, sql_steps, trial_id, &st, err);
  *out = NULL;
  *n = 0;
  if (rc) return rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) *out = xrealloc(*out, sizeof **out * (size_t)(cap = cap ? cap * 2 : 64));
    (*out)[(*n)++] = sqlite3_column_double(st, 0);
  }
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading step times");
  sqlite3_finalize(st);
  if (rc) free(*out), *out = NULL, *n = 0;
  return rc;
}
