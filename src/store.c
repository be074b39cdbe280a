/* The results database. Owns every SQL statement flagtune runs (with the store/ SQL files): the
 * connection settings, migrations, the statement cache, write transactions that survive
 * other writers, the read-only guard for user queries and the JSON shape of listings.
 * Must not call up into other modules, print or exit: every failure goes back through
 * char **err, naming the database path. */
#include "store.h"

#include <ctype.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "hardware.h"
#include "embed.h"

/* busy_timeout covers ordinary contention; the retries cover a writer that holds the lock
 * longer than that (a checkpoint on a slow disk), so a night's results are not dropped. */
enum { BUSY_TIMEOUT_MS = 10000, BUSY_RETRIES = 4 };

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/* The statement table reads best with one SQL clause per line. */
/* The base of a hardware key (hardware.h: the part before HARDWARE_KEY_SEP, the whole key of a
 * sweep stored before keys had details), as SQL over the expression X. `best --hardware BASE`
 * finds every key with that base; warm start reads earlier sweeps on the same base. */
#define KEY_BASE(x) \
  "substr(" x ", 1, instr(" x " || '" HARDWARE_KEY_SEP "', '" HARDWARE_KEY_SEP "') - 1)"

/* clang-format off */
/* Columns of one trial as listings show it (from the trial_results view). */
#define TRIAL_COLS                                                                          \
  "id, number, role, status, value, speedup, steps_budget, n_steps, duration_s, exit_code, " \
  "signal, label, config, xla_flags, tpu_args, env, command, error, log_path, started_at, "   \
  "finished_at, slot, rerun_of, profile_path, profile_status, profile_duration_s "

typedef enum {
  ST_BEGIN_WRITE, ST_BEGIN_READ, ST_COMMIT, ST_ROLLBACK,
  ST_SWEEP_CREATE, ST_SWEEP_STATUS, ST_SWEEP_EXISTS, ST_SWEEP_BY_NAME, ST_SWEEP_LOAD,
  ST_TRIAL_BEGIN, ST_TRIAL_PID, ST_TRIAL_FINISH, ST_STEPS_DELETE, ST_STEP_INSERT,
  ST_TRIALS_MARK, ST_TRIALS_LOAD, ST_STEPS_LOAD, ST_TRIAL_STEPS,
  ST_LIST_SWEEPS, ST_SHOW_SWEEP, ST_SHOW_COUNTS, ST_SHOW_TRIALS, ST_SHOW_BEST, ST_SHOW_BASELINE,
  ST_BEST, ST_SWEEP_WINNER, ST_WARM_TRIALS, ST_TRIAL_PROFILE, ST_TRIAL_LOSSES,
  ST_TRIAL_SLURM, ST_TRIAL_SLURM_GET, ST_SWEEP_SLURM_JOB,
  ST_COUNT
} stmt_id;

