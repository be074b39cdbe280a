/* The store's read statements keep one query plan whatever statistics the database holds:
 * every SELECT of the statement table (store/store.c) and of store/store_report.c is planned on a
 * database shaped like a large results file (one sweep of 12,000 trials among 20, 85 % ok, step
 * rows), without statistics, after ANALYZE, under the statistics of a file where one sweep holds
 * most trials, and under those statistics without the rows of schema 18's and 20's indexes (a
 * file analyzed before them); the plans must be the same text. A join order the planner may
 * flip on statistics (`show` reading every trial of a sweep to list 50) fails here by name,
 * with both plans. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "store.h"
#include "store_impl.h"
#include "test.h"

/* Twenty sweeps: sweep 1 with 12,000 trials, the others 400 each; a trial ok 85 % of the
 * time (5 step rows), else oom, crash or pruned (1 step row); trial 0 the baseline. */
static const char *const populate =
    "BEGIN;"
    "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20) "
    "INSERT INTO sweeps (id, name, model, hardware, strategy, seed, budget_trials, parallel, "
    "options_json, status) SELECT i, 'sweep' || i, 'model' || (i % 5), 'h100', 'random{}', i, "
    "CASE WHEN i = 1 THEN 12000 ELSE 400 END, 2, '{\"skip\": 2}', 'done' FROM k;"
    "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 19599) "
    "INSERT INTO trials (sweep_id, number, role, status, config, steps_budget, value, n_steps) "
    "SELECT sw, num, CASE WHEN num = 0 THEN 'baseline' ELSE 'search' END, st, "
    "CASE WHEN num = 0 THEN '{}' ELSE json_object('a', (i * 7919) % 100000) END, 45, "
    "CASE WHEN st = 'ok' THEN 400.0 + (i * 37) % 61 END, CASE WHEN st = 'ok' THEN 5 ELSE 1 END "
    "FROM (SELECT i, CASE WHEN i < 12000 THEN 1 ELSE 2 + (i - 12000) / 400 END AS sw, "
    "CASE WHEN i < 12000 THEN i ELSE (i - 12000) % 400 END AS num, "
    "CASE WHEN i % 100 < 85 OR i % 400 = 0 THEN 'ok' WHEN i % 100 < 92 THEN 'oom' "
    "WHEN i % 100 < 96 THEN 'crash' ELSE 'pruned' END AS st FROM k);"
    "UPDATE trials SET status = 'ok', value = 410 WHERE number = 0;"
    "WITH RECURSIVE k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 5) "
    "INSERT INTO steps (trial_id, step, ms) SELECT t.id, k.j, 400.0 + k.j FROM trials t, k "
    "WHERE k.j <= t.n_steps;"
    "COMMIT;";

/* The plan of SQL as text: each EXPLAIN QUERY PLAN row's depth and detail, one a line. */
static char *plan_of(sqlite3 *db, const char *sql) {
  char *q = xasprintf("EXPLAIN QUERY PLAN %s", sql);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
  free(q);
  if (rc != SQLITE_OK) return xasprintf("(cannot plan: %s)", sqlite3_errmsg(db));
  size_t cap = 256, len = 0;
  char *out = xcalloc(1, cap);
  int ids[256], depth[256], n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    int id = sqlite3_column_int(st, 0), parent = sqlite3_column_int(st, 1), d = 0;
    for (int i = 0; i < n; i++)
      if (ids[i] == parent) d = depth[i] + 1;
    if (n < 256) {
      ids[n] = id;
      depth[n++] = d;
    }
    const char *detail = (const char *)sqlite3_column_text(st, 3);
    size_t need = len + (size_t)d * 2 + strlen(detail ? detail : "") + 2;
    if (need > cap) out = xrealloc(out, cap = need * 2);
    len += (size_t)sprintf(out + len, "%*s%s\n", d * 2, "", detail ? detail : "");
  }
  sqlite3_finalize(st);
  return out;
}

static int is_read(const char *sql) {
  return sql && (strncmp(sql, "SELECT", 6) == 0 || strncmp(sql, "WITH", 4) == 0);
}

/* Every read the store prepares: the statement table's, then store_report.c's. */
enum { N_SQL = ST_COUNT + STORE_REPORT_READS };
static const char *sql_at(int id) {
  return id < ST_COUNT ? store_stmt_text((stmt_id)id) : store_report_read(id - ST_COUNT);
}

