/* The results database: migrations, refusals, round trips, the views, read-only queries,
 * contention between handles and processes, and every example query of docs/SCHEMA.md.
 * Each case uses a fresh database in its own temporary directory and checks that the store
 * closes cleanly (every cached statement finalized). */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "embed.h"
#include "procstat.h"
#include "stats.h"
#include "store.h"
#include "store_impl.h" /* the handle's query limits and identity check */
#include "store_fixture.h"
#include "test.h"

/* ---- fixtures ---- */

typedef struct {
  char dir[64];
  char path[96];
} tmpdb;

static void tmpdb_init(tmpdb *t) {
  snprintf(t->dir, sizeof t->dir, "/tmp/ft_store_XXXXXX");
  if (!mkdtemp(t->dir)) perror("mkdtemp");
  snprintf(t->path, sizeof t->path, "%s/t.db", t->dir);
}

static void tmpdb_remove(tmpdb *t) {
  char *cmd = xasprintf("rm -rf '%s'", t->dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", t->dir);
  free(cmd);
}

static store *open_ok(const char *path) {
  store *s = NULL;
  char *err = NULL;
  int rc = store_open(path, 0, &s, &err);
  if (rc) fprintf(stderr, "store_open: %s\n", err);
  CHECK_INT(rc, 0);
  free(err);
  return s;
}

static int64_t new_sweep(store *s, const char *name, const char *model, const char *hw,
                         const char *strategy) {
  store_sweep_new n = {.name = name,
                       .model = model,
                       .hardware = hw,
                       .strategy = strategy,
                       .experiment_path = "exp.lua",
                       .experiment_text = "return experiment{}",
                       .experiment_hash = "abc",
                       .seed = 7,
                       .budget_trials = 10,
                       .budget_steps = 20,
                       .parallel = 1,
                       .host = "box",
                       .options_json = "{\"trials\":10}"};
  int64_t id = 0;
  char *err = NULL;
  CHECK_INT(store_sweep_create(s, &n, &id, &err), 0);
  if (err) fprintf(stderr, "%s\n", err);
  free(err);
  return id;
}

static int64_t begin_trial(store *s, int64_t sweep, int number, const char *config) {
  char label[32];
  snprintf(label, sizeof label, "t%d", number);
  store_trial_new t = {.sweep_id = sweep,
                       .number = number,
                       .config_json = config,
                       .label = label,
                       .xla_flags = "--xla_a=1",
                       .env_json = "{\"V\":\"1\"}",
                       .command_json = "[\"python3\",\"train.py\"]",
                       .steps_budget = 20,
                       .slot = 0,
                       .log_path = "/tmp/log"};
  int64_t id = 0;
  char *err = NULL;
  CHECK_INT(store_trial_begin(s, &t, &id, &err), 0);
  if (err) fprintf(stderr, "%s\n", err);
  free(err);
  return id;
}

/* A trial that started and ended with STATUS; steps are VALUE*1.5 (warm-up), then VALUE±1. */
static int64_t add_trial(store *s, int64_t sweep, int number, const char *config,
                         const char *status, double value, const char *error) {
  int64_t id = begin_trial(s, sweep, number, config);
  double steps[5] = {value * 1.5, value + 1, value - 1, value, value};
  store_trial_end e = {.status = (outcome)outcome_from_name(status),
                       .value = value,
                       .has_exit = 1,
                       .exit_code = strcmp(status, "ok") == 0 ? 0 : 1,
                       .term_signal = strcmp(status, "timeout") == 0 ? 15 : 0,
                       .duration_s = 12.5,
                       .error = error};
  char *err = NULL;
  CHECK_INT(store_trial_finish(s, id, &e, steps, isfinite(value) ? 5 : 0, &err), 0);
  if (err) fprintf(stderr, "%s\n", err);
  free(err);
  return id;
}

#define LHS "{\"xla_gpu_enable_latency_hiding_scheduler\":true,\"NCCL_PROTO\":\"SIMPLE\"}"
#define AG                                              \
  "{\"xla_gpu_enable_latency_hiding_scheduler\":false," \
  "\"xla_gpu_all_gather_combine_threshold_bytes\":1048576}"

typedef struct {
  int64_t a, b, c;        /* sweeps */
  int64_t a2, b1, c1, b3; /* trials of interest */
} fixture;

/* Sweeps A and B share a (model, hardware) key and a name; C has another model and a failed
 * baseline. The best of A and B is A's trial 2 (88 ms, tied with B's trial 1, which came
 * later). */
static void populate(store *s, fixture *f) {
  f->a = new_sweep(s, "llama-fsdp", "llama2-7b", "8xH100-SXM", "random");
  add_trial(s, f->a, 0, "{}", "ok", 100, NULL);
  add_trial(s, f->a, 1, LHS, "ok", 90, NULL);
  f->a2 = add_trial(s, f->a, 2, AG, "ok", 88, NULL);
  add_trial(s, f->a, 3, "{\"xla_gpu_all_gather_combine_threshold_bytes\":8589934592}", "oom", 10,
            "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8589934592 bytes.");
  add_trial(s, f->a, 4, "{\"NCCL_PROTO\":\"LL\"}", "pruned", 50, "slower than the best");
  add_trial(s, f->a, 5, "{\"NCCL_PROTO\":\"LL128\"}", "timeout", NAN, "no step for 20m\nhung");
  f->b = new_sweep(s, "llama-fsdp", "llama2-7b", "8xH100-SXM", "tpe");
  add_trial(s, f->b, 0, "{}", "ok", 110, NULL);
  f->b1 = add_trial(s, f->b, 1, AG, "ok", 88, NULL);
  add_trial(s, f->b, 2, LHS, "crash", NAN, "Segmentation fault");
  f->b3 = begin_trial(s, f->b, 3, "{\"NCCL_PROTO\":\"SIMPLE\"}");
  f->c = new_sweep(s, "gpt-tp", "gpt-1.3b", "8xH100-SXM", "grid");
  add_trial(s, f->c, 0, "{}", "crash", NAN, "boom");
  f->c1 = add_trial(s, f->c, 1, LHS, "ok", 70, NULL);
  add_trial(s, f->c, 2, "{\"xla_bogus\":1}", "invalid", NAN, "Unknown flag(s) in XLA_FLAGS");
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* store_query's result collected: *COLS the names (after the header call), *ROWS every row. */
typedef struct {
  cJSON *cols, *rows;
} collected;

static int collect_row(const cJSON *cols, cJSON *row, void *ud) {
  collected *c = ud;
  if (!row) {
    c->cols = cJSON_Duplicate(cols, 1);
    c->rows = cJSON_CreateArray();
  } else {
    cJSON_AddItemToArray(c->rows, cJSON_Duplicate(row, 1));
  }
  return 0;
}

/* The schema version this build writes: the number of its newest embedded migration
 * (store/NNNN_name.sql), as store_open finds it. */
static int schema_latest(void) {
  int latest = 0;
  for (const embed_file *f = embed_files; f->path; f++) {
    int n = 0;
    if (sscanf(f->path, "store/%d_", &n) == 1 && strstr(f->path, ".sql") && n > latest) latest = n;
  }
  return latest;
}

/* store_query's limits for this handle (0: the default), as a test needs them small. */
static void set_query_limits(store *s, double seconds, int64_t bytes) {
  s->query_seconds = seconds > 0 ? seconds : STORE_QUERY_SECONDS;
  s->query_bytes = bytes > 0 ? bytes : STORE_QUERY_BYTES;
}

static int query_all(store *s, const char *sql, cJSON **cols, cJSON **rows, char **err) {
  collected c = {NULL, NULL};
  int rc = store_query(s, sql, collect_row, &c, err);
  *cols = c.cols;
  *rows = c.rows;
  return rc;
}

/* Runs SQL through store_query and returns the first cell as a number (NaN on failure). */
static double query_num(store *s, const char *sql) {
  cJSON *cols = NULL, *rows = NULL;
  char *err = NULL;
  double v = NAN;
  if (query_all(s, sql, &cols, &rows, &err) == 0) {
    cJSON *cell = cJSON_GetArrayItem(cJSON_GetArrayItem(rows, 0), 0);
    if (cJSON_IsNumber(cell)) v = cell->valuedouble;
  } else {
    fprintf(stderr, "query failed: %s\n", err);
  }
  cJSON_Delete(cols);
  cJSON_Delete(rows);
  free(err);
  return v;
}

/* ---- opening ---- */

TEST(open_migrate_twice) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  CHECK_NEAR(query_num(s, "PRAGMA user_version"), schema_latest(), 0);
  int64_t id = new_sweep(s, "x", "m", "h", "grid");
  CHECK_STORE_END(s);
  s = open_ok(t.path);
  CHECK_NEAR(query_num(s, "PRAGMA user_version"), schema_latest(), 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM sweeps"), 1, 0);
  CHECK_NEAR(query_num(s, "SELECT id FROM sweeps"), (double)id, 0);
  CHECK_STORE_END(s);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  sqlite3_open(t.path, &db);
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
  CHECK_INT(sqlite3_step(st), SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  tmpdb_remove(&t);
}

/* A database written before metric.check (schema 5, foreign keys on as flagtune runs them)
 * keeps every trial, step and winner through the rebuild of trials in 0007, and takes the new
 * status and column afterwards. */
TEST(migration_rebuilds_trials_keeping_rows) {
  tmpdb t;
  tmpdb_init(&t);
  sqlite3 *db = NULL;
  CHECK_INT(sqlite3_open(t.path, &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
  const char *files[] = {"store/0001_init.sql", "store/0002_flags.sql", "store/0003_confirm.sql",
                         "store/0004_software.sql", "store/0005_pgle.sql"};
  for (int i = 0; i < 5; i++)
    CHECK_INT(sqlite3_exec(db, embed_find(files[i])->data, NULL, NULL, NULL), SQLITE_OK);
  CHECK_INT(sqlite3_exec(db,
                         "PRAGMA user_version = 5;"
                         "INSERT INTO sweeps (id, name, model, hardware) VALUES (1, 's', 'm', 'h');"
                         "INSERT INTO trials (id, sweep_id, number, role, status, value) VALUES "
                         "(10, 1, 0, 'baseline', 'ok', 100), (11, 1, 1, 'search', 'ok', 90),"
                         "(12, 1, 2, 'search', 'oom', NULL);"
                         "INSERT INTO steps VALUES (10, 1, 100), (11, 1, 91), (11, 2, 89);"
                         "UPDATE sweeps SET winner_trial_id = 11 WHERE id = 1;",
                         NULL, NULL, NULL),
            SQLITE_OK);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  store *s = open_ok(t.path);
  CHECK_NEAR(query_num(s, "PRAGMA user_version"), schema_latest(), 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM trials"), 3, 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM steps"), 3, 0);
  CHECK_NEAR(query_num(s, "SELECT winner_trial_id FROM sweeps"), 11, 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM trials WHERE status = 'oom'"), 1, 0);
  CHECK_NEAR(query_num(s, "SELECT best_trial FROM sweep_summary"), 1, 0);
  CHECK_NEAR(query_num(s, "SELECT wrong FROM sweep_summary"), 0, 0);
  CHECK_NEAR(query_num(s, "PRAGMA foreign_keys"), 1, 0);
  int64_t id = begin_trial(s, 1, 3, "{\"a\":1}");
  double losses[] = {2.5, -0.25, 1e-300};
  store_trial_end e = {.status = OUTCOME_WRONG, .losses = losses, .n_losses = 3};
  CHECK_INT(store_trial_finish(s, id, &e, NULL, 0, NULL), 0);
  double *back = NULL;
  int n = 0;
  CHECK_INT(store_trial_losses(s, id, &back, &n, NULL), 0);
  CHECK_INT(n, 3);
  if (n == 3) CHECK(back[0] == 2.5 && back[1] == -0.25 && back[2] == 1e-300);
  free(back);
  CHECK_NEAR(query_num(s, "SELECT wrong FROM sweep_summary"), 1, 0);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* The text of every view in the database at PATH, in name order, joined. */
static char *views_text(const char *path) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *all = xstrdup("");
  sqlite3_open(path, &db);
  sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_schema WHERE type = 'view' ORDER BY name",
                     -1, &st, NULL);
  while (sqlite3_step(st) == SQLITE_ROW) {
    char *next = xasprintf("%s%s:%s\n", all, (const char *)sqlite3_column_text(st, 0),
                           (const char *)sqlite3_column_text(st, 1));
    free(all);
    all = next;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return all;
}

/* The schema of the database at PATH as a reader sees it: every object's text in name order,
 * then each table's indexes in the order the planner is handed them. */
static char *schema_text(const char *path) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *all = xstrdup("");
  sqlite3_open(path, &db);
  sqlite3_prepare_v2(db,
                     "SELECT type || ' ' || name || ' ' || tbl_name || ': ' || coalesce(sql, '') "
                     "FROM sqlite_schema UNION ALL "
                     "SELECT 'on ' || m.name || ' ' || il.seq || ' ' || il.name "
                     "FROM sqlite_schema m, pragma_index_list(m.name) il WHERE m.type = 'table' "
                     "ORDER BY 1",
                     -1, &st, NULL);
  while (sqlite3_step(st) == SQLITE_ROW) {
    char *next = xasprintf("%s%s\n", all, (const char *)sqlite3_column_text(st, 0));
    free(all);
    all = next;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return all;
}

/* A new database takes the schema in one step (tools/schema.c); it is the schema a database
 * of schema 1 reaches through every migration and views.sql, object for object and index
 * order for index order. */
TEST(new_database_schema_is_the_migrations_result) {
  tmpdb fresh, old;
  tmpdb_init(&fresh);
  tmpdb_init(&old);
  CHECK_STORE_END(open_ok(fresh.path));
  sqlite3 *db = NULL;
  CHECK_INT(sqlite3_open(old.path, &db), SQLITE_OK);
  CHECK_INT(sqlite3_exec(db, embed_find("store/0001_init.sql")->data, NULL, NULL, NULL),
            SQLITE_OK);
  CHECK_INT(sqlite3_exec(db, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  store *s = open_ok(old.path);
  CHECK_NEAR(query_num(s, "PRAGMA user_version"), schema_latest(), 0);
  CHECK_STORE_END(s);
  s = open_ok(fresh.path);
  CHECK_NEAR(query_num(s, "PRAGMA user_version"), schema_latest(), 0);
  CHECK_NEAR(query_num(s, "PRAGMA foreign_keys"), 1, 0);
  CHECK_STORE_END(s);
  char *want = schema_text(old.path), *got = schema_text(fresh.path);
  CHECK(strstr(want, "trigger trials_report_ok_update trials: CREATE TRIGGER") != NULL);
  CHECK(strstr(want, "on trials 0 ") != NULL);
  CHECK_STR(got, want);
  free(want);
  free(got);
  tmpdb_remove(&fresh);
  tmpdb_remove(&old);
}

/* Every upgrade makes the views again from store/views.sql: a database one schema behind
 * whose `best` view is not the one views.sql defines gets views.sql's views, the same text as a
 * new database's; a database already at the latest schema is not upgraded, its views stay. */
TEST(upgrade_makes_the_views_from_views_sql) {
  tmpdb fresh, old;
  tmpdb_init(&fresh);
  tmpdb_init(&old);
  CHECK_STORE_END(open_ok(fresh.path));
  CHECK_STORE_END(open_ok(old.path));
  sqlite3 *db = NULL;
  /* One schema behind: the latest migration's index (schema 20's trials_unok_config) taken
   * out again, so that it applies once more. */
  char *behind = xasprintf(
      "DROP VIEW best; CREATE VIEW best AS SELECT 1 AS stale;"
      "DROP INDEX trials_unok_config;"
      "PRAGMA user_version = %d;",
      schema_latest() - 1);
  CHECK_INT(sqlite3_open(old.path, &db), SQLITE_OK);
  CHECK_INT(sqlite3_exec(db, behind, NULL, NULL, NULL), SQLITE_OK);
  free(behind);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  CHECK_STORE_END(open_ok(old.path));
  char *want = views_text(fresh.path), *got = views_text(old.path);
  CHECK(strstr(want, "sweep_baseline:CREATE VIEW") != NULL);
  CHECK(strstr(got, "stale") == NULL);
  CHECK_STR(got, want);
  free(got);
  CHECK_INT(sqlite3_open(old.path, &db), SQLITE_OK);
  CHECK_INT(
      sqlite3_exec(db, "DROP VIEW best; CREATE VIEW best AS SELECT 1 AS stale", NULL, NULL, NULL),
      SQLITE_OK);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  CHECK_STORE_END(open_ok(old.path));
  got = views_text(old.path);
  CHECK(strstr(got, "best:CREATE VIEW best AS SELECT 1 AS stale") != NULL);
  free(got);
  free(want);
  tmpdb_remove(&fresh);
  tmpdb_remove(&old);
}

TEST(newer_version_refused) {
  tmpdb t;
  tmpdb_init(&t);
  CHECK_STORE_END(open_ok(t.path));
  sqlite3 *db = NULL;
  CHECK_INT(sqlite3_open(t.path, &db), SQLITE_OK);
  CHECK_INT(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  store *s = NULL;
  char *err = NULL;
  CHECK_INT(store_open(t.path, 0, &s, &err), FT_EINPUT);
  CHECK(s == NULL);
  CHECK_STORE_END(s); /* nothing to close: a refused open leaves none behind */
  char *want = xasprintf(
      "database %s was written by a newer flagtune (schema 99, this one "
      "knows %d)",
      t.path, schema_latest());
  CHECK_STR(err, want);
  free(want);
  free(err);
  tmpdb_remove(&t);
}

/* Opens PATH expecting failure CODE with a message containing PATH and NEEDLE. */
static void open_fails(const char *path, int flags, int code, const char *needle) {
  store *s = NULL;
  char *err = NULL;
  CHECK_INT(store_open(path, flags, &s, &err), code);
  CHECK(s == NULL);
  CHECK_STORE_END(s);
  CHECK(err && strstr(err, path));
  CHECK(err && strstr(err, needle));
  if (err && (!strstr(err, path) || !strstr(err, needle))) fprintf(stderr, "got: %s\n", err);
  free(err);
}

TEST(open_bad_paths) {
  tmpdb t;
  tmpdb_init(&t);
  char *missing = xasprintf("%s/no/such/dir/x.db", t.dir);
  open_fails(missing, 0, FT_EINPUT, "does not exist");
  open_fails(t.path, STORE_READONLY, FT_EINPUT, "no database at");
  char *empty = xasprintf("%s/empty.db", t.dir);
  fclose(fopen(empty, "w"));
  open_fails(empty, STORE_READONLY, FT_EINPUT, "is empty");
  free(empty);
  open_fails(t.dir, 0, FT_EINPUT, "is a directory");
  char *junk = xasprintf("%s/junk.db", t.dir);
  FILE *f = fopen(junk, "w");
  for (int i = 0; f && i < 200; i++) fputs("this is not an SQLite database\n", f);
  if (f) fclose(f);
  open_fails(junk, 0, FT_EINPUT, "not a flagtune database");
  char *other = xasprintf("%s/other.db", t.dir);
  sqlite3 *db = NULL;
  sqlite3_open(other, &db);
  CHECK_INT(sqlite3_exec(db, "CREATE TABLE mine (x)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  open_fails(other, 0, FT_EINPUT, "not a flagtune one");
  if (geteuid() != 0) {
    CHECK_STORE_END(open_ok(t.path));
    chmod(t.path, 0444);
    open_fails(t.path, 0, FT_EINPUT, "read-only");
  } else {
    fprintf(stderr, "(running as root: the read-only file case cannot be provoked)\n");
  }
  free(missing);
  free(junk);
  free(other);
  tmpdb_remove(&t);
}

TEST(readonly_open_reads) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  new_sweep(s, "x", "m", "h", "grid");
  CHECK_STORE_END(s);
  char *err = NULL;
  CHECK_INT(store_open(t.path, STORE_READONLY, &s, &err), 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM sweep_summary"), 1, 0);
  CHECK(store_sweep_create(s, &(store_sweep_new){.name = "y", .model = "m", .hardware = "h"}, NULL,
                           &err) == FT_ESTORE);
  CHECK(err && strstr(err, "readonly"));
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* ---- sweeps and trials ---- */

TEST(sweep_status_and_get) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  store_sweep sw;
  char *err = NULL;
  CHECK_INT(store_sweep_get(s, "gpt-tp", &sw, &err), 0);
  CHECK_INT(sw.id, f.c);
  CHECK_STR(sw.model, "gpt-1.3b");
  CHECK_STR(sw.status, "running");
  CHECK_STR(sw.options_json, "{\"trials\":10}");
  CHECK_INT(sw.seed, 7);
  CHECK_INT(sw.budget_trials, 10);
  CHECK_INT(sw.budget_steps, 20);
  CHECK_NEAR(sw.budget_hours, 0, 0);
  CHECK_INT(sw.pid, getpid());
  store_sweep_clear(&sw);

  char ref[32];
  snprintf(ref, sizeof ref, "%lld", (long long)f.b);
  CHECK_INT(store_sweep_get(s, ref, &sw, &err), 0);
  CHECK_INT(sw.id, f.b);
  CHECK_STR(sw.strategy, "tpe");
  store_sweep_clear(&sw);

  char *want = xasprintf("sweep name 'llama-fsdp' is ambiguous: ids %lld, %lld (use the id)",
                         (long long)f.a, (long long)f.b);
  CHECK_INT(store_sweep_get(s, "llama-fsdp", &sw, &err), FT_EINPUT);
  CHECK_STR(err, want);
  free(want);
  CHECK_INT(store_sweep_get(s, "12", &sw, &err), FT_EINPUT);
  CHECK_STR(err, "no sweep '12'");
  CHECK_INT(store_sweep_get(s, "nope", &sw, &err), FT_EINPUT);
  CHECK_STR(err, "no sweep named 'nope' (see `flagtune sweeps`)");
  CHECK_INT(store_sweep_get(s, "llama-fsd", &sw, &err), FT_EINPUT); /* a near miss is named */
  CHECK_STR(err, "no sweep named 'llama-fsd' (did you mean 'llama-fsdp'? see `flagtune sweeps`)");
  CHECK_INT(store_sweep_get(s, "llam", &sw, &err), FT_EINPUT); /* a name it begins */
  CHECK_STR(err, "no sweep named 'llam' (did you mean 'llama-fsdp'? see `flagtune sweeps`)");

  CHECK_INT(store_sweep_set_status(s, f.a, "done", NULL, 0, &err), 0);
  CHECK_NEAR(query_num(s,
                       "SELECT count(*) FROM sweeps WHERE status = 'done' AND pid IS NULL "
                       "AND finished_at LIKE '____-__-__T__:__:__.___Z'"),
             1, 0);
  CHECK_INT(store_sweep_set_status(s, f.a, "running", NULL, 4242, &err), 0);
  CHECK_NEAR(query_num(s, "SELECT pid FROM sweeps WHERE finished_at IS NULL AND pid = 4242"), 4242,
             0);
  CHECK_INT(store_sweep_set_status(s, f.a, "bogus", NULL, 0, &err), FT_ESTORE);
  CHECK_INT(store_sweep_set_status(s, 999, "done", NULL, 0, &err), FT_EINPUT);
  CHECK_STR(err, "no sweep 999");
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

TEST(trials_roundtrip) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  char *err = NULL;
  CHECK_INT(store_trial_set_pid(s, f.b3, 5151, &err), 0);
  trial_record *tr = NULL;
  int n = 0;
  CHECK_INT(store_trials_load(s, f.a, &tr, &n, &err), 0);
  CHECK_INT(n, 6);
  if (n == 6) {
    CHECK_INT(tr[0].number, 0);
    CHECK_INT(tr[0].role, ROLE_BASELINE);
    CHECK_INT(tr[1].role, ROLE_SEARCH);
    CHECK_STR(tr[2].config_json, AG);
    CHECK_NEAR(tr[2].value, 88, 0);
    CHECK_INT(tr[2].n_steps, 5);
    CHECK_NEAR(tr[2].steps[0], 132, 1e-9);
    CHECK_NEAR(tr[2].steps[4], 88, 1e-9);
    CHECK_INT(tr[2].steps_budget, 20);
    CHECK_INT(tr[3].status, OUTCOME_OOM);
    CHECK(isnan(tr[3].value)); /* a value given with a non-ok status is not stored */
    CHECK(isnan(tr[4].value));
    CHECK_INT(tr[5].n_steps, 0);
  }
  record_free(tr, n);
  CHECK_INT(store_trials_load(s, f.b, &tr, &n, &err), 0);
  CHECK_INT(n, 4);
  if (n == 4) {
    CHECK_INT(tr[3].status, OUTCOME_RUNNING);
    CHECK_INT(tr[3].pid, 5151);
    CHECK(isnan(tr[3].value));
  }
  record_free(tr, n);
  CHECK_NEAR(query_num(s, "SELECT signal FROM trials WHERE status = 'timeout'"), 15, 0);
  CHECK_NEAR(query_num(s, "SELECT exit_code FROM trials WHERE status = 'timeout'"), 1, 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM trials WHERE started_at LIKE '%Z'"), 13, 0);
  store_trial_new dup = {.sweep_id = f.a, .number = 1};
  CHECK_INT(store_trial_begin(s, &dup, NULL, &err), FT_ESTORE);
  store_trial_new orphan = {.sweep_id = 999, .number = 1};
  CHECK_INT(store_trial_begin(s, &orphan, NULL, &err), FT_ESTORE); /* foreign keys are on */
  store_trial_end e = {.status = OUTCOME_OK, .value = 1};
  CHECK_INT(store_trial_finish(s, 12345, &e, NULL, 0, &err), FT_ESTORE);
  CHECK(err && strstr(err, "no trial 12345"));
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* Marks the trials whose config is AG (and counts the calls). */
static void want_ag(const trial_record *t, int n, char *want, void *ud) {
  (*(int *)ud)++;
  for (int i = 0; i < n; i++) want[i] = strcmp(t[i].config_json, AG) == 0;
}

/* store_trials_load_some: every row, step times only where asked (a sweep's end reads a few
 * trials' steps, not 10,000 trials' worth). */
TEST(trials_load_some_steps) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  char *err = NULL;
  trial_record *tr = NULL;
  int n = 0, calls = 0;
  CHECK_INT(store_trials_load_some(s, f.a, want_ag, &calls, &tr, &n, &err), 0);
  CHECK_INT(calls, 1);
  CHECK_INT(n, 6);
  for (int i = 0; i < n; i++) {
    int ag = strcmp(tr[i].config_json, AG) == 0;
    CHECK_INT(tr[i].n_steps, ag ? 5 : 0);
    CHECK(ag ? tr[i].steps != NULL : tr[i].steps == NULL);
  }
  if (n == 6) {
    CHECK_NEAR(tr[2].steps[0], 132, 1e-9);
    CHECK_NEAR(tr[2].steps[4], 88, 1e-9);
    CHECK_NEAR(tr[0].value, 100, 0); /* rows are whole without their steps */
    CHECK_INT(tr[3].status, OUTCOME_OOM);
  }
  record_free(tr, n);
  CHECK_INT(store_trials_load_some(s, f.a, NULL, NULL, &tr, &n, &err), 0);
  CHECK_INT(n, 6);
  for (int i = 0; i < n; i++) CHECK_INT(tr[i].n_steps, 0);
  record_free(tr, n);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

TEST(finish_replaces_steps) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  int64_t sw = new_sweep(s, "x", "m", "h", "grid");
  int64_t id = begin_trial(s, sw, 0, "{}");
  double a[4] = {5, 4, 3, 2}, b[2] = {9, NAN};
  store_trial_end e = {.status = OUTCOME_OK, .value = 3.5};
  CHECK_INT(store_trial_finish(s, id, &e, a, 4, NULL), 0);
  CHECK_INT(store_trial_finish(s, id, &e, b, 2, NULL), 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM steps"), 1, 0);
  CHECK_NEAR(query_num(s, "SELECT ms FROM steps WHERE step = 1"), 9, 0);
  e.status = OUTCOME_COUNT; /* no such outcome: the schema's CHECK refuses its name */
  CHECK_INT(store_trial_finish(s, id, &e, a, 4, NULL), FT_ESTORE);
  /* The failed finish rolled back: the earlier outcome and steps are intact. */
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM steps"), 1, 0);
  CHECK_NEAR(query_num(s, "SELECT value FROM trials"), 3.5, 0);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

TEST(mark_running_lost) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  begin_trial(s, f.a, 6, "{}");
  int n = -1;
  char *err = NULL;
  CHECK_INT(store_trials_mark(s, f.b, OUTCOME_RUNNING, OUTCOME_LOST, &n, &err), 0);
  CHECK_INT(n, 1);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM trials WHERE status = 'running'"), 1, 0);
  CHECK_NEAR(query_num(s,
                       "SELECT count(*) FROM trials WHERE status = 'lost' "
                       "AND finished_at IS NOT NULL"),
             1, 0);
  CHECK_INT(store_trials_mark(s, f.b, OUTCOME_RUNNING, OUTCOME_LOST, &n, &err), 0);
  CHECK_INT(n, 0);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* ---- views and listings ---- */

static cJSON *best_for(cJSON *arr, const char *model) {
  cJSON *o;
  cJSON_ArrayForEach(o, arr) {
    if (str(o, "model") && strcmp(str(o, "model"), model) == 0) return o;
  }
  return NULL;
}

/* Hardware keys (src/exec/hardware.h): a bare base (an older sweep's key, or what a user types)
 * matches every key with that base; a detailed key only itself. Warm start reads earlier
 * sweeps on the same base. */
TEST(best_and_warm_match_hardware_base) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  int64_t old = new_sweep(s, "old", "m", "8xH100", "random");
  add_trial(s, old, 0, "{}", "ok", 100, NULL);
  add_trial(s, old, 1, LHS, "ok", 90, NULL);
  int64_t now = new_sweep(s, "now", "m", "8xH100@80GiB,drv535,cuda12.2,nvlink", "random");
  add_trial(s, now, 0, "{}", "ok", 100, NULL);
  add_trial(s, now, 1, AG, "ok", 80, NULL);
  int64_t other = new_sweep(s, "other", "m", "8xH100-SXM@80GiB,drv535", "random");
  add_trial(s, other, 0, "{}", "ok", 100, NULL);
  cJSON *arr = NULL;
  CHECK_INT(store_best(s, NULL, "8xH100", &arr, NULL), 0);
  CHECK_INT(cJSON_GetArraySize(arr), 2); /* the old key and the detailed one, not 8xH100-SXM */
  cJSON_Delete(arr);
  CHECK_INT(store_best(s, NULL, "8xH100@80GiB,drv535,cuda12.2,nvlink", &arr, NULL), 0);
  CHECK_INT(cJSON_GetArraySize(arr), 1);
  cJSON_Delete(arr);
  CHECK_INT(store_best(s, NULL, "8xH100@80GiB,drv999", &arr, NULL), 0);
  CHECK_INT(cJSON_GetArraySize(arr), 0);
  cJSON_Delete(arr);
  trial_record *w = NULL;
  int n = 0;
  CHECK_INT(store_warm_trials(s, "m", "8xH100@80GiB,drv600,cuda13.0", 0, &w, &n, NULL), 0);
  CHECK_INT(n, 2); /* the search trials of both sweeps on the base 8xH100 */
  record_free(w, n);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A warm start reads a bounded history: the STORE_WARM_BEST fastest ok trials and the
 * STORE_WARM_RECENT most recent others, oldest first, whatever the database holds. */
TEST(warm_trials_bounded) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  int64_t old = new_sweep(s, "old", "m", "8xH100", "random");
  add_trial(s, old, 0, "{}", "ok", 100, NULL);
  int64_t small = new_sweep(s, "small", "m", "8xH100", "random");
  add_trial(s, small, 1, LHS, "ok", 0.5, NULL); /* the fastest of all, in another sweep */
  sqlite3 *db = NULL;
  CHECK_INT(sqlite3_open(t.path, &db), SQLITE_OK);
  /* 2,600 search trials: numbers 1..2600, i % 26 < 15 ok (1,500) with distinct values
   * (i * 7 mod 2609, 2609 prime), the others oom (1,100). */
  char *sql = sqlite3_mprintf(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2600) "
      "INSERT INTO trials (sweep_id, number, role, status, config, value) "
      "SELECT %lld, i, 'search', CASE WHEN i %% 26 < 15 THEN 'ok' ELSE 'oom' END, "
      "'{\"a\":' || i || '}', CASE WHEN i %% 26 < 15 THEN (i * 7) %% 2609 + 1 END FROM n",
      (long long)old);
  CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_free(sql);
  sqlite3_close(db);
  int64_t now = new_sweep(s, "now", "m", "8xH100", "random");
  trial_record *w = NULL;
  int n = 0;
  CHECK_INT(store_warm_trials(s, "m", "8xH100", now, &w, &n, NULL), 0);
  CHECK_INT(n, STORE_WARM_BEST + STORE_WARM_RECENT);
  /* The expected sets, computed here: the fastest ok (the other sweep's one among them). */
  double cut = 0;
  {
    double *v = xcalloc(1501, sizeof *v);
    int k = 0;
    for (int i = 1; i <= 2600; i++)
      if (i % 26 < 15) v[k++] = (double)((i * 7) % 2609 + 1);
    v[k++] = 0.5;
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    cut = v[STORE_WARM_BEST - 1];
    free(v);
  }
  int ok = 0, failed = 0, ordered = 1, first_failed = 2601;
  for (int i = 0; i < n; i++) {
    CHECK_INT(w[i].number, -1);
    CHECK(w[i].n_steps == 0 && w[i].steps == NULL);
    if (w[i].status == OUTCOME_OK) {
      ok++;
      CHECK(w[i].value <= cut);
    } else {
      failed++;
      int num = atoi(w[i].config_json + 5);
      if (num < first_failed) first_failed = num;
    }
    if (i > 0 && w[i].id < w[i - 1].id && strcmp(w[i].config_json, LHS) != 0) ordered = 0;
  }
  CHECK_INT(ok, STORE_WARM_BEST);
  CHECK_INT(failed, STORE_WARM_RECENT);
  CHECK(ordered); /* oldest first: sweep 1's trials by number, then sweep 2's */
  CHECK_STR(w[n - 1].config_json, LHS);
  /* the most recent 1,000 of the 1,100 failures: the first 100 (numbers 15..25, 41..51, ...,
   * up to the 100th) are left out */
  int skipped = 0, last_skipped = 0;
  for (int i = 1; i <= 2600 && skipped < 100; i++)
    if (i % 26 >= 15) skipped++, last_skipped = i;
  CHECK(first_failed > last_skipped);
  record_free(w, n);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

TEST(best_view) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  cJSON *arr = NULL;
  char *err = NULL;
  CHECK_INT(store_best(s, NULL, NULL, &arr, &err), 0);
  CHECK_INT(cJSON_GetArraySize(arr), 2);
  cJSON *m1 = best_for(arr, "llama2-7b"), *m2 = best_for(arr, "gpt-1.3b");
  CHECK(m1 && m2);
  if (m1 && m2) {
    CHECK_NEAR(num(m1, "sweep_id"), (double)f.a, 0);
    CHECK_NEAR(num(m1, "trial_id"), (double)f.a2, 0);
    CHECK_NEAR(num(m1, "best_trial"), 2, 0);
    CHECK_NEAR(num(m1, "best_ms"), 88, 0);
    CHECK_NEAR(num(m1, "baseline_ms"), 100, 0);
    CHECK_NEAR(num(m1, "speedup"), 100.0 / 88.0, 1e-12);
    CHECK_STR(str(m1, "hardware"), "8xH100-SXM");
    CHECK_STR(str(m1, "sweep_name"), "llama-fsdp");
    CHECK_STR(str(m1, "xla_flags"), "--xla_a=1");
    CHECK_STR(str(m1, "config"), AG);
    CHECK_STR(str(m1, "env"), "{\"V\":\"1\"}");
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(m1, "steps")), 5);
    CHECK_NEAR(cJSON_GetArrayItem(cJSON_GetObjectItem(m1, "baseline_steps"), 0)->valuedouble, 150,
               0);
    CHECK_NEAR(num(m2, "trial_id"), (double)f.c1, 0);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(m2, "baseline_ms")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(m2, "speedup")));
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(m2, "baseline_steps")), 0);
  }
  cJSON_Delete(arr);
  CHECK_INT(store_best(s, "gpt-1.3b", "8xH100-SXM", &arr, &err), 0);
  CHECK_INT(cJSON_GetArraySize(arr), 1);
  cJSON_Delete(arr);
  CHECK_INT(store_best(s, NULL, "8xA100", &arr, &err), 0);
  CHECK_INT(cJSON_GetArraySize(arr), 0);
  cJSON_Delete(arr);
  /* A later, faster trial in B wins, with B's own baseline for the speedup. */
  add_trial(s, f.b, 4, "{}", "ok", 55, NULL);
  CHECK_NEAR(query_num(s, "SELECT speedup FROM best WHERE model = 'llama2-7b'"), 110.0 / 55.0,
             1e-12);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

static const cJSON *find_sweep(const cJSON *arr, int64_t id) {
  const cJSON *o;
  cJSON_ArrayForEach(o, arr) {
    if (num(o, "id") == (double)id) return o;
  }
  return NULL;
}

TEST(list_and_show) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  cJSON *arr = NULL, *o = NULL;
  char *err = NULL;
  CHECK_INT(store_list_sweeps(s, &arr, &err), 0);
  CHECK_INT(cJSON_GetArraySize(arr), 3);
  const cJSON *a = find_sweep(arr, f.a), *c = find_sweep(arr, f.c);
  CHECK(a && c);
  if (a && c) {
    CHECK_NEAR(num(a, "n_trials"), 6, 0);
    CHECK_NEAR(num(a, "ok"), 3, 0);
    CHECK_NEAR(num(a, "oom"), 1, 0);
    CHECK_NEAR(num(a, "best_ms"), 88, 0);
    CHECK_NEAR(num(a, "best_trial"), 2, 0);
    CHECK_NEAR(num(a, "baseline_ms"), 100, 0);
    CHECK_NEAR(num(a, "speedup"), 100.0 / 88.0, 1e-12);
    CHECK_STR(str(a, "status"), "running");
    CHECK(str(a, "created_at") != NULL);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(c, "speedup")));
  }
  cJSON_Delete(arr);

  CHECK_INT(store_show_sweep_page(s, f.b, STORE_SHOW_ALL, &o, &err), 0);
  CHECK_STR(str(o, "name"), "llama-fsdp");
  CHECK_STR(str(o, "experiment_text"), "return experiment{}");
  CHECK_NEAR(num(o, "n_trials"), 4, 0);
  cJSON *counts = cJSON_GetObjectItem(o, "counts");
  CHECK_NEAR(num(counts, "ok"), 2, 0);
  CHECK_NEAR(num(counts, "crash"), 1, 0);
  CHECK_NEAR(num(counts, "running"), 1, 0);
  CHECK(cJSON_GetObjectItem(counts, "oom") == NULL);
  cJSON *trials = cJSON_GetObjectItem(o, "trials");
  CHECK_INT(cJSON_GetArraySize(trials), 4);
  cJSON *t2 = cJSON_GetArrayItem(trials, 2);
  CHECK_STR(str(t2, "status"), "crash");
  CHECK_STR(str(t2, "error"), "Segmentation fault");
  CHECK_NEAR(num(t2, "exit_code"), 1, 0);
  CHECK_STR(str(t2, "config"), LHS);
  CHECK_STR(str(t2, "command"), "[\"python3\",\"train.py\"]");
  cJSON *best = cJSON_GetObjectItem(o, "best"), *base = cJSON_GetObjectItem(o, "baseline");
  CHECK_NEAR(num(best, "number"), 1, 0);
  CHECK_NEAR(num(best, "speedup"), 110.0 / 88.0, 1e-12);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(best, "steps")), 5);
  CHECK_NEAR(num(base, "value"), 110, 0);
  CHECK_NEAR(num(o, "speedup"), 110.0 / 88.0, 1e-12);
  cJSON_Delete(o);

  CHECK_INT(store_show_sweep_page(s, f.c, STORE_SHOW_ALL, &o, &err), 0);
  CHECK_STR(str(cJSON_GetObjectItem(o, "baseline"), "status"), "crash");
  CHECK_NEAR(num(cJSON_GetObjectItem(o, "best"), "value"), 70, 0);
  cJSON_Delete(o);
  int64_t empty = new_sweep(s, "empty", "m", "h", "grid");
  CHECK_INT(store_show_sweep_page(s, empty, STORE_SHOW_ALL, &o, &err), 0);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "best")));
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "baseline")));
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "trials")), 0);
  cJSON_Delete(o);
  CHECK_INT(store_show_sweep_page(s, 999, STORE_SHOW_ALL, &o, &err), FT_EINPUT);
  CHECK(o == NULL);
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* show's page: every trial by number up to the limit, else the fastest ok ones by value; 0
 * lists none and counts the trials whose log could not be written. */