static const char *const stmt_sql[ST_COUNT] = {
  [ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
  [ST_BEGIN_READ] = "BEGIN",
  [ST_COMMIT] = "COMMIT",
  [ST_ROLLBACK] = "ROLLBACK",
  [ST_SWEEP_CREATE] =
    "INSERT INTO sweeps (name, model, hardware, experiment_path, experiment_text, "
    "experiment_hash, strategy, seed, budget_trials, budget_hours, budget_steps, parallel, host, "
    "options_json, pid, software, jaxlib) VALUES (:name, :model, :hardware, :experiment_path, "
    ":experiment_text, :experiment_hash, :strategy, :seed, :budget_trials, :budget_hours, "
    ":budget_steps, :parallel, :host, :options_json, :pid, :software, :jaxlib)",
  [ST_SWEEP_STATUS] =
    "UPDATE sweeps SET status = :status, error = :error, "
    "pid = CASE WHEN :status = 'running' THEN :pid END, "
    "finished_at = CASE WHEN :status = 'running' THEN NULL ELSE " NOW " END WHERE id = :id",
  [ST_SWEEP_EXISTS] = "SELECT 1 FROM sweeps WHERE id = :id",
  [ST_SWEEP_BY_NAME] = "SELECT id FROM sweeps WHERE name = :name ORDER BY id",
  [ST_SWEEP_LOAD] =
    "SELECT id, name, model, hardware, experiment_path, experiment_text, strategy, status, "
    "options_json, seed, budget_trials, budget_steps, parallel, budget_hours, pid "
    "FROM sweeps WHERE id = :id",
  [ST_TRIAL_BEGIN] =
    "INSERT INTO trials (sweep_id, number, role, config, label, xla_flags, tpu_args, env, "
    "command, steps_budget, slot, log_path, rerun_of) VALUES (:sweep_id, :number, "
    ":role, "
    "coalesce(:config, '{}'), :label, :xla_flags, :tpu_args, coalesce(:env, '{}'), :command, "
    ":steps_budget, :slot, :log_path, :rerun_of)",
  [ST_TRIAL_PID] = "UPDATE trials SET pid = :pid WHERE id = :id",
  [ST_TRIAL_FINISH] =
    "UPDATE trials SET status = :status, value = :value, n_steps = :n_steps, "
    "exit_code = :exit_code, signal = :signal, duration_s = :duration_s, error = :error, "
    "losses = :losses, finished_at = " NOW " WHERE id = :id",
  [ST_STEPS_DELETE] = "DELETE FROM steps WHERE trial_id = :trial_id",
  [ST_STEP_INSERT] = "INSERT INTO steps (trial_id, step, ms) VALUES (:trial_id, :step, :ms)",
  [ST_TRIALS_MARK] =
    "UPDATE trials SET status = :to, value = CASE WHEN :to = 'ok' THEN value END, "
    "finished_at = coalesce(finished_at, " NOW ") WHERE sweep_id = :sweep_id AND status = :from",
  [ST_TRIALS_LOAD] =
    "SELECT id, number, role, status, config, value, steps_budget, pid FROM trials "
    "WHERE sweep_id = :sweep_id ORDER BY number",
  [ST_STEPS_LOAD] =
    "SELECT s.trial_id, s.ms FROM trials t JOIN steps s ON s.trial_id = t.id "
    "WHERE t.sweep_id = :sweep_id ORDER BY t.number, s.step",
  [ST_TRIAL_STEPS] = "SELECT ms FROM steps WHERE trial_id = :trial_id ORDER BY step",
  [ST_LIST_SWEEPS] =
    "SELECT id, name, model, hardware, status, strategy, created_at AS started_at, finished_at, "
    "trials, ok, best_value AS best_ms, baseline_value AS baseline_ms, speedup, best_trial, "
    "running, oom, invalid, timeout, crash, no_metric, pruned, interrupted, lost, wrong "
    "FROM sweep_summary ORDER BY id",
  [ST_SHOW_SWEEP] =
    "SELECT s.*, m.trials AS n_trials, m.best_trial, m.best_value AS best_ms, "
    "m.baseline_value AS baseline_ms, m.speedup FROM sweeps s "
    "JOIN sweep_summary m ON m.id = s.id WHERE s.id = :id AND m.id = :id",
  [ST_SHOW_COUNTS] =
    "SELECT status, count(*) FROM trials WHERE sweep_id = :id GROUP BY status ORDER BY status",
  [ST_SHOW_TRIALS] =
    "SELECT " TRIAL_COLS "FROM trial_results WHERE sweep_id = :id ORDER BY number",
  [ST_SHOW_BEST] =
    "SELECT " TRIAL_COLS "FROM trial_results WHERE sweep_id = :id "
    "AND id = (SELECT trial_id FROM sweep_best WHERE sweep_id = :id)",
  [ST_SHOW_BASELINE] =
    "SELECT " TRIAL_COLS "FROM trial_results WHERE sweep_id = :id AND number = 0",
  [ST_BEST] =
    "SELECT model, hardware, sweep_id, sweep_name, strategy, trial, trial_id, role, value, "
    "baseline_value AS baseline_ms, speedup, n_steps, label, xla_flags, tpu_args, env, config, "
    "finished_at, baseline_id, speedup_lo, speedup_hi, pooled_trials, "
    "(SELECT software FROM sweeps x WHERE x.id = best.sweep_id) AS software, "
    "(SELECT jaxlib FROM sweeps x WHERE x.id = best.sweep_id) AS jaxlib FROM best "
    "WHERE (:model IS NULL OR model = :model) AND (:hardware IS NULL OR hardware = :hardware "
    "OR (instr(:hardware, '" HARDWARE_KEY_SEP "') = 0 AND " KEY_BASE("hardware") " = :hardware)) "
    "ORDER BY model, hardware",
  [ST_SWEEP_WINNER] =
    "UPDATE sweeps SET winner_trial_id = :trial_id, winner_ms = :winner_ms, "
    "winner_baseline_ms = :baseline_ms, winner_trials = :n, speedup_lo = :lo, "
    "speedup_hi = :hi WHERE id = :id",
  [ST_TRIAL_LOSSES] = "SELECT losses FROM trials WHERE id = :id",
  [ST_TRIAL_SLURM] =
    "UPDATE trials SET slurm_job = :job, slurm_step = :step, node = :node "
    "WHERE sweep_id = :sweep AND number = :number",
  [ST_TRIAL_SLURM_GET] =
    "SELECT slurm_job, slurm_step FROM trials WHERE sweep_id = :sweep AND number = :number "
    "AND slurm_job IS NOT NULL",
  [ST_SWEEP_SLURM_JOB] =
    "SELECT slurm_job FROM trials WHERE sweep_id = :sweep AND slurm_job IS NOT NULL "
    "ORDER BY id DESC LIMIT 1",
  [ST_TRIAL_PROFILE] =
    "UPDATE trials SET profile_path = :path, profile_status = :status, "
    "profile_duration_s = :duration_s WHERE id = :id",
  [ST_WARM_TRIALS] =
    "SELECT t.id, t.number, t.role, t.status, t.config, t.value, t.steps_budget, t.pid "
    "FROM sweeps s JOIN trials t ON t.sweep_id = s.id "
    "WHERE s.model = :model AND " KEY_BASE("s.hardware") " = " KEY_BASE(":hardware") " "
    "AND s.id <> :sweep_id "
    "AND t.role <> 'baseline' AND t.config <> '{}' "
    "AND t.status NOT IN ('running', 'lost', 'interrupted') ORDER BY s.id, t.number",
};
/* clang-format on */

struct store {
  sqlite3 *db;
  char *path;
  int readonly;
  sqlite3_stmt *cache[ST_COUNT]; /* prepared on first use, finalized by store_close */
};

/* ---- errors ---- */

static int db_fail(store *s, char **err, const char *what) {
  return diag_set(err, FT_ESTORE, "database %s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

/* Why PATH cannot be opened, in words a user can act on; NULL when nothing obvious. */
static char *path_problem(const char *path, int readonly) {
  struct stat st;
  const char *slash = strrchr(path, '/');
  char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
  char *msg = NULL;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    msg = xasprintf("%s is a directory, not a database", path);
  else if (stat(path, &st) != 0 && readonly)
    msg = xasprintf("no database at %s (run a sweep first, or name one with --db)", path);
  else if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    msg = xasprintf("cannot create database %s: directory %s does not exist", path, dir);
  else if (!readonly && access(dir, W_OK) != 0)
    msg = xasprintf(
        "database %s is in a read-only directory (%s): SQLite needs to create "
        "its -wal and -shm files there",
        path, dir);
  else if (!readonly && access(path, F_OK) == 0 && access(path, W_OK) != 0)
    msg = xasprintf("database %s is read-only (check its permissions)", path);
  free(dir);
  return msg;
}

/* Turns an open/configure failure into the clearest message we can give. */
static int open_fail(store *s, int rc, char **err) {
  char *msg = path_problem(s->path, s->readonly);
  if (msg) {
    diag_set(err, FT_EINPUT, "%s", msg);
    free(msg);
    return FT_EINPUT;
  }
  if ((rc & 0xff) == SQLITE_NOTADB)
    return diag_set(err, FT_EINPUT, "%s is not a flagtune database (SQLite: %s)", s->path,
                    sqlite3_errstr(rc));
  return diag_set(err, FT_ESTORE, "cannot open database %s: %s", s->path,
                  s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
}

/* ---- statements and binds ---- */

static int stmt_get(store *s, stmt_id id, sqlite3_stmt **out, char **err) {
  if (!s->cache[id]) {
    int rc =
        sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s->cache[id], NULL);
    if (rc != SQLITE_OK) return db_fail(s, err, "preparing a statement");
  }
  *out = s->cache[id];
  return 0;
}

static void stmt_done(sqlite3_stmt *st) {
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
}

/* Binders return an SQLite code; callers OR them together, since any non-zero means a
 * bind failed and sqlite3_errmsg says which. A misspelt name is SQLITE_RANGE. */
static int bind_index(sqlite3_stmt *st, const char *name) {
  return sqlite3_bind_parameter_index(st, name);
}

static int bind_text(sqlite3_stmt *st, const char *name, const char *v) {
  int i = bind_index(st, name);
  if (!i) return SQLITE_RANGE;
  return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int bind_int(sqlite3_stmt *st, const char *name, int64_t v) {
  int i = bind_index(st, name);
  return i ? sqlite3_bind_int64(st, i, v) : SQLITE_RANGE;
}

/* NaN and infinities are "no value": they bind as NULL. */
static int bind_real(sqlite3_stmt *st, const char *name, double v) {
  int i = bind_index(st, name);
  if (!i) return SQLITE_RANGE;
  return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

/* Budgets and optional counts: zero or less means "none" and is stored as NULL. */
static int bind_pos(sqlite3_stmt *st, const char *name, int64_t v) {
  int i = bind_index(st, name);
  if (!i) return SQLITE_RANGE;
  return v > 0 ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

static int bind_fail(store *s, sqlite3_stmt *st, char **err) {
  int code = diag_set(err, FT_ESTORE, "database %s: cannot bind parameters of '%.60s': %s", s->path,
                      sqlite3_sql(st), sqlite3_errmsg(s->db));
  stmt_done(st);
  return code;
}

/* Steps a statement that returns no rows, retrying on SQLITE_BUSY after busy_timeout
 * gave up; resets it either way. */
static int step_done(store *s, sqlite3_stmt *st, const char *what, char **err) {
  int rc;
  for (int i = 0;; i++) {
    rc = sqlite3_step(st);
    if (rc != SQLITE_BUSY || i >= BUSY_RETRIES) break;
    sqlite3_reset(st);
  }
  int code = (rc == SQLITE_DONE || rc == SQLITE_ROW) ? 0 : db_fail(s, err, what);
  stmt_done(st);
  return code;
}

static int run_cached(store *s, stmt_id id, const char *what, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, id, &st, err);
  return rc ? rc : step_done(s, st, what, err);
}

static void tx_rollback(store *s) {
  if (!sqlite3_get_autocommit(s->db)) run_cached(s, ST_ROLLBACK, "rolling back", NULL);
}

/* ---- open and migrate ---- */

static int exec_sql(store *s, const char *sql, const char *what, char **err) {
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? 0 : db_fail(s, err, what);
}

static int user_version(store *s, int *v, char **err) {
  int rc = SQLITE_BUSY;
  /* Busy while another process creates the database (see exec_patiently). */
  for (int waited = 0; waited <= BUSY_TIMEOUT_MS; waited += 20) {
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
    sqlite3_sleep(20);
  }
  return rc == SQLITE_ROW ? 0 : open_fail(s, rc, err);
}

/* The schema number of an embedded "store/NNNN_name.sql", or 0 when PATH is not one. */
static int migration_number(const char *path) {
  if (strncmp(path, "store/", 6) != 0) return 0;
  const char *p = path + 6;
  int n = 0;
  while (isdigit((unsigned char)*p)) n = n * 10 + (*p++ - '0');
  size_t len = strlen(path);
  if (p == path + 6 || *p != '_' || len < 4 || strcmp(path + len - 4, ".sql") != 0) return 0;
  return n;
}

static const embed_file *migration_find(int number, int *latest) {
  const embed_file *found = NULL;
  *latest = 0;
  for (const embed_file *f = embed_files; f->path; f++) {
    int n = migration_number(f->path);
    if (n > *latest) *latest = n;
    if (n == number && number > 0) found = f;
  }
  return found;
}

static int exec_patiently(store *s, const char *sql);

/* FT_ESTORE when a row references a missing parent (PRAGMA foreign_key_check finds one). */
static int foreign_keys_hold(store *s, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL);
  if (rc != SQLITE_OK) return db_fail(s, err, "checking foreign keys");
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW)
    return diag_set(err, FT_ESTORE, "database %s: a migration left a row without its parent",
                    s->path);
  return rc == SQLITE_DONE ? 0 : db_fail(s, err, "checking foreign keys");
}

/* Applies every migration from the database's version up to LATEST, with the user_version
 * bump, in one transaction: a process killed mid-way leaves the old schema, never a half
 * one that readers refuse. Another process may have migrated while we waited for the lock:
 * then only what is still missing is applied. */
static int migrate_all(store *s, int latest, char **err) {
  /* A migration may rebuild a table (SQLite changes a CHECK no other way): with foreign keys
   * on, dropping the old table would cascade into its children. They are off while the
   * migrations run (the pragma is a no-op inside a transaction, so before BEGIN) and checked
   * before the commit. */
  exec_patiently(s, "PRAGMA foreign_keys = OFF");
  int rc = run_cached(s, ST_BEGIN_WRITE, "starting a migration", err), have = 0;
  if (!rc) rc = user_version(s, &have, err);
  for (int n = have + 1; n <= latest && !rc; n++) {
    const embed_file *f = migration_find(n, &latest);
    if (f) rc = exec_sql(s, f->data, f->path, err);
  }
  if (!rc && have < latest) {
    char *bump = xasprintf("PRAGMA user_version = %d", latest);
    rc = exec_sql(s, bump, "setting the schema version", err);
    free(bump);
  }
  if (!rc) rc = foreign_keys_hold(s, err);
  if (!rc) rc = run_cached(s, ST_COMMIT, "committing a migration", err);
  if (rc) tx_rollback(s);
  exec_patiently(s, "PRAGMA foreign_keys = ON");
  return rc;
}

/* An SQLite file with tables but no schema version belongs to something else: adding our
 * tables to it would be a surprise, so it is refused. */
static int foreign_check(store *s, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL);
  int n = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
  sqlite3_finalize(st);
  if (n < 0) return open_fail(s, sqlite3_errcode(s->db), err);
  if (n > 0)
    return diag_set(err, FT_EINPUT, "%s is an SQLite database but not a flagtune one", s->path);
  return 0;
}

int store_schema_latest(void) {
  int latest;
  migration_find(0, &latest);
  return latest;
}

static int migrate(store *s, char **err) {
  int have, latest, rc = user_version(s, &have, err);
  if (rc) return rc;
  migration_find(0, &latest);
  if (have > latest)
    return diag_set(err, FT_EINPUT,
                    "database %s was written by a newer flagtune (schema %d, this one knows %d)",
                    s->path, have, latest);
  if (have == latest) return 0;
  if (have == 0 && (rc = foreign_check(s, err))) return rc;
  /* A read-only handle cannot migrate; say what would. */
  if (s->readonly && have == 0)
    return diag_set(err, FT_EINPUT, "database %s is empty (no sweep has run with it)", s->path);
  if (s->readonly)
    return diag_set(err, FT_EINPUT,
                    "database %s has schema %d, this flagtune needs %d: a `flagtune run` or "
                    "`flagtune resume` with it upgrades it",
                    s->path, have, latest);
  return migrate_all(s, latest, err);
}

/* Runs SQL, retrying for up to BUSY_TIMEOUT_MS while the database is busy. Switching a new
 * database to WAL needs an exclusive lock, and SQLite does not always call the busy handler
 * for it (deadlock avoidance), so two processes creating one database at once would
 * otherwise see "database is locked". */
static int exec_patiently(store *s, const char *sql) {
  int rc = SQLITE_BUSY;
  for (int waited = 0; waited <= BUSY_TIMEOUT_MS; waited += 20) {
    rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
    sqlite3_sleep(20);
  }
  return rc;
}

static int configure(store *s, char **err) {
  sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
  int rc = exec_patiently(s, "PRAGMA foreign_keys = ON");
  if (rc == SQLITE_OK && !s->readonly)
    rc = exec_patiently(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  if (rc != SQLITE_OK) return open_fail(s, rc, err);
  if (!s->readonly && sqlite3_db_readonly(s->db, "main") == 1)
    return diag_set(err, FT_EINPUT, "database %s is read-only (check its permissions)", s->path);
  return 0;
}

int store_open(const char *path, int flags, store **out, char **err) {
  store *s = xcalloc(1, sizeof *s);
  s->path = xstrdup(path);
  s->readonly = (flags & STORE_READONLY) != 0;
  *out = NULL;
  int oflags = s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
  rc = rc == SQLITE_OK ? configure(s, err) : open_fail(s, rc, err);
  if (!rc) rc = migrate(s, err);
  if (rc) {
    store_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

int store_close(store *s) {
  if (!s) return 0;
  for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(s->cache[i]);
  int rc = sqlite3_close(s->db);
  free(s->path);
  free(s);
  return rc == SQLITE_OK ? 0 : FT_ESTORE;
}

/* ---- sweeps ---- */

int store_sweep_create(store *s, const store_sweep_new *n, int64_t *id, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_SWEEP_CREATE, &st, err);
  if (rc) return rc;
  rc = bind_text(st, ":name", n->name) | bind_text(st, ":model", n->model) |
       bind_text(st, ":hardware", n->hardware) |
       bind_text(st, ":experiment_path", n->experiment_path) |
       bind_text(st, ":experiment_text", n->experiment_text) |
       bind_text(st, ":experiment_hash", n->experiment_hash) |
       bind_text(st, ":strategy", n->strategy) | bind_int(st, ":seed", n->seed) |
       bind_pos(st, ":budget_trials", n->budget_trials) |
       bind_real(st, ":budget_hours", n->budget_hours > 0 ? n->budget_hours : NAN) |
       bind_pos(st, ":budget_steps", n->budget_steps) |
       bind_int(st, ":parallel", n->parallel > 0 ? n->parallel : 1) |
       bind_text(st, ":host", n->host) | bind_text(st, ":options_json", n->options_json) |
       bind_int(st, ":pid", getpid()) | bind_text(st, ":software", n->software) |
       bind_text(st, ":jaxlib", n->jaxlib);
  if (rc) return bind_fail(s, st, err);
  rc = step_done(s, st, "creating a sweep", err);
  if (!rc && id) *id = sqlite3_last_insert_rowid(s->db);
  return rc;
}

int store_sweep_set_status(store *s, int64_t id, const char *status, const char *error, int pid,
                           char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_SWEEP_STATUS, &st, err);
  if (rc) return rc;
  rc = bind_text(st, ":status", status) | bind_text(st, ":error", error) |
       bind_int(st, ":pid", pid) | bind_int(st, ":id", id);
  if (rc) return bind_fail(s, st, err);
  rc = step_done(s, st, "setting a sweep's status", err);
  if (!rc && sqlite3_changes(s->db) == 0)
    return diag_set(err, FT_EINPUT, "no sweep %lld", (long long)id);
  return rc;
}

static char *col_strdup(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? xstrdup((const char *)t) : NULL;
}

static int sweep_exists(store *s, int64_t id, int *found, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_SWEEP_EXISTS, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":id", id)) return bind_fail(s, st, err);
  rc = sqlite3_step(st);
  *found = rc == SQLITE_ROW;
  rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? 0 : db_fail(s, err, "looking up a sweep");
  stmt_done(st);
  return rc;
}

/* Ids of sweeps named NAME, into IDS (up to CAP); *n gets the full count. */
static int sweeps_named(store *s, const char *name, int64_t *ids, int cap, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_SWEEP_BY_NAME, &st, err);
  if (rc) return rc;
  if (bind_text(st, ":name", name)) return bind_fail(s, st, err);
  *n = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n < cap) ids[*n] = sqlite3_column_int64(st, 0);
    (*n)++;
  }
  rc = rc == SQLITE_DONE ? 0 : db_fail(s, err, "looking up a sweep");
  stmt_done(st);
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
  if (n == 0) return diag_set(err, FT_EINPUT, "no sweep named '%s' (see `flagtune sweeps`)", ref);
  return 0;
}