static void plans(sqlite3 *db, char **out) {
  for (int id = 0; id < N_SQL; id++) out[id] = is_read(sql_at(id)) ? plan_of(db, sql_at(id)) : NULL;
}

/* Counts the statements whose plan in GOT differs from WANT, printing both. */
static int differ(char **want, char **got, const char *what) {
  int bad = 0;
  for (int id = 0; id < N_SQL; id++) {
    if (!want[id] || strcmp(want[id], got[id]) == 0) continue;
    fprintf(stderr, "statement %d changes its plan %s:\n%s\nwithout statistics:\n%s\nnow:\n%s\n",
            id, what, sql_at(id), want[id], got[id]);
    bad++;
  }
  return bad;
}

static void exec_ok(sqlite3 *db, const char *sql) {
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) fprintf(stderr, "%s\n", msg);
  CHECK(msg == NULL);
  sqlite3_free(msg);
}

TEST(read_plans_do_not_depend_on_statistics) {
  char dir[] = "/tmp/ft_plan_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char *path = xasprintf("%s/t.db", dir);
  store *s = NULL;
  char *err = NULL;
  CHECK_INT(store_open(path, 0, &s, &err), 0);
  free(err);
  sqlite3 *db = s->db;
  exec_ok(db, populate);
  char *base[N_SQL], *now[N_SQL];
  int n_read = 0;
  plans(db, base);
  for (int id = 0; id < N_SQL; id++) n_read += base[id] != NULL;
  CHECK(n_read >= 20); /* the table's reads were found, not an empty comparison */
  for (int id = 0; id < N_SQL; id++)
    if (base[id]) CHECK(strstr(base[id], "cannot plan") == NULL);

  exec_ok(db, "ANALYZE");
  sqlite3_stmt *st = NULL;
  CHECK_INT(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_stat1", -1, &st, NULL), 0);
  CHECK_INT(sqlite3_step(st), SQLITE_ROW);
  CHECK(sqlite3_column_int(st, 0) > 5); /* the statistics exist: the plans below use them */
  sqlite3_finalize(st);
  plans(db, now);
  int bad = differ(base, now, "after ANALYZE");
  for (int id = 0; id < N_SQL; id++) free(now[id]);

  /* A file where sweep 1 holds 95 % of 100,000 trials: the per-sweep indexes look useless
   * to the planner unless the statement pins its order. */
  exec_ok(db,
          "DELETE FROM sqlite_stat1;"
          "INSERT INTO sqlite_stat1 VALUES "
          "('trials', 'trials_sweep_status_value', '100000 50000 20000 3'),"
          "('trials', 'trials_status_value', '100000 25000 3'),"
          "('trials', 'trials_ok_config', '85000 42500 1'),"
          "('trials', 'trials_measured_config', '85000 42500 1 1 1 1'),"
          "('trials', 'trials_confirm_config', '200 10 1'),"
          "('trials', 'trials_unok_config', '15000 7500 1'),"
          "('trials', 'trials_baseline_ok', '20 1 1'),"
          "('trials', 'sqlite_autoindex_trials_1', '100000 50000 1'),"
          "('steps', 'sqlite_autoindex_steps_1', '3000000 35 1'),"
          "('sweeps', 'sweeps_name', '20 1'), ('sweeps', 'sweeps_model_hardware', '20 4 1'),"
          "('sweep_counts', 'sqlite_autoindex_sweep_counts_1', '20 4 1');"
          "ANALYZE sqlite_schema;");
  plans(db, now);
  bad += differ(base, now, "under one large sweep's statistics");
  for (int id = 0; id < N_SQL; id++) free(now[id]);

  /* The same file analyzed before schema 18: no statistics for the indexes it and schema 20
   * added. */
  exec_ok(db,
          "DELETE FROM sqlite_stat1 WHERE idx IN ('trials_measured_config', "
          "'trials_confirm_config', 'trials_unok_config'); ANALYZE sqlite_schema;");
  plans(db, now);
  bad += differ(base, now, "under statistics older than schema 18's indexes");
  CHECK_INT(bad, 0);
  for (int id = 0; id < N_SQL; id++) {
    free(base[id]);
    free(now[id]);
  }
  CHECK_STORE_END(s);
  char *rm = xasprintf("rm -rf '%s'", dir);
  CHECK_INT(system(rm), 0);
  free(rm);
  free(path);
}