TEST(show_page) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  add_trial(s, f.a, 6, "{\"NCCL_PROTO\":\"X\"}", "ok", 95, "flagtune: trial log full");
  cJSON *o = NULL;
  char *err = NULL;
  CHECK_INT(store_show_sweep_page(s, f.a, 7, &o, &err), 0); /* 7 trials: all of them */
  CHECK_STR(str(o, "trials_listed"), "all");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "trials")), 7);
  CHECK_NEAR(num(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "trials"), 6), "number"), 6, 0);
  cJSON_Delete(o);
  CHECK_INT(store_show_sweep_page(s, f.a, 2, &o, &err), 0);
  CHECK_STR(str(o, "trials_listed"), "fastest");
  cJSON *trials = cJSON_GetObjectItem(o, "trials");
  CHECK_INT(cJSON_GetArraySize(trials), 2);
  CHECK_NEAR(num(cJSON_GetArrayItem(trials, 0), "number"), 2, 0); /* 88 ms */
  CHECK_NEAR(num(cJSON_GetArrayItem(trials, 1), "number"), 1, 0); /* 90 ms */
  CHECK_NEAR(num(o, "n_trials"), 7, 0);
  CHECK(cJSON_GetObjectItem(o, "log_failures") == NULL);
  CHECK_NEAR(num(cJSON_GetObjectItem(o, "best"), "number"), 2, 0);
  cJSON_Delete(o);
  CHECK_INT(store_show_sweep_page(s, f.a, 0, &o, &err), 0);
  CHECK_STR(str(o, "trials_listed"), "none");
  CHECK(cJSON_GetObjectItem(o, "log_failures") == NULL); /* export: no scan of the errors */
  cJSON_Delete(o);
  CHECK_INT(store_show_sweep_page(s, f.a, STORE_SHOW_SUMMARY, &o, &err), 0);
  CHECK_STR(str(o, "trials_listed"), "none");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "trials")), 0);
  CHECK_NEAR(num(o, "log_failures"), 1, 0);
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "best"), "steps")), 5);
  cJSON_Delete(o);
  CHECK_INT(store_show_sweep_page(s, f.a, STORE_SHOW_ALL, &o, &err), 0);
  CHECK_STR(str(o, "trials_listed"), "all");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "trials")), 7);
  cJSON_Delete(o);
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* Schema 12: sweep_counts follows every write to trials (insert, a status change, a delete, a
 * sweep's cascade), so the counts read off it are the trials' own. */
#define COUNTS_WRONG                                                                   \
  "SELECT (SELECT count(*) FROM (SELECT sweep_id, status, count(*) AS c FROM trials "  \
  "GROUP BY sweep_id, status) g LEFT JOIN sweep_counts k USING (sweep_id, status) "    \
  "WHERE k.n IS NOT g.c) + (SELECT count(*) FROM sweep_counts k WHERE k.n <> (SELECT " \
  "count(*) FROM trials t WHERE t.sweep_id = k.sweep_id AND t.status = k.status))"

TEST(counts_follow_the_trials) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  CHECK_NEAR(query_num(s, COUNTS_WRONG), 0, 0);
  CHECK_NEAR(query_num(s, "SELECT n FROM sweep_counts WHERE sweep_id = 1 AND status = 'ok'"), 3, 0);
  CHECK_NEAR(query_num(s, "SELECT n_trials FROM sweep_summary WHERE id = 1"), 6, 0);
  CHECK_STORE_END(s);
  sqlite3 *db = NULL;
  CHECK_INT(sqlite3_open(t.path, &db), SQLITE_OK);
  CHECK_INT(sqlite3_exec(db,
                         "PRAGMA foreign_keys = ON;"
                         "UPDATE trials SET status = 'crash', value = NULL "
                         "WHERE sweep_id = 1 AND number = 1;"
                         "UPDATE trials SET label = 'x' WHERE sweep_id = 1 AND number = 2;"
                         "DELETE FROM trials WHERE sweep_id = 2 AND number = 2;"
                         "DELETE FROM sweeps WHERE id = 3;",
                         NULL, NULL, NULL),
            SQLITE_OK);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  s = open_ok(t.path);
  CHECK_NEAR(query_num(s, COUNTS_WRONG), 0, 0);
  CHECK_NEAR(query_num(s, "SELECT ok FROM sweep_summary WHERE id = 1"), 2, 0);
  CHECK_NEAR(query_num(s, "SELECT crash FROM sweep_summary WHERE id = 1"), 1, 0);
  CHECK_NEAR(query_num(s, "SELECT n_trials FROM sweep_summary WHERE id = 2"), 3, 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM sweep_counts WHERE sweep_id = 3"), 0, 0);
  cJSON *o = NULL;
  CHECK_INT(store_show_sweep_page(s, 2, 0, &o, NULL), 0);
  const cJSON *counts = cJSON_GetObjectItem(o, "counts");
  CHECK(cJSON_GetObjectItem(counts, "crash") == NULL); /* its one crash was deleted */
  CHECK_NEAR(num(counts, "ok"), 2, 0);
  cJSON_Delete(o);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* show --all's reads: every trial by number one row at a time (a nonzero return stops the
 * walk and is returned), and the importance sample: every trial up to MAX, else every k-th. */
static int count_rows(cJSON *row, void *ud) {
  int *n = ud;
  if (num(row, "number") != *n) return -1; /* not in number order */
  return ++*n == 5 ? 42 : 0;
}

static int count_all(cJSON *row, void *ud) {
  (void)row;
  ++*(int *)ud;
  return 0;
}

static int keep_rows(cJSON *row, void *ud) {
  cJSON_AddItemToArray(ud, cJSON_Duplicate(row, 1));
  return 0;
}

/* store_each_trial_line's fields against the row store_each_trial gives for the same trial
 * (what listing_trial_row prints of it): numbers equal or both NaN, strings equal or both NULL. */
typedef struct {
  const cJSON *rows;
  int n, bad, stop_at;
} lines_seen;

static int same_num(double a, double b) {
  return (isnan(a) && isnan(b)) || a == b;
}

static int same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int check_line(const store_trial_line *t, void *ud) {
  lines_seen *ls = ud;
  const cJSON *r = cJSON_GetArrayItem(ls->rows, ls->n++);
  ls->bad += !r || !same_num(t->number, num(r, "number")) || !same_num(t->value, num(r, "value")) ||
             !same_num(t->n_steps, num(r, "n_steps")) ||
             !same_num(t->duration_s, num(r, "duration_s")) ||
             !same_num(t->first_step_ms, num(r, "first_step_ms")) ||
             !same_str(t->role, str(r, "role")) || !same_str(t->status, str(r, "status")) ||
             !same_str(t->label, str(r, "label")) || !same_str(t->error, str(r, "error"));
  return ls->n == ls->stop_at ? 7 : 0;
}

TEST(each_trial_and_lines) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  add_trial(s, f.a, 6, "{\"NCCL_PROTO\":\"X\"}", "ok", 95, NULL);
  char *err = NULL;
  int n = 0;
  CHECK_INT(store_each_trial(s, f.a, count_all, &n, &err), 0);
  CHECK_INT(n, 7);
  n = 0;
  CHECK_INT(store_each_trial(s, f.a, count_rows, &n, &err), 42); /* stopped at the 5th */
  CHECK_INT(n, 5);
  cJSON *rows = cJSON_CreateArray();
  CHECK_INT(store_each_trial(s, f.a, keep_rows, rows, &err), 0);
  lines_seen ls = {rows, 0, 0, 0};
  CHECK_INT(store_each_trial_line(s, f.a, check_line, &ls, &err), 0);
  CHECK_INT(ls.n, 7);
  CHECK_INT(ls.bad, 0);
  CHECK(str(cJSON_GetArrayItem(rows, 5), "error") != NULL); /* the fixture's failures compared */
  ls = (lines_seen){rows, 0, 0, 3};
  CHECK_INT(store_each_trial_line(s, f.a, check_line, &ls, &err), 7); /* stopped at the 3rd */
  CHECK_INT(ls.n, 3);
  cJSON_Delete(rows);
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* An ended sweep stores its best-versus-baseline interval once, for those two trials: the
 * bounds stats_speedup_ci gives over their steps past the skip. A sweep without an ok
 * baseline stores none; a running one is not computed. */
TEST(interval_cached_when_the_sweep_ends) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  char *err = NULL;
  cJSON *o = NULL;
  CHECK_INT(store_show_sweep_page(s, f.a, STORE_SHOW_ALL, &o, &err), 0);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "best_ci_lo")));
  cJSON_Delete(o);
  CHECK_INT(store_sweep_set_status(s, f.a, "done", NULL, 0, &err), 0);
  CHECK_INT(store_sweep_set_status(s, f.c, "done", NULL, 0, &err), 0);
  CHECK_INT(store_show_sweep_page(s, f.a, STORE_SHOW_ALL, &o, &err), 0);
  double base[5] = {150, 101, 99, 100, 100}, best[5] = {132, 89, 87, 88, 88};
  double sp, lo, hi;
  stats_speedup_ci(base, 5, best, 5, STATS_DISPLAY_SEED, &sp, &lo, &hi);
  CHECK_NEAR(num(o, "best_ci_trial"), (double)f.a2, 0);
  CHECK_NEAR(num(o, "best_ci_lo"), lo, 0);
  CHECK_NEAR(num(o, "best_ci_hi"), hi, 0);
  CHECK_NEAR(num(o, "best_ci_baseline"), num(cJSON_GetObjectItem(o, "baseline"), "id"), 0);
  cJSON_Delete(o);
  CHECK_INT(store_show_sweep_page(s, f.c, STORE_SHOW_ALL, &o, &err), 0);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "best_ci_lo")));
  cJSON_Delete(o);
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* ---- store_query ---- */