static void sweep_fill(sqlite3_stmt *st, store_sweep *out) {
  out->id = sqlite3_column_int64(st, 0);
  out->name = col_strdup(st, 1);
  out->model = col_strdup(st, 2);
  out->hardware = col_strdup(st, 3);
  out->experiment_path = col_strdup(st, 4);
  out->experiment_text = col_strdup(st, 5);
  out->strategy = col_strdup(st, 6);
  out->status = col_strdup(st, 7);
  out->options_json = col_strdup(st, 8);
  out->seed = sqlite3_column_int64(st, 9);
  out->budget_trials = sqlite3_column_int(st, 10);
  out->budget_steps = sqlite3_column_int(st, 11);
  out->parallel = sqlite3_column_int(st, 12);
  out->budget_hours = sqlite3_column_double(st, 13);
  out->pid = sqlite3_column_int(st, 14);
}

int store_sweep_get(store *s, const char *ref, store_sweep *out, char **err) {
  sqlite3_stmt *st = NULL;
  int64_t id = 0;
  memset(out, 0, sizeof *out);
  int rc = resolve_ref(s, ref, &id, err);
  if (!rc) rc = stmt_get(s, ST_SWEEP_LOAD, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":id", id)) return bind_fail(s, st, err);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) sweep_fill(st, out);
  rc = rc == SQLITE_ROW    ? 0
       : rc == SQLITE_DONE ? diag_set(err, FT_EINPUT, "no sweep '%s'", ref)
                           : db_fail(s, err, "loading a sweep");
  stmt_done(st);
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
  memset(sw, 0, sizeof *sw);
}

/* ---- trials ---- */

int store_trial_begin(store *s, const store_trial_new *t, int64_t *trial_id, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIAL_BEGIN, &st, err);
  if (rc) return rc;
  rc = bind_int(st, ":sweep_id", t->sweep_id) | bind_int(st, ":number", t->number) |
       bind_text(st, ":role", record_role_name(t->number == 0 ? ROLE_BASELINE : t->role)) |
       bind_text(st, ":config", t->config_json) |
       bind_text(st, ":label", t->label) | bind_text(st, ":xla_flags", t->xla_flags) |
       bind_text(st, ":tpu_args", t->tpu_args) | bind_text(st, ":env", t->env_json) |
       bind_text(st, ":command", t->command_json) | bind_pos(st, ":steps_budget", t->steps_budget) |
       bind_int(st, ":slot", t->slot) | bind_text(st, ":log_path", t->log_path) |
       bind_pos(st, ":rerun_of", t->rerun_of);
  if (rc) return bind_fail(s, st, err);
  rc = step_done(s, st, "starting a trial", err);
  if (!rc && trial_id) *trial_id = sqlite3_last_insert_rowid(s->db);
  return rc;
}

int store_trial_set_pid(store *s, int64_t trial_id, int pid, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIAL_PID, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":pid", pid) | bind_int(st, ":id", trial_id)) return bind_fail(s, st, err);
  return step_done(s, st, "recording a trial's pid", err);
}