static void refused(store *s, const char *sql, const char *prefix) {
  cJSON *cols = NULL, *rows = NULL;
  char *err = NULL;
  CHECK_INT(query_all(s, sql, &cols, &rows, &err), FT_EINPUT);
  CHECK(cJSON_GetArraySize(rows) == 0); /* no row before the refusal */
  CHECK(err && strncmp(err, prefix, strlen(prefix)) == 0);
  if (err && strncmp(err, prefix, strlen(prefix)) != 0) fprintf(stderr, "%s -> %s\n", sql, err);
  cJSON_Delete(cols);
  cJSON_Delete(rows);
  free(err);
}

TEST(query_refuses_writes) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  const char *ro = "query is read-only: ";
  refused(s, "INSERT INTO sweeps (name, model, hardware) VALUES ('a', 'b', 'c')", ro);
  refused(s, "DELETE FROM trials", ro);
  refused(s, "UPDATE trials SET value = 1", ro);
  refused(s, "WITH x AS (SELECT 1) DELETE FROM steps", ro);
  refused(s, "ATTACH '/tmp/ft_store_attach.db' AS other", ro);
  refused(s, "DETACH main", ro);
  refused(s, "PRAGMA user_version = 5", ro);
  refused(s, "PRAGMA foreign_keys = OFF", ro);
  refused(s, "PRAGMA journal_mode = DELETE", ro);
  refused(s, "PRAGMA wal_checkpoint", ro);
  refused(s, "BEGIN", ro);
  refused(s, "CREATE TABLE x (a)", ro);
  refused(s, "CREATE TEMP VIEW v AS SELECT 1", ro);
  refused(s, "DROP VIEW best", ro);
  /* named by the statement, not by the row changes SQLite asks about on its way */
  refused(s, "DROP TABLE trials", "query is read-only: DROP TABLE is not allowed");
  refused(s, "DROP INDEX IF EXISTS nosuch", ro);
  refused(s, "ALTER TABLE trials ADD COLUMN x", "query is read-only: ALTER TABLE is not allowed");
  refused(s, "CREATE INDEX i ON trials (value)", "query is read-only: CREATE INDEX is not allowed");
  refused(s, "VACUUM INTO '/tmp/ft_store_vacuum.db'", ro);
  refused(s, "REINDEX", ro);
  refused(s, "SELECT load_extension('x')", "query");
  refused(s, "SELECT 1; SELECT 2", "query must be a single statement");
  refused(s, "SELECT 1; DELETE FROM trials", "query must be a single statement");
  refused(s, "", "query is empty");
  refused(s, "SELEC 1", "query: ");
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM trials"), 13, 0);
  CHECK_NEAR(query_num(s, "SELECT 2; -- trailing comment\n /* and another */ ;"), 2, 0);
  /* 24 columns from 0001, 3 from 0005 (manual PGLE), 1 from 0007 (metric.check's losses),
   * 3 from 0008 (the Slurm job, step and node), 2 from 0016 (first_step_ms, step_ms) */
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM pragma_table_info('trials')"), 33, 0);
  CHECK_NEAR(query_num(s, "PRAGMA foreign_keys"), 1, 0);
  /* The refusals left the connection as it was: foreign keys on, no transaction open. */
  store_trial_new orphan = {.sweep_id = 999, .number = 1};
  CHECK_INT(store_trial_begin(s, &orphan, NULL, NULL), FT_ESTORE);
  CHECK_INT(access("/tmp/ft_store_attach.db", F_OK), -1);
  CHECK_INT(access("/tmp/ft_store_vacuum.db", F_OK), -1);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