int store_trial_set_slurm(store *s, int64_t sweep_id, int number, int64_t job, int step,
                          const char *node, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIAL_SLURM, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":job", job) | bind_int(st, ":step", step) | bind_text(st, ":node", node) |
      bind_int(st, ":sweep", sweep_id) | bind_int(st, ":number", number))
    return bind_fail(s, st, err);
  return step_done(s, st, "recording a trial's Slurm step", err);
}

int store_trial_slurm(store *s, int64_t sweep_id, int number, int64_t *job, int *step,
                      char **err) {
  sqlite3_stmt *st = NULL;
  *job = 0;
  *step = -1;
  int rc = stmt_get(s, ST_TRIAL_SLURM_GET, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":sweep", sweep_id) | bind_int(st, ":number", number))
    return bind_fail(s, st, err);
  int r = sqlite3_step(st);
  if (r == SQLITE_ROW) {
    *job = sqlite3_column_int64(st, 0);
    *step = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
  }
  rc = r == SQLITE_ROW || r == SQLITE_DONE ? 0 : db_fail(s, err, "loading a trial's Slurm step");
  stmt_done(st);
  return rc;
}

int store_sweep_slurm_job(store *s, int64_t sweep_id, int64_t *job, char **err) {
  sqlite3_stmt *st = NULL;
  *job = 0;
  int rc = stmt_get(s, ST_SWEEP_SLURM_JOB, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":sweep", sweep_id)) return bind_fail(s, st, err);
  int r = sqlite3_step(st);
  if (r == SQLITE_ROW) *job = sqlite3_column_int64(st, 0);
  rc = r == SQLITE_ROW || r == SQLITE_DONE ? 0 : db_fail(s, err, "loading a sweep's Slurm job");
  stmt_done(st);
  return rc;
}

/* metric.check's losses as a JSON array ("[2.31,2.29]"), NULL for none. Each with 17
 * significant digits, so what is read back compares equal. */
static char *losses_json(const double *v, int n) {
  if (!v || n <= 0) return NULL;
  size_t cap = (size_t)n * 26 + 3, len = 0;
  char *out = xmalloc(cap);
  out[len++] = '[';
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%.17g", i ? "," : "",
                            isfinite(v[i]) ? v[i] : 0.0);
  out[len++] = ']';
  out[len] = '\0';
  return out;
}

int store_trial_losses(store *s, int64_t trial_id, double **out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  *n = 0;
  int rc = stmt_get(s, ST_TRIAL_LOSSES, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":id", trial_id)) return bind_fail(s, st, err);
  int step = sqlite3_step(st);
  cJSON *arr = step == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT
                   ? cJSON_Parse((const char *)sqlite3_column_text(st, 0))
                   : NULL;
  rc = step == SQLITE_ROW || step == SQLITE_DONE ? 0 : db_fail(s, err, "loading losses");
  stmt_done(st);
  int len = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
  if (len > 0) *out = xmalloc(sizeof(double) * (size_t)len);
  const cJSON *item;
  cJSON_ArrayForEach(item, arr) if (cJSON_IsNumber(item))(*out)[(*n)++] = item->valuedouble;
  cJSON_Delete(arr);
  return rc;
}

/* The trial row itself. The value is kept only for ok trials: that is the schema's rule,
 * so a pruned trial's partial value never competes with finished ones. */
static int finish_row(store *s, int64_t trial_id, const store_trial_end *e, int n_steps,
                      char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIAL_FINISH, &st, err);
  if (rc) return rc;
  int ok = e->status == OUTCOME_OK;
  rc = bind_text(st, ":status", outcome_name(e->status)) |
       bind_real(st, ":value", ok ? e->value : NAN) |
       bind_int(st, ":n_steps", n_steps) | bind_text(st, ":error", e->error) |
       bind_real(st, ":duration_s", e->duration_s) | bind_int(st, ":id", trial_id);
  char *losses = losses_json(e->losses, e->n_losses);
  rc |= bind_text(st, ":losses", losses);
  free(losses);
  rc |= e->has_exit ? bind_int(st, ":exit_code", e->exit_code) : SQLITE_OK;
  rc |= e->term_signal ? bind_int(st, ":signal", e->term_signal) : SQLITE_OK;
  if (rc) return bind_fail(s, st, err);
  rc = step_done(s, st, "finishing a trial", err);
  if (!rc && sqlite3_changes(s->db) != 1)
    return diag_set(err, FT_ESTORE, "database %s: no trial %lld", s->path, (long long)trial_id);
  return rc;
}

/* Replaces the trial's steps; step numbers start at 1. A non-finite time (never produced
 * by the parser) is skipped rather than losing the whole outcome. */
static int steps_replace(store *s, int64_t trial_id, const double *ms, int n, char **err) {
  sqlite3_stmt *del, *ins;
  int rc = stmt_get(s, ST_STEPS_DELETE, &del, err);
  if (!rc) rc = stmt_get(s, ST_STEP_INSERT, &ins, err);
  if (rc) return rc;
  if (bind_int(del, ":trial_id", trial_id)) return bind_fail(s, del, err);
  rc = step_done(s, del, "replacing step times", err);
  for (int i = 0; i < n && !rc; i++) {
    if (!isfinite(ms[i])) continue;
    if (bind_int(ins, ":trial_id", trial_id) | bind_int(ins, ":step", i + 1) |
        bind_real(ins, ":ms", ms[i]))
      return bind_fail(s, ins, err);
    rc = step_done(s, ins, "storing step times", err);
  }
  return rc;
}

int store_trial_finish(store *s, int64_t trial_id, const store_trial_end *e, const double *steps_ms,
                       int n_steps, char **err) {
  int rc = run_cached(s, ST_BEGIN_WRITE, "starting a transaction", err);
  if (rc) return rc;
  rc = finish_row(s, trial_id, e, n_steps, err);
  if (!rc) rc = steps_replace(s, trial_id, steps_ms, n_steps, err);
  if (!rc) rc = run_cached(s, ST_COMMIT, "committing a trial", err);
  if (rc) tx_rollback(s);
  return rc;
}

int store_trials_mark(store *s, int64_t sweep_id, outcome from, outcome to, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIALS_MARK, &st, err);
  if (rc) return rc;
  if (bind_text(st, ":from", outcome_name(from)) | bind_text(st, ":to", outcome_name(to)) |
      bind_int(st, ":sweep_id", sweep_id))
    return bind_fail(s, st, err);
  rc = step_done(s, st, "marking trials", err);
  if (n) *n = rc ? 0 : sqlite3_changes(s->db);
  return rc;
}

static double col_real(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* A role or status column as its enum; an unknown name (a newer flagtune's) reads as
 * FALLBACK. */
static int col_enum(sqlite3_stmt *st, int i, int (*from_name)(const char *), int fallback) {
  int v = from_name((const char *)sqlite3_column_text(st, i));
  return v < 0 ? fallback : v;
}

/* Reads the rows of ST (bound and ready) into trial records. */
static int trial_rows_of(store *s, sqlite3_stmt *st, trial_record **out, int *n, char **err) {
  int rc, cap = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) *out = xrealloc(*out, sizeof **out * (size_t)(cap = cap ? cap * 2 : 16));
    trial_record *t = memset(&(*out)[(*n)++], 0, sizeof **out);
    t->id = sqlite3_column_int64(st, 0);
    t->number = sqlite3_column_int(st, 1);
    t->role = (trial_role)col_enum(st, 2, record_role_from_name, ROLE_SEARCH);
    t->status = (outcome)col_enum(st, 3, outcome_from_name, OUTCOME_CRASH);
    t->config_json = col_strdup(st, 4);
    t->value = col_real(st, 5);
    t->steps_budget = sqlite3_column_int(st, 6);
    t->pid = sqlite3_column_int(st, 7);
  }
  rc = rc == SQLITE_DONE ? 0 : db_fail(s, err, "loading trials");
  stmt_done(st);
  return rc;
}

static int trials_rows(store *s, int64_t sweep_id, trial_record **out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIALS_LOAD, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":sweep_id", sweep_id)) return bind_fail(s, st, err);
  return trial_rows_of(s, st, out, n, err);
}

int store_warm_trials(store *s, const char *model, const char *hardware, int64_t sweep_id,
                      trial_record **out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  *n = 0;
  int rc = stmt_get(s, ST_WARM_TRIALS, &st, err);
  if (rc) return rc;
  if (bind_text(st, ":model", model) | bind_text(st, ":hardware", hardware) |
      bind_int(st, ":sweep_id", sweep_id))
    return bind_fail(s, st, err);
  rc = trial_rows_of(s, st, out, n, err);
  for (int i = 0; i < *n; i++) (*out)[i].number = -1;
  if (rc) {
    record_free(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

int store_trial_set_profile(store *s, int64_t trial_id, const char *path, outcome status,
                            double duration_s, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIAL_PROFILE, &st, err);
  if (rc) return rc;
  rc = bind_text(st, ":path", path) | bind_text(st, ":status", outcome_name(status)) |
       bind_real(st, ":duration_s", duration_s) | bind_int(st, ":id", trial_id);
  if (rc) return bind_fail(s, st, err);
  return step_done(s, st, "recording a PGLE profile run", err);
}

int store_sweep_set_winner(store *s, int64_t sweep_id, const store_winner *w, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_SWEEP_WINNER, &st, err);
  if (rc) return rc;
  rc = bind_int(st, ":trial_id", w->trial_id) | bind_real(st, ":winner_ms", w->value) |
       bind_real(st, ":baseline_ms", w->baseline) | bind_int(st, ":n", w->n_trials) |
       bind_real(st, ":lo", w->lo) | bind_real(st, ":hi", w->hi) | bind_int(st, ":id", sweep_id);
  if (rc) return bind_fail(s, st, err);
  return step_done(s, st, "recording a sweep's winner", err);
}

/* Steps arrive ordered like the trials (by number, then step), so one walk assigns them. */
static int trials_steps(store *s, int64_t sweep_id, trial_record *t, int n, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_STEPS_LOAD, &st, err), k = 0, cap = 0;
  if (rc) return rc;
  if (bind_int(st, ":sweep_id", sweep_id)) return bind_fail(s, st, err);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    while (k < n && t[k].id != id) k++, cap = 0;
    if (k == n) continue;
    double *steps = (double *)t[k].steps;
    if (t[k].n_steps == cap)
      t[k].steps = steps = xrealloc(steps, sizeof(double) * (size_t)(cap = cap ? cap * 2 : 64));
    steps[t[k].n_steps++] = sqlite3_column_double(st, 1);
  }
  rc = rc == SQLITE_DONE ? 0 : db_fail(s, err, "loading step times");
  stmt_done(st);
  return rc;
}