TEST(query_values) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  cJSON *cols = NULL, *rows = NULL;
  char *err = NULL;
  CHECK_INT(query_all(s, "SELECT 1 AS i, 2.5 AS r, 'x\"y' AS t, NULL AS n, x'00ff' AS b", &cols,
                      &rows, &err),
            0);
  char *c = cJSON_PrintUnformatted(cols), *r = cJSON_PrintUnformatted(rows);
  CHECK_STR(c, "[\"i\",\"r\",\"t\",\"n\",\"b\"]");
  CHECK_STR(r, "[[1,2.5,\"x\\\"y\",null,\"00ff\"]]");
  free(c);
  free(r);
  cJSON_Delete(cols);
  cJSON_Delete(rows);
  CHECK_INT(query_all(s, "SELECT * FROM sweeps", &cols, &rows, &err), 0);
  /* 20 from 0001, 6 from 0003, 2 from 0004, 4 from 0006, 4 from 0009, 1 from 0016, 1 from 0019 */
  CHECK_INT(cJSON_GetArraySize(cols), 38);
  CHECK_INT(cJSON_GetArraySize(rows), 0);
  cJSON_Delete(cols);
  cJSON_Delete(rows);
  free(err);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* Counts the rows handed over; stops the query at STOP of them (0: never). */
typedef struct {
  long n, stop;
} counted;

static int count_row(const cJSON *cols, cJSON *row, void *ud) {
  counted *c = ud;
  (void)cols;
  if (row) c->n++;
  return c->stop > 0 && c->n == c->stop;
}

/* A reader that takes 50 ms a row. */
static int slow_row(const cJSON *cols, cJSON *row, void *ud) {
  (void)cols;
  (void)ud;
  if (row) usleep(50000);
  return 0;
}

/* The limits of issue "Overnight-proof, round two": time, memory, one value's length, and
 * fts3_tokenizer (which returns a pointer into this process). Small limits keep it quick. */
TEST(query_limits) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  set_query_limits(s, 0.2, 4 << 20);
  refused(s,
          "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
          "query: stopped at the time limit of 0.2 s");
  refused(s, "SELECT length(zeroblob(2000000))",
          "query: a value is larger than the limit of 1 MiB");
  /* The memory case (SQLite's own heap: one row of six values just under the length limit)
   * under a time limit no loaded machine reaches first. */
  set_query_limits(s, 60, 4 << 20);
  refused(s,
          "SELECT zeroblob(1000000) || x'01', zeroblob(1000000) || x'02', zeroblob(1000000) || "
          "x'03', zeroblob(1000000) || x'04', zeroblob(1000000) || x'05', zeroblob(1000000) || "
          "x'06'",
          "query: stopped at the memory limit of 4 MiB");
  /* The result is not held: 100,000 rows of 200 bytes (20 MB) pass a 4 MiB limit, and the
   * reader may stop it early without an error. */
  char *err = NULL;
  counted c = {0, 0};
  CHECK_INT(store_query(s,
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT "
                        "100000) SELECT x, printf('%.200c', 'a') FROM c",
                        count_row, &c, &err),
            0);
  CHECK_INT(c.n, 100000);
  c = (counted){0, 10};
  CHECK_INT(store_query(s,
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                        "SELECT x FROM c",
                        count_row, &c, &err),
            0);
  CHECK_INT(c.n, 10);
  CHECK(err == NULL);
  /* The time limit is SQLite's time: a slow reader (a pager) does not use it up. Each row
   * costs SQLite a scan of 5,000 rows, so the deadline is checked every row. */
  set_query_limits(s, 0.2, 4 << 20);
  CHECK_INT(store_query(s,
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT "
                        "5000) SELECT (SELECT sum(x) FROM c WHERE x <= k.x) FROM c AS k LIMIT 8",
                        slow_row, NULL, &err),
            0);
  CHECK(err == NULL);
  if (err) fprintf(stderr, "slow reader: %s\n", err);
  refused(s, "SELECT fts3_tokenizer('simple')",
          "query is read-only: fts3_tokenizer() is not allowed");
  refused(s, "SELECT FTS3_Tokenizer('porter')", "query is read-only: fts3_tokenizer()");
  /* Within the limits all is as before, and the limits are the handle's own settings. */
  CHECK_NEAR(query_num(s, "SELECT length(zeroblob(500000))"), 500000, 0);
  CHECK_NEAR(query_num(s,
                       "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                       "LIMIT 1000) SELECT sum(x) FROM c"),
             500500, 0);
  CHECK_INT(sqlite3_hard_heap_limit64(-1), 0); /* the process-wide limit was put back */
  set_query_limits(s, 0, 0);
  CHECK_NEAR(query_num(s, "SELECT length(zeroblob(2000000))"), 2000000, 0);
  CHECK_INT(store_close(s), 0);
  tmpdb_remove(&t);
}