int store_trials_load(store *s, int64_t sweep_id, trial_record **out, int *n, char **err) {
  *out = NULL;
  *n = 0;
  /* One read transaction, so a trial finishing meanwhile cannot split rows from steps. */
  int rc = run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc) rc = trials_rows(s, sweep_id, out, n, err);
  if (!rc) rc = trials_steps(s, sweep_id, *out, *n, err);
  if (!rc) rc = run_cached(s, ST_COMMIT, "ending a read", err);
  if (rc) {
    tx_rollback(s);
    record_free(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

/* ---- JSON listings ---- */

static cJSON *blob_hex(const unsigned char *p, int n) {
  char *hex = xmalloc((size_t)n * 2 + 1);
  for (int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", p[i]);
  hex[2 * n] = '\0';
  cJSON *j = cJSON_CreateString(hex);
  free(hex);
  return j;
}

static cJSON *col_json(sqlite3_stmt *st, int i) {
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
    cJSON_AddItemToObject(o, sqlite3_column_name(st, i), col_json(st, i));
  return o;
}

/* Steps a bound statement to the end: rows as objects appended to ARR. Resets it. */
static int rows_append(store *s, sqlite3_stmt *st, cJSON *arr, char **err) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) cJSON_AddItemToArray(arr, row_object(st));
  rc = rc == SQLITE_DONE ? 0 : db_fail(s, err, "reading");
  stmt_done(st);
  return rc;
}

/* Runs cached statement ID with :id bound (when it has one); rows into a new array. */
static int rows_by_id(store *s, stmt_id id, int64_t key, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  int rc = stmt_get(s, id, &st, err);
  if (rc) return rc;
  if (bind_index(st, ":id") && bind_int(st, ":id", key)) return bind_fail(s, st, err);
  *out = cJSON_CreateArray();
  rc = rows_append(s, st, *out, err);
  if (rc) cJSON_Delete(*out), *out = NULL;
  return rc;
}

static int steps_array(store *s, int64_t trial_id, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_TRIAL_STEPS, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":trial_id", trial_id)) return bind_fail(s, st, err);
  *out = cJSON_CreateArray();
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    cJSON_AddItemToArray(*out, cJSON_CreateNumber(sqlite3_column_double(st, 0)));
  rc = rc == SQLITE_DONE ? 0 : db_fail(s, err, "reading step times");
  stmt_done(st);
  return rc;
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

/* The single trial that statement ID finds for the sweep, with its steps, or null. */
static int trial_with_steps(store *s, stmt_id id, int64_t sweep_id, cJSON **out, char **err) {
  cJSON *rows = NULL;
  int rc = rows_by_id(s, id, sweep_id, &rows, err);
  cJSON *t = rc ? NULL : cJSON_DetachItemFromArray(rows, 0);
  cJSON_Delete(rows);
  if (t) rc = add_steps(s, t, "id", "steps", err);
  *out = t ? t : cJSON_CreateNull();
  return rc;
}

static int show_counts(store *s, int64_t sweep_id, cJSON *o, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = stmt_get(s, ST_SHOW_COUNTS, &st, err);
  if (rc) return rc;
  if (bind_int(st, ":id", sweep_id)) return bind_fail(s, st, err);
  cJSON *counts = cJSON_AddObjectToObject(o, "counts");
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    cJSON_AddNumberToObject(counts, (const char *)sqlite3_column_text(st, 0),
                            sqlite3_column_int(st, 1));
  rc = rc == SQLITE_DONE ? 0 : db_fail(s, err, "counting trials");
  stmt_done(st);
  return rc;
}

static int show_parts(store *s, int64_t sweep_id, cJSON *o, char **err) {
  cJSON *part = NULL;
  int rc = show_counts(s, sweep_id, o, err);
  if (!rc) rc = rows_by_id(s, ST_SHOW_TRIALS, sweep_id, &part, err);
  if (!rc) cJSON_AddItemToObject(o, "trials", part), part = NULL;
  if (!rc) rc = trial_with_steps(s, ST_SHOW_BEST, sweep_id, &part, err);
  if (part) cJSON_AddItemToObject(o, "best", part), part = NULL;
  if (!rc) rc = trial_with_steps(s, ST_SHOW_BASELINE, sweep_id, &part, err);
  if (part) cJSON_AddItemToObject(o, "baseline", part);
  return rc;
}

int store_show_sweep(store *s, int64_t sweep_id, cJSON **out, char **err) {
  cJSON *rows = NULL;
  *out = NULL;
  int rc = run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc) rc = rows_by_id(s, ST_SHOW_SWEEP, sweep_id, &rows, err);
  cJSON *o = rc ? NULL : cJSON_DetachItemFromArray(rows, 0);
  cJSON_Delete(rows);
  if (!rc && !o) rc = diag_set(err, FT_EINPUT, "no sweep '%lld'", (long long)sweep_id);
  if (!rc) rc = show_parts(s, sweep_id, o, err);
  if (!rc) rc = run_cached(s, ST_COMMIT, "ending a read", err);
  if (rc) {
    tx_rollback(s);
    cJSON_Delete(o);
    return rc;
  }
  *out = o;
  return 0;
}

int store_best(store *s, const char *model, const char *hardware, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  int rc = stmt_get(s, ST_BEST, &st, err);
  if (rc) return rc;
  if (bind_text(st, ":model", model) | bind_text(st, ":hardware", hardware))
    return bind_fail(s, st, err);
  cJSON *arr = cJSON_CreateArray(), *o;
  rc = rows_append(s, st, arr, err);
  cJSON_ArrayForEach(o, arr) {
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

/* ---- read-only queries ---- */

typedef struct {
  char what[96]; /* what the authorizer refused, for the message */
} query_guard;

/* True when NAME is a word of LIST (" a b c "). */
static int in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
    if (p[-1] == ' ' && p[n] == ' ') return 1;
  return 0;
}

/* Pragmas that only read: the first list may take an argument (a table name, a count),
 * the second only without one (with one, they set). */
static int pragma_readonly(const char *name, const char *arg) {
  static const char with_arg[] =
      " table_info table_xinfo index_list index_info index_xinfo foreign_key_list"
      " foreign_key_check integrity_check quick_check table_list ";
  static const char bare[] =
      " user_version schema_version application_id page_count page_size freelist_count"
      " encoding compile_options database_list function_list pragma_list collation_list"
      " module_list data_version foreign_keys synchronous auto_vacuum ";
  char lower[64];
  size_t i = 0;
  for (; i < sizeof lower - 1 && name[i]; i++) lower[i] = (char)tolower((unsigned char)name[i]);
  lower[i] = '\0';
  return in_list(with_arg, lower) || (!arg && in_list(bare, lower));
}

static const char *action_name(int action) {
  static const struct {
    int action;
    const char *name;
  } names[] = {{SQLITE_INSERT, "INSERT"},         {SQLITE_UPDATE, "UPDATE"},
               {SQLITE_DELETE, "DELETE"},         {SQLITE_ATTACH, "ATTACH"},
               {SQLITE_DETACH, "DETACH"},         {SQLITE_TRANSACTION, "a transaction"},
               {SQLITE_SAVEPOINT, "a savepoint"}, {SQLITE_ANALYZE, "ANALYZE"},
               {SQLITE_REINDEX, "REINDEX"},       {SQLITE_ALTER_TABLE, "ALTER TABLE"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].action == action) return names[i].name;
  return action >= SQLITE_CREATE_INDEX && action <= SQLITE_DROP_VIEW ? "CREATE or DROP"
                                                                     : "this statement";
}

/* sqlite3_stmt_readonly() lets ATTACH, BEGIN and connection pragmas through (they do not
 * write the file), so the authorizer refuses everything that is not reading. */
static int query_authorizer(void *ctx, int action, const char *a, const char *b, const char *db,
                            const char *trigger) {
  query_guard *g = ctx;
  (void)db;
  (void)trigger;
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_UPDATE: /* a table-valued pragma registers itself in the in-memory schema */
      if (strcmp(a, "sqlite_master") == 0) return SQLITE_OK;
      break;
    case SQLITE_PRAGMA:
      if (pragma_readonly(a, b)) return SQLITE_OK;
      snprintf(g->what, sizeof g->what, "PRAGMA %.40s%s%.30s", a, b ? " = " : "", b ? b : "");
      return SQLITE_DENY;
    default:
      break;
  }
  if (!g->what[0]) snprintf(g->what, sizeof g->what, "%s", action_name(action));
  return SQLITE_DENY;
}