/* resume opens an existing database for writing and must never create one. */
TEST(must_exist_open) {
  tmpdb t;
  tmpdb_init(&t);
  open_fails(t.path, STORE_MUST_EXIST, FT_EINPUT, "no database at");
  CHECK_INT(access(t.path, F_OK), -1);
  CHECK_INT(store_close(open_ok(t.path)), 0);
  store *s = NULL;
  char *err = NULL;
  CHECK_INT(store_open(t.path, STORE_MUST_EXIST, &s, &err), 0);
  CHECK_INT(new_sweep(s, "x", "m", "h", "grid") > 0, 1);
  CHECK_INT(store_close(s), 0);
  free(err);
  tmpdb_remove(&t);
}

/* ---- contention ---- */

static int write_many(store *s, int64_t sweep, int first, int n) {
  for (int i = first; i < first + n; i++) {
    char *err = NULL;
    int64_t id = 0;
    store_trial_new tn = {.sweep_id = sweep, .number = i};
    double steps[20];
    for (int k = 0; k < 20; k++) steps[k] = 100 + k;
    store_trial_end e = {.status = OUTCOME_OK, .value = 100 + i};
    int rc = store_trial_begin(s, &tn, &id, &err);
    if (!rc) rc = store_trial_finish(s, id, &e, steps, 20, &err);
    if (rc) {
      fprintf(stderr, "write %d: %s\n", i, err);
      free(err);
      return rc;
    }
  }
  return 0;
}