/* True when TAIL holds only blanks, semicolons and comments. */
static int tail_empty(const char *p) {
  for (;;) {
    while (isspace((unsigned char)*p) || *p == ';') p++;
    if (p[0] == '-' && p[1] == '-') {
      p += strcspn(p, "\n");
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      if (!end) return 1;
      p = end + 2;
    } else {
      return *p == '\0';
    }
  }
}

static int query_prepare(store *s, const char *sql, sqlite3_stmt **st, char **err) {
  query_guard g = {{0}};
  const char *tail = NULL;
  sqlite3_set_authorizer(s->db, query_authorizer, &g);
  int rc = sqlite3_prepare_v2(s->db, sql, -1, st, &tail);
  sqlite3_set_authorizer(s->db, NULL, NULL);
  if (rc != SQLITE_OK && g.what[0])
    return diag_set(err, FT_EINPUT, "query is read-only: %s is not allowed", g.what);
  if (rc != SQLITE_OK) return diag_set(err, FT_EINPUT, "query: %s", sqlite3_errmsg(s->db));
  if (!*st) return diag_set(err, FT_EINPUT, "query is empty");
  if (!sqlite3_stmt_readonly(*st))
    rc = diag_set(err, FT_EINPUT, "query is read-only: this statement would change the database");
  else if (!tail_empty(tail))
    rc = diag_set(err, FT_EINPUT, "query must be a single statement (found more: '%.40s')",
                  tail + strspn(tail, " \t\r\n;"));
  if (rc) sqlite3_finalize(*st), *st = NULL;
  return rc;
}

int store_query(store *s, const char *sql, cJSON **columns, cJSON **rows, char **err) {
  sqlite3_stmt *st = NULL;
  *columns = *rows = NULL;
  int rc = query_prepare(s, sql, &st, err);
  if (rc) return rc;
  int n = sqlite3_column_count(st);
  cJSON *cols = cJSON_CreateArray(), *out = cJSON_CreateArray();
  for (int i = 0; i < n; i++)
    cJSON_AddItemToArray(cols, cJSON_CreateString(sqlite3_column_name(st, i)));
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    cJSON *row = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(row, col_json(st, i));
    cJSON_AddItemToArray(out, row);
  }
  rc = rc == SQLITE_DONE ? 0 : diag_set(err, FT_EINPUT, "query: %s", sqlite3_errmsg(s->db));
  sqlite3_finalize(st);
  if (rc) {
    cJSON_Delete(cols);
    cJSON_Delete(out);
    return rc;
  }
  *columns = cols;
  *rows = out;
  return 0;
}

/* ---- imported jaxlib flag lists (issue 4). Rare, so the statements are prepared per call
 * rather than cached; each import is one write transaction. ---- */

static int flag_insert(store *s, sqlite3_stmt *st, const char *jaxlib, const store_flag_row *r,
                       char **err) {
  if (bind_text(st, ":jaxlib", jaxlib) | bind_text(st, ":name", r->name) |
      bind_text(st, ":type", r->type ? r->type : "") |
      bind_text(st, ":default_value", r->default_value) |
      bind_text(st, ":description", r->description))
    return bind_fail(s, st, err);
  return step_done(s, st, "storing an imported flag", err);
}

int store_flags_import(store *s, const char *jaxlib, const store_flag_row *rows, int n,
                       char **err) {
  sqlite3_stmt *del = NULL, *ins = NULL;
  int rc = run_cached(s, ST_BEGIN_WRITE, "starting a flag import", err);
  if (rc) return rc;
  if (sqlite3_prepare_v2(s->db, "DELETE FROM jaxlib_flags WHERE jaxlib = :jaxlib", -1, &del,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db,
                         "INSERT OR REPLACE INTO jaxlib_flags (jaxlib, name, type, default_value, "
                         "description) VALUES (:jaxlib, :name, :type, :default_value, "
                         ":description)",
                         -1, &ins, NULL) != SQLITE_OK) {
    rc = db_fail(s, err, "preparing a flag import");
    goto cleanup;
  }
  rc = bind_text(del, ":jaxlib", jaxlib) ? bind_fail(s, del, err)
                                         : step_done(s, del, "replacing a flag list", err);
  for (int i = 0; rc == 0 && i < n; i++) rc = flag_insert(s, ins, jaxlib, &rows[i], err);
  if (rc == 0) rc = run_cached(s, ST_COMMIT, "committing a flag import", err);

cleanup:
  sqlite3_finalize(del);
  sqlite3_finalize(ins);
  if (rc) tx_rollback(s);
  return rc;
}

/* Runs SQL with :jaxlib bound to JAXLIB (when it has the parameter); rows into a new array. */
static int flag_rows(store *s, const char *sql, const char *jaxlib, cJSON **out, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
    return db_fail(s, err, "reading imported flags");
  if (bind_index(st, ":jaxlib") && bind_text(st, ":jaxlib", jaxlib)) {
    int rc = bind_fail(s, st, err);
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

int store_flags_versions(store *s, cJSON **out, char **err) {
  return flag_rows(s,
                   "SELECT jaxlib, count(*) AS flags, max(imported_at) AS imported_at "
                   "FROM jaxlib_flags GROUP BY jaxlib ORDER BY jaxlib",
                   NULL, out, err);
}

int store_flags_names(store *s, cJSON **out, char **err) {
  return flag_rows(s, "SELECT DISTINCT name FROM jaxlib_flags ORDER BY name", NULL, out, err);
}