TEST(two_handles_interleaved) {
  tmpdb t;
  tmpdb_init(&t);
  store *a = open_ok(t.path), *b = open_ok(t.path);
  int64_t sa = new_sweep(a, "a", "m", "h", "grid"), sb = new_sweep(b, "b", "m", "h", "grid");
  for (int i = 0; i < 50; i++) {
    CHECK_INT(write_many(a, sa, i, 1), 0);
    CHECK_INT(write_many(b, sb, i, 1), 0);
  }
  /* Each reads what the other wrote. */
  CHECK_NEAR(query_num(a, "SELECT count(*) FROM steps"), 2000, 0);
  CHECK_NEAR(query_num(b, "SELECT sum(n_trials) FROM sweep_summary"), 100, 0);
  CHECK_STORE_END(a);
  CHECK_STORE_END(b);
  tmpdb_remove(&t);
}

TEST(two_processes_contend) {
  tmpdb t;
  tmpdb_init(&t);
  enum { PER = 150 };
  /* No database yet: both processes create and migrate it at once. */
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    store *c = NULL;
    int rc = store_open(t.path, 0, &c, NULL);
    int64_t sw = 0;
    store_sweep_new n = {.name = "child", .model = "m", .hardware = "h"};
    if (!rc) rc = store_sweep_create(c, &n, &sw, NULL);
    if (!rc) rc = write_many(c, sw, 0, PER);
    _exit(rc == 0 && store_close(c) == 0 ? 0 : 1);
  }
  store *s = open_ok(t.path);
  int64_t sw = new_sweep(s, "parent", "m", "h", "grid");
  CHECK_INT(write_many(s, sw, 0, PER), 0);
  int status = 0;
  CHECK_INT(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM trials WHERE status = 'ok'"), 2 * PER, 0);
  CHECK_NEAR(query_num(s, "SELECT count(*) FROM steps"), 2 * PER * 20, 0);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* ---- scale (measured, not asserted) ---- */

/* 20 sweeps of 1,000 trials over 6 (model, hardware) keys, 10 steps each, one transaction. */
static void bulk_fill(const char *path) {
  sqlite3 *db = NULL;
  sqlite3_open(path, &db);
  const char *sql =
      "BEGIN;"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) "
      "INSERT INTO sweeps (name, model, hardware, strategy) "
      "SELECT 'bulk' || i, 'm' || (i % 3), 'h' || (i % 2), 'random' FROM n;"
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999) "
      "INSERT INTO trials (sweep_id, number, role, status, config, value, n_steps) "
      "SELECT s.id, n.i, CASE n.i WHEN 0 THEN 'baseline' ELSE 'search' END, "
      "CASE WHEN n.i % 7 = 3 THEN 'oom' ELSE 'ok' END, json_object('x', n.i % 5), "
      "CASE WHEN n.i % 7 = 3 THEN NULL ELSE 100 + abs(random() % 1000) / 10.0 END, 10 "
      "FROM sweeps s, n WHERE s.name LIKE 'bulk%';"
      "WITH RECURSIVE k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 10) "
      "INSERT INTO steps SELECT t.id, k.j, coalesce(t.value, 100) + k.j FROM trials t, k;"
      "COMMIT;";
  CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
}

TEST(timing_20k_trials) {
  tmpdb t;
  tmpdb_init(&t);
  CHECK_STORE_END(open_ok(t.path));
  bulk_fill(t.path);
  store *s = open_ok(t.path);
  cJSON *o = NULL;
  double t0 = fx_now_ms();
  CHECK_INT(store_best(s, NULL, NULL, &o, NULL), 0);
  double t1 = fx_now_ms();
  CHECK_INT(cJSON_GetArraySize(o), 6);
  cJSON_Delete(o);
  CHECK_INT(store_list_sweeps(s, &o, NULL), 0);
  double t2 = fx_now_ms();
  cJSON_Delete(o);
  CHECK_INT(store_show_sweep_page(s, 1, STORE_SHOW_ALL, &o, NULL), 0);
  double t3 = fx_now_ms();
  cJSON_Delete(o);
  fprintf(stderr, "20,000 trials: best %.2f ms, sweeps %.2f ms, show (1,000 trials) %.2f ms\n",
          t1 - t0, t2 - t1, t3 - t2);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* ---- docs/SCHEMA.md ---- */

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = xmalloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  buf[got] = '\0';
  fclose(f);
  return buf;
}

/* Every ```sql block of the schema document runs through `flagtune query`'s path and
 * finds rows in the fixture. */
TEST(schema_doc_queries_run) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  fixture f;
  populate(s, &f);
  CHECK_INT(store_sweep_set_status(s, f.a, "done", NULL, 0, NULL), 0);
  char *doc = read_file(SOURCE_DIR "/docs/SCHEMA.md");
  CHECK(doc != NULL);
  int blocks = 0;
  for (char *p = doc; p && (p = strstr(p, "```sql\n"));) {
    p += 7;
    char *end = strstr(p, "```");
    if (!end) break;
    *end = '\0';
    cJSON *cols = NULL, *rows = NULL;
    char *err = NULL;
    if (query_all(s, p, &cols, &rows, &err) != 0) {
      fprintf(stderr, "docs/SCHEMA.md query failed: %s\n%s\n", err, p);
      test_failures++;
    } else if (cJSON_GetArraySize(rows) == 0) {
      /* The sample data is built so that every example has something to show. */
      fprintf(stderr, "docs/SCHEMA.md query returned no rows:\n%s\n", p);
      test_failures++;
    }
    cJSON_Delete(cols);
    cJSON_Delete(rows);
    free(err);
    blocks++;
    p = end + 3;
  }
  CHECK(blocks >= 10);
  free(doc);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* ---- the sweep claim and the file's identity (schema 6) ---- */

static void sql_exec(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

/* flock conflicts between two open descriptions even in one process: two handles stand for
 * two orchestrators. The lock lasts until store_close; --force never overrides it. */
TEST(claim_is_exclusive_until_close) {
  tmpdb t;
  tmpdb_init(&t);
  store *a = open_ok(t.path), *b = open_ok(t.path);
  int64_t id = new_sweep(a, "n", "m", "h", "random");
  char *err = NULL;
  CHECK_INT(store_sweep_claim(b, id, 0, &err), FT_EINPUT);
  char *want = xasprintf("held by another flagtune (pid %d on ", (int)getpid());
  CHECK(err && strstr(err, want));
  free(want);
  CHECK_INT(store_sweep_claim(b, id, 1, &err), FT_EINPUT);
  CHECK_STORE_END(a);
  CHECK_INT(store_sweep_claim(b, id, 0, &err), 0);
  CHECK_NEAR(query_num(b,
                       "SELECT count(*) FROM sweeps WHERE status = 'running' AND pid_start > 0 "
                       "AND claimed_at IS NOT NULL"),
             1, 0);
  char *lock = xasprintf("%s.sweep-%lld.lock", t.path, (long long)id);
  struct stat st;
  CHECK_INT(stat(lock, &st), 0);
  free(lock);
  free(err);
  CHECK_STORE_END(b);
  tmpdb_remove(&t);
}

/* With the lock free, the row still refuses a holder this host cannot check: another host,
 * or a live process whose start time matches; a reused pid (another start time) does not. */
TEST(claim_reads_the_row_when_the_lock_is_free) {
  tmpdb t;
  tmpdb_init(&t);
  store *a = open_ok(t.path);
  int64_t id = new_sweep(a, "n", "m", "h", "random");
  CHECK_STORE_END(a);
  store *b = open_ok(t.path);
  char *err = NULL, *sql;
  sql_exec(t.path, "UPDATE sweeps SET host = 'elsewhere', pid = 4242");
  CHECK_INT(store_sweep_claim(b, id, 0, &err), FT_EINPUT);
  CHECK(err && strstr(err, "running on host elsewhere (pid 4242") && strstr(err, "--force"));
  CHECK_INT(store_sweep_claim(b, id, 1, &err), 0);
  CHECK_STORE_END(b);
  /* The parent process is alive; with its real start time it is a live holder... */
  sql =
      xasprintf("UPDATE sweeps SET status = 'running', pid = %d, pid_start = NULL", (int)getppid());
  sql_exec(t.path, sql);
  free(sql);
  b = open_ok(t.path);
  CHECK_INT(store_sweep_claim(b, id, 0, &err), FT_EINPUT);
  CHECK(err && strstr(err, "holds no lock"));
  /* ...with another start time it is a reused pid. */
  sql_exec(t.path, "UPDATE sweeps SET pid_start = 1");
  CHECK_INT(store_sweep_claim(b, id, 0, &err), 0);
  free(err);
  CHECK_STORE_END(b);
  tmpdb_remove(&t);
}

/* A running row's orchestrator is "gone" only when it ran here and its process (that pid with
 * that start time) is not alive; another host's, or one whose start is unknown but whose pid
 * lives, is not known to be gone. */
TEST(holder_gone_only_for_a_dead_process_here) {
  char here[256];
  CHECK_INT(gethostname(here, sizeof here - 1), 0);
  here[sizeof here - 1] = '\0';
  procstat me;
  CHECK_INT(procstat_read((int)getpid(), &me), 0);
  CHECK_INT(store_holder_gone(here, (int)getpid(), me.starttime), 0);
  CHECK_INT(store_holder_gone(here, (int)getpid(), 0), 0);
  CHECK_INT(store_holder_gone(here, (int)getpid(), me.starttime + 1), 1); /* a reused pid */
  pid_t child = fork();
  if (child == 0) _exit(0);
  CHECK(child > 0);
  CHECK_INT((int)waitpid(child, NULL, 0), (int)child);
  CHECK_INT(store_holder_gone(here, (int)child, 0), 1);
  CHECK_INT(store_holder_gone("another-host", (int)child, 0), 0);
  CHECK_INT(store_holder_gone(NULL, (int)child, 0), 0);
  CHECK_INT(store_holder_gone(here, 0, 0), 0);
}

/* An orchestrator killed with -9 is a zombie until its parent reaps it: it holds nothing, so
 * `resume` right after the kill claims its sweep (the pid and start time are still there). */
TEST(claim_takes_a_zombie_holders_sweep) {
  char here[256];
  CHECK_INT(gethostname(here, sizeof here - 1), 0);
  here[sizeof here - 1] = '\0';
  pid_t child = fork();
  if (child == 0) _exit(0);
  CHECK(child > 0);
  procstat st = {0};
  for (int i = 0; i < 200 && (procstat_read(child, &st) != 0 || st.state != 'Z'); i++)
    usleep(5000);
  CHECK(st.state == 'Z');
  CHECK_INT(store_holder_gone(here, (int)child, st.starttime), 1);
  tmpdb t;
  tmpdb_init(&t);
  store *a = open_ok(t.path);
  int64_t id = new_sweep(a, "n", "m", "h", "random");
  CHECK_STORE_END(a);
  char *sql = xasprintf("UPDATE sweeps SET status = 'running', host = '%s', pid = %d, pid_start = %lld",
                        here, (int)child, st.starttime);
  sql_exec(t.path, sql);
  free(sql);
  store *b = open_ok(t.path);
  char *err = NULL;
  CHECK_INT(store_sweep_claim(b, id, 0, &err), 0);
  free(err);
  CHECK_STORE_END(b);
  tmpdb_remove(&t);
  CHECK_INT((int)waitpid(child, NULL, 0), (int)child);
}

/* The database file alone, as a lost -wal would leave it: copied without its -wal and -shm
 * and opened read-only; the number SQL gives there. */
static double file_alone_num(const tmpdb *t, const char *sql) {
  char *copy = xasprintf("%s/alone.db", t->dir);
  char *cmd = xasprintf("rm -f '%s'*; cp '%s' '%s'", copy, t->path, copy);
  double v = NAN;
  if (system(cmd) == 0) {
    store *c = NULL;
    if (store_open(copy, STORE_READONLY, &c, NULL) == 0) v = query_num(c, sql);
    store_close(c);
  }
  free(cmd);
  free(copy);
  return v;
}

/* A finished trial is in the database file itself when store_trial_finish returns (a full
 * checkpoint after its synced commit); a started one may stay in the -wal. */
TEST(finished_trial_is_in_the_file_alone) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  int64_t id = new_sweep(s, "n", "m", "h", "random");
  add_trial(s, id, 0, "{}", "ok", 100, NULL);
  add_trial(s, id, 1, "{\"x\":1}", "ok", 90, NULL);
  CHECK_NEAR(file_alone_num(&t, "SELECT count(*) FROM trials WHERE status = 'ok'"), 2, 0);
  CHECK_NEAR(file_alone_num(&t, "SELECT count(*) FROM sweeps WHERE status = 'running'"), 1, 0);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

/* The -wal deleted (or the -shm replaced) under an open connection: the next write says so,
 * what the connection's -wal held is saved into the file, and later writes (the sweep's
 * last word) go on, each checkpointed: the file alone holds all of it. */
static void side_file_changed(const char *suffix, int replace, const char *said) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  int64_t id = new_sweep(s, "n", "m", "h", "random");
  add_trial(s, id, 0, "{}", "ok", 100, NULL);
  begin_trial(s, id, 1, "{\"x\":1}"); /* a synchronous=NORMAL commit: in the -wal only */
  char *side = xasprintf("%s%s", t.path, suffix);
  char *cmd = replace ? xasprintf("cp '%s' '%s.c' && mv '%s.c' '%s'", side, side, side, side)
                      : xasprintf("rm -f '%s'", side);
  CHECK_INT(system(cmd), 0);
  char *err = NULL;
  CHECK_INT(store_sweep_set_status(s, id, "done", NULL, 0, &err), FT_ESTORE);
  CHECK(err && strstr(err, said));
  CHECK(err && strstr(err, "nothing was lost"));
  free(err);
  CHECK_NEAR(file_alone_num(&t, "SELECT count(*) FROM trials"), 2, 0);
  int n = 0;
  CHECK_INT(store_trials_mark(s, id, OUTCOME_RUNNING, OUTCOME_INTERRUPTED, &n, NULL), 0);
  CHECK_INT(n, 1);
  CHECK_INT(store_sweep_set_status(s, id, "interrupted", "x", 0, NULL), 0);
  CHECK_NEAR(file_alone_num(&t, "SELECT count(*) FROM trials WHERE status = 'interrupted'"), 1, 0);
  CHECK_NEAR(file_alone_num(&t, "SELECT count(*) FROM sweeps WHERE status = 'interrupted'"), 1, 0);
  CHECK(store_fault_resumable(s));
  free(cmd);
  free(side);
  CHECK_STORE_END(s);
  tmpdb_remove(&t);
}

TEST(wal_deleted_saves_what_it_held) {
  side_file_changed("-wal", 0, "its -wal file was deleted while in use");
}

TEST(wal_replaced_saves_what_it_held) {
  side_file_changed("-wal", 1, "its -wal file was replaced by another file");
}

TEST(shm_deleted_saves_what_it_held) {
  side_file_changed("-shm", 0, "its -shm file was deleted while in use");
}

TEST(writes_refused_when_the_file_is_deleted_or_replaced) {
  tmpdb t;
  tmpdb_init(&t);
  store *s = open_ok(t.path);
  int64_t id = new_sweep(s, "n", "m", "h", "random");
  char *err = NULL;
  CHECK_INT(store_identity_check(s, &err), 0);
  char *moved = xasprintf("%s.moved", t.path);
  CHECK_INT(rename(t.path, moved), 0);
  CHECK_INT(store_sweep_set_status(s, id, "done", NULL, 0, &err), FT_ESTORE);
  CHECK(err && strstr(err, "was deleted while in use"));
  FILE *f = fopen(t.path, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  CHECK_INT(store_sweep_set_status(s, id, "done", NULL, 0, &err), FT_ESTORE);
  CHECK(err && strstr(err, "was replaced by another file"));
  CHECK_INT(store_identity_check(s, NULL), FT_ESTORE);
  free(err);
  free(moved);
  CHECK_STORE_END(s);
  struct stat st;
  CHECK_INT(stat(t.path, &st), 0);
  CHECK_INT((int)st.st_size, 0); /* the file that took its place was not written */
  tmpdb_remove(&t);
}
