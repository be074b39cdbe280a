/* The results database. Owns every SQL statement flagtune runs (with the store/ SQL files):
 * the statement table, the connection settings, migrations, the statement cache, write
 * transactions that survive other writers. The rest of the store is in store_sweep.c (the
 * sweeps' rows), store_trial.c, store_claim.c, store_list.c, store_query.c and store_report.c
 * (store/store_impl.h is what they share). Must not call up into other modules, print or exit:
 * every failure goes back through char **err, naming the database path. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "embed.h"
#include "hardware.h"
#include "store_impl.h"

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

/* The statement table reads best with one SQL clause per line. */
/* The base of a hardware key (hardware.h: the part before HARDWARE_KEY_SEP, the whole key of a
 * sweep stored before keys had details), as SQL over the expression X. `best --hardware BASE`
 * finds every key with that base; warm start reads earlier sweeps on the same base. */
#define KEY_BASE(x) \
  "substr(" x ", 1, instr(" x " || '" HARDWARE_KEY_SEP "', '" HARDWARE_KEY_SEP "') - 1)"

/* clang-format off */
/* The index of UNIQUE (sweep_id, number) on trials (SQLite names it): a sweep's trials in
 * number order, which is their rowid order, so a statement that reads every trial of a sweep
 * reads the table's pages in order through it (through trials_sweep_status_value, in value
 * order, the same count took 1.1 s instead of 0.2 s over a 60,000-trial sweep). Statements
 * that could take either name it (INDEXED BY): their plan does not follow statistics. */
#define BY_NUMBER "sqlite_autoindex_trials_1"

/* Columns of one trial as listings show it (from the trial_results view). */
#define TRIAL_COLS                                                                          \
  "id, number, role, status, value, speedup, steps_budget, n_steps, duration_s, exit_code, " \
  "signal, label, config, xla_flags, tpu_args, env, command, error, log_path, started_at, "   \
  "finished_at, slot, rerun_of, profile_path, profile_status, profile_duration_s, "  \
  "first_step_ms, step_ms, compile_ms "


static const char *const stmt_sql[ST_COUNT] = {
  [ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
  [ST_BEGIN_READ] = "BEGIN",
  [ST_COMMIT] = "COMMIT",
  [ST_ROLLBACK] = "ROLLBACK",
  [ST_SWEEP_CREATE] =
    "INSERT INTO sweeps (name, model, hardware, experiment_path, experiment_text, "
    "experiment_hash, strategy, seed, budget_trials, budget_hours, budget_steps, parallel, host, "
    "options_json, pid, software, jaxlib, space_digest) VALUES (:name, :model, :hardware, "
    ":experiment_path, :experiment_text, :experiment_hash, :strategy, :seed, :budget_trials, "
    ":budget_hours, :budget_steps, :parallel, :host, :options_json, :pid, :software, :jaxlib, "
    ":space_digest)",
  [ST_SWEEP_STATUS] =
    "UPDATE sweeps SET status = :status, error = :error, "
    "pid = CASE WHEN :status = 'running' THEN :pid END, "
    "finished_at = CASE WHEN :status = 'running' THEN NULL ELSE " NOW " END WHERE id = :id",
  [ST_SWEEP_EXISTS] = "SELECT 1 FROM sweeps WHERE id = :id",
  [ST_SWEEP_BY_NAME] = "SELECT id FROM sweeps WHERE name = :name ORDER BY id",
  [ST_SWEEP_NAMES] = "SELECT DISTINCT name FROM sweeps ORDER BY name",
  [ST_SWEEP_LOAD] =
    "SELECT id, name, model, hardware, experiment_path, experiment_text, strategy, status, "
    "options_json, seed, budget_trials, budget_steps, parallel, budget_hours, pid, host, "
    "pid_start, claimed_at, workdir, command_json, error, space_digest FROM sweeps WHERE id = :id",
  [ST_TRIAL_BEGIN] =
    "INSERT INTO trials (sweep_id, number, role, config, label, xla_flags, tpu_args, env, "
    "command, steps_budget, slot, log_path, rerun_of, pid) VALUES (:sweep_id, :number, "
    ":role, "
    "coalesce(:config, '{}'), :label, :xla_flags, :tpu_args, coalesce(:env, '{}'), :command, "
    ":steps_budget, :slot, :log_path, :rerun_of, :pid)",
  [ST_TRIAL_PID] = "UPDATE trials SET pid = :pid WHERE id = :id",
  [ST_TRIAL_FINISH] =
    "UPDATE trials SET status = :status, value = :value, n_steps = :n_steps, "
    "exit_code = :exit_code, signal = :signal, duration_s = :duration_s, error = :error, "
    "losses = :losses, first_step_ms = :first_step_ms, step_ms = :step_ms, "
    "finished_at = " NOW " WHERE id = :id",
  [ST_STEPS_DELETE] = "DELETE FROM steps WHERE trial_id = :trial_id",
  [ST_STEP_INSERT] = "INSERT INTO steps (trial_id, step, ms) VALUES (:trial_id, :step, :ms)",
  [ST_TRIAL_NSTEPS] = "UPDATE trials SET n_steps = :n_steps WHERE id = :id AND status = 'running'",
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
  /* Partial loads (minimize, resume's orphans): one role's rows, the rows recorded running,
   * the next trial number; off the (sweep_id, number) key. */
  [ST_TRIALS_ROLE] =
    "SELECT id, number, role, status, config, value, steps_budget, pid FROM trials "
    "WHERE sweep_id = :sweep_id AND role = :role ORDER BY number",
  [ST_TRIALS_RUNNING] =
    "SELECT id, number, role, status, config, value, steps_budget, pid FROM trials "
    "WHERE sweep_id = :sweep_id AND status = 'running' ORDER BY number",
  [ST_TRIALS_NEXT] = "SELECT coalesce(max(number) + 1, 0) FROM trials WHERE sweep_id = :sweep_id",
  /* Resume's walk over a sweep (store_trials_each): the rows with their step count (off the
   * steps key, no step read), for a strategy that keeps no step times; and the
   * configurations of finished trials that an unfinished one also holds (its re-run is
   * not owed), in one pass over the sweep's rows. */
  [ST_TRIALS_COUNTED] =
    "SELECT t.id, t.number, t.role, t.status, t.config, t.value, t.steps_budget, t.pid, "
    "(SELECT count(*) FROM steps s WHERE s.trial_id = t.id) FROM trials t "
    "WHERE t.sweep_id = :sweep_id ORDER BY t.number",
  [ST_RERUN_DONE] =
    "SELECT DISTINCT config FROM trials INDEXED BY " BY_NUMBER " WHERE sweep_id = :sweep_id "
    "AND status NOT IN ('running', 'interrupted', 'lost') AND config IN (SELECT config FROM "
    "trials WHERE sweep_id = :sweep_id AND status IN ('running', 'interrupted', 'lost'))",
  /* The end of a sweep (store_trials_load_confirm): its ok search trials run with the full
   * step budget, fastest first, off the (sweep_id, status, value) index (a role unknown to
   * this flagtune reads as search, as col_enum reads it); the configurations whose every
   * trial the confirmation reads besides: the confirmed ones (a seek of the confirm trials'
   * index), and those with two or more ok full-step trials of a positive value, whatever
   * their role (the noise's): of the configurations two or more ok trials ran (report_repeats,
   * schema 13: every one, and after a trial deleted by hand some more), those with two such
   * trials, a seek each of the index of such trials alone (no table row; schema 18), so a
   * configuration run once is never read; then the kept configurations' trials, by a
   * seek each of the ok trials' (sweep_id, config) index and of the others' (not ok; schema
   * 20), so no row of another configuration is read. */
  [ST_CONFIRM_FASTEST] =
    "SELECT config FROM trials WHERE sweep_id = :sweep_id AND status = 'ok' "
    "AND value IS NOT NULL AND role NOT IN ('baseline', 'confirm', 'minimize') "
    "AND (:full <= 0 OR coalesce(steps_budget, 0) <= 0 OR steps_budget >= :full) "
    "ORDER BY value, number",
  [ST_CONFIRM_CONFIRMED] =
    "SELECT DISTINCT config FROM trials INDEXED BY trials_confirm_config "
    "WHERE sweep_id = :sweep_id AND role = 'confirm'",
  [ST_CONFIRM_REPEATED] =
    "SELECT r.config FROM report_repeats r WHERE r.sweep_id = :sweep_id AND (SELECT count(*) "
    "FROM (SELECT 1 FROM trials t INDEXED BY trials_measured_config "
    "WHERE t.sweep_id = :sweep_id AND t.config = r.config AND t.status = 'ok' AND t.value > 0 "
    "AND (:full <= 0 OR coalesce(t.steps_budget, 0) <= 0 OR t.steps_budget >= :full) "
    "LIMIT 2)) > 1",
  [ST_CONFIRM_OK_ROWS] =
    "SELECT id, number, role, status, config, value, steps_budget, pid FROM trials "
    "INDEXED BY trials_ok_config WHERE sweep_id = :sweep_id AND status = 'ok' "
    "AND config = :config",
  [ST_CONFIRM_OTHER_ROWS] =
    "SELECT id, number, role, status, config, value, steps_budget, pid FROM trials "
    "INDEXED BY trials_unok_config WHERE sweep_id = :sweep_id AND status <> 'ok' "
    "AND config = :config",
  [ST_LIST_SWEEPS] =
    "SELECT m.id, m.name, m.model, m.hardware, m.status, m.strategy, m.created_at, "
    "m.finished_at, m.n_trials, m.ok, m.best_ms, m.baseline_ms, m.speedup, m.best_trial, "
    "m.running, m.oom, m.invalid, m.timeout, m.crash, m.no_metric, m.pruned, m.interrupted, "
    "m.lost, m.wrong, s.host, s.pid, s.pid_start "
    "FROM sweep_summary m JOIN sweeps s ON s.id = m.id ORDER BY m.id",
  [ST_SHOW_SWEEP] =
    "SELECT s.*, m.n_trials, m.best_trial, m.best_ms, m.baseline_ms, m.speedup FROM sweeps s "
    "JOIN sweep_summary m ON m.id = s.id WHERE s.id = :id AND m.id = :id",
  [ST_SHOW_COUNTS] =
    "SELECT status, n FROM sweep_counts WHERE sweep_id = :id AND n > 0 ORDER BY status",
  [ST_SHOW_TRIALS] =
    "SELECT " TRIAL_COLS "FROM trial_results WHERE sweep_id = :id ORDER BY number",
  /* show --all's text: only the columns its table prints (store_each_trial_line). */
  [ST_SHOW_TRIAL_LINES] =
    "SELECT number, role, status, value, n_steps, duration_s, first_step_ms, label, error "
    "FROM trials WHERE sweep_id = :id ORDER BY number",
  /* A page of a large sweep: its fastest ok trials, read in value order off the
   * (sweep_id, status, value) index, so the cost is the page's, not the sweep's. */
  [ST_SHOW_TRIALS_FASTEST] =
    "SELECT " TRIAL_COLS "FROM trial_results WHERE sweep_id = :id AND status = 'ok' "
    "ORDER BY value, number LIMIT :limit",
  [ST_SHOW_LOG_FAILURES] =
    "SELECT count(*) FROM trials INDEXED BY " BY_NUMBER " WHERE sweep_id = :id AND "
    "error LIKE '%flagtune: trial log %'",
  /* What its latest finished trials cost (schema 16): those that reached a first step, then
   * those that ended before one (an OOM while compiling, a refused flag; a trial stored
   * before schema 16 is neither). The last 1,000 by
   * number, read backwards off the (sweep_id, number) index: a bounded read at any size. */
  [ST_SHOW_COST] =
    "SELECT count(first_step_ms), avg(CASE WHEN first_step_ms IS NOT NULL THEN duration_s END), "
    "avg(first_step_ms) / 1e3, avg(step_ms), avg(CASE WHEN first_step_ms IS NOT NULL THEN "
    "n_steps END), count(CASE WHEN first_step_ms IS NULL AND n_steps = 0 THEN duration_s END), "
    "avg(CASE WHEN first_step_ms IS NULL AND n_steps = 0 THEN duration_s END), "
    "count(duration_s) "
    "FROM (SELECT first_step_ms, step_ms, duration_s, n_steps FROM trials "
    "WHERE sweep_id = :id AND status <> 'running' ORDER BY number DESC LIMIT 1000)",
  [ST_SHOW_BEST] =
    "SELECT " TRIAL_COLS "FROM trial_results WHERE sweep_id = :id "
    "AND id = (SELECT trial_id FROM sweep_best WHERE sweep_id = :id)",
  /* The sweep's baseline (the view sweep_baseline, store/views.sql), else trial
   * 0 as it ended. */
  [ST_SHOW_BASELINE] =
    "SELECT " TRIAL_COLS "FROM trial_results WHERE sweep_id = :id AND id = coalesce("
    "(SELECT trial_id FROM sweep_baseline WHERE sweep_id = :id), "
    "(SELECT x.id FROM trials x WHERE x.sweep_id = :id AND x.number = 0))",
  [ST_BEST] =
    "SELECT model, hardware, sweep_id, sweep_name, strategy, best_trial, trial_id, role, best_ms, "
    "baseline_ms, speedup, n_steps, label, xla_flags, tpu_args, env, config, "
    "finished_at, baseline_id, speedup_lo, speedup_hi, winner_trials, "
    "(SELECT software FROM sweeps x WHERE x.id = best.sweep_id) AS software, "
    "(SELECT jaxlib FROM sweeps x WHERE x.id = best.sweep_id) AS jaxlib FROM best "
    "WHERE (:model IS NULL OR model = :model) AND (:hardware IS NULL OR hardware = :hardware "
    "OR (instr(:hardware, '" HARDWARE_KEY_SEP "') = 0 AND " KEY_BASE("hardware") " = :hardware)) "
    "ORDER BY model, hardware",
  /* The best and baseline trials the interval is cached for, and the steps it skips. */
  [ST_SWEEP_CI_SOURCE] =
    "SELECT p.trial_id, b.id, coalesce(json_extract(s.options_json, '$.skip'), 0) "
    "FROM sweeps s CROSS JOIN sweep_best p ON p.sweep_id = s.id "
    "CROSS JOIN sweep_baseline sb ON sb.sweep_id = s.id CROSS JOIN trials b ON b.id = sb.trial_id "
    "WHERE s.id = :id",
  [ST_SWEEP_CI_SET] =
    "UPDATE sweeps SET best_ci_trial = :best, best_ci_baseline = :base, best_ci_lo = :lo, "
    "best_ci_hi = :hi WHERE id = :id",
  [ST_SWEEP_WINNER] =
    "UPDATE sweeps SET winner_trial_id = :trial_id, winner_ms = :winner_ms, "
    "winner_baseline_ms = :baseline_ms, winner_trials = :n, speedup_lo = :lo, "
    "speedup_hi = :hi, winner_kind = coalesce(:kind, 'search') WHERE id = :id",
  [ST_TRIAL_LOSSES] = "SELECT losses FROM trials WHERE id = :id",
  [ST_TRIAL_SLURM] =
    "UPDATE trials SET slurm_job = :job, slurm_step = :step, node = :node "
    "WHERE sweep_id = :sweep AND number = :number",
  [ST_TRIAL_SLURM_GET] =
    "SELECT slurm_job, slurm_step FROM trials WHERE sweep_id = :sweep AND number = :number "
    "AND slurm_job IS NOT NULL",
  [ST_SWEEP_SLURM_JOB] =
    "SELECT slurm_job FROM trials INDEXED BY " BY_NUMBER " "
    "WHERE sweep_id = :sweep AND slurm_job IS NOT NULL "
    "ORDER BY id DESC LIMIT 1",
  [ST_TRIAL_PROFILE] =
    "UPDATE trials SET profile_path = :path, profile_status = :status, "
    "profile_duration_s = :duration_s WHERE id = :id",
  /* A warm start's history (store_warm_trials): the :best fastest ok trials and the :recent
   * most recent others of the model's other sweeps, oldest first (each part a bounded sort). */
#define WARM_FROM(index)                                                                        \
  "SELECT t.id, t.number, t.role, t.status, t.config, t.value, t.steps_budget, t.pid, "       \
  "t.sweep_id AS sid FROM sweeps s "                                                          \
  "CROSS JOIN trials t INDEXED BY " index " ON t.sweep_id = s.id "                             \
  "WHERE s.model = :model AND " KEY_BASE("s.hardware") " = " KEY_BASE(":hardware") " "       \
  "AND s.id <> :sweep_id AND t.role <> 'baseline' AND t.config <> '{}' "                      \
  "AND t.status NOT IN ('running', 'lost', 'interrupted') "
  [ST_WARM_TRIALS] =
    "SELECT id, number, role, status, config, value, steps_budget, pid FROM ("
    "SELECT * FROM (" WARM_FROM("trials_sweep_status_value") "AND t.status = 'ok' "
    "AND t.value IS NOT NULL "
    "ORDER BY t.value, t.id LIMIT :best) UNION ALL "
    "SELECT * FROM (" WARM_FROM(BY_NUMBER) "AND NOT (t.status = 'ok' AND t.value IS NOT NULL) "
    "ORDER BY t.id DESC LIMIT :recent)) ORDER BY sid, number",
  [ST_SWEEP_HOLDER] =
    "SELECT status, pid, host, pid_start, coalesce(claimed_at, created_at) FROM sweeps "
    "WHERE id = :id",
  [ST_SWEEP_CLAIM] =
    "UPDATE sweeps SET status = 'running', error = NULL, finished_at = NULL, pid = :pid, "
    "host = :host, pid_start = :pid_start, claimed_at = " NOW " WHERE id = :id",
  [ST_SWEEP_HARDWARE] = "UPDATE sweeps SET hardware = :hardware WHERE id = :id",
  [ST_SWEEP_FORGET_DIGEST] = "UPDATE sweeps SET space_digest = NULL WHERE id = :id",
  [ST_SWEEP_PLACE] =
    "UPDATE sweeps SET workdir = :workdir, command_json = :command_json WHERE id = :id",
  [ST_SWEEP_BUDGET] =
    "UPDATE sweeps SET budget_trials = :budget_trials, options_json = :options_json "
    "WHERE id = :id",
};
/* clang-format on */

/* ---- errors ---- */

int store_db_fail(store *s, char **err, const char *what) {
  int hook = s->hook_rc;
  s->hook_rc = SQLITE_OK;
  store_note_fail(s, hook ? hook : sqlite3_extended_errcode(s->db));
  return diag_set(err, FT_ESTORE, "database %s: %s: %s", s->path, what,
                  hook ? sqlite3_errstr(hook) : sqlite3_errmsg(s->db));
}

/* Why PATH cannot be opened, in words a user can act on; NULL when nothing obvious. */
static char *path_problem(const char *path, int readonly, int must_exist) {
  struct stat st;
  const char *slash = strrchr(path, '/');
  char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
  char *msg = NULL;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    msg = xasprintf("%s is a directory, not a database", path);
  else if (stat(path, &st) != 0 && (readonly || must_exist))
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
  char *msg = path_problem(s->path, s->readonly, s->must_exist);
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

int store_stmt_get(store *s, stmt_id id, sqlite3_stmt **out, char **err) {
  if (!s->cache[id]) {
    int rc =
        sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s->cache[id], NULL);
    if (rc != SQLITE_OK) return store_db_fail(s, err, "preparing a statement");
  }
  *out = s->cache[id];
  return 0;
}

const char *store_stmt_text(stmt_id id) {
  return id >= 0 && id < ST_COUNT ? stmt_sql[id] : NULL;
}

void store_stmt_done(sqlite3_stmt *st) {
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
}

/* Binders return an SQLite code; callers OR them together, since any non-zero means a
 * bind failed and sqlite3_errmsg says which. A misspelt name is SQLITE_RANGE. */
int store_bind_index(sqlite3_stmt *st, const char *name) {
  return sqlite3_bind_parameter_index(st, name);
}

int store_bind_text(sqlite3_stmt *st, const char *name, const char *v) {
  int i = store_bind_index(st, name);
  if (!i) return SQLITE_RANGE;
  return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

int store_bind_int(sqlite3_stmt *st, const char *name, int64_t v) {
  int i = store_bind_index(st, name);
  return i ? sqlite3_bind_int64(st, i, v) : SQLITE_RANGE;
}

/* NaN and infinities are "no value": they bind as NULL. */
int store_bind_real(sqlite3_stmt *st, const char *name, double v) {
  int i = store_bind_index(st, name);
  if (!i) return SQLITE_RANGE;
  return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

/* Budgets and optional counts: zero or less means "none" and is stored as NULL. */
int store_bind_pos(sqlite3_stmt *st, const char *name, int64_t v) {
  int i = store_bind_index(st, name);
  if (!i) return SQLITE_RANGE;
  return v > 0 ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

int store_bind_fail(store *s, sqlite3_stmt *st, char **err) {
  int code = diag_set(err, FT_ESTORE, "database %s: cannot bind parameters of '%.60s': %s", s->path,
                      sqlite3_sql(st), sqlite3_errmsg(s->db));
  store_stmt_done(st);
  return code;
}

/* Steps a statement that returns no rows, retrying on SQLITE_BUSY after busy_timeout
 * gave up; resets it either way. */
int store_step_done(store *s, sqlite3_stmt *st, const char *what, char **err) {
  int rc;
  for (int i = 0;; i++) {
    rc = sqlite3_step(st);
    if (rc != SQLITE_BUSY || i >= BUSY_RETRIES) break;
    sqlite3_reset(st);
  }
  int code = (rc == SQLITE_DONE || rc == SQLITE_ROW) ? 0 : store_db_fail(s, err, what);
  store_stmt_done(st);
  return code;
}

int store_run_cached(store *s, stmt_id id, const char *what, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, id, &st, err);
  return rc ? rc : store_step_done(s, st, what, err);
}

void store_tx_rollback(store *s) {
  if (!sqlite3_get_autocommit(s->db)) store_run_cached(s, ST_ROLLBACK, "rolling back", NULL);
}

/* ---- open and migrate ---- */

static int exec_sql(store *s, const char *sql, const char *what, char **err) {
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? 0 : store_db_fail(s, err, what);
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

/* The schema an empty database gets in one step, and its number (build/schema_data.c). */
extern const int store_schema_version;
extern const char *const store_schema_sql;

/* FT_ESTORE when a row references a missing parent (PRAGMA foreign_key_check finds one). */
static int foreign_keys_hold(store *s, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL);
  if (rc != SQLITE_OK) return store_db_fail(s, err, "checking foreign keys");
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW)
    return diag_set(err, FT_ESTORE, "database %s: a migration left a row without its parent",
                    s->path);
  return rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "checking foreign keys");
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
  int rc = store_run_cached(s, ST_BEGIN_WRITE, "starting a migration", err), have = 0;
  if (!rc) rc = user_version(s, &have, err);
  /* An empty database takes the migrations' result in one step (tools/schema.c), made from
   * these same migrations at build time. */
  if (!rc && have == 0 && latest == store_schema_version) {
    rc = exec_sql(s, store_schema_sql, "creating the schema", err);
  } else {
    for (int n = have + 1; n <= latest && !rc; n++) {
      const embed_file *f = migration_find(n, &latest);
      if (f) rc = exec_sql(s, f->data, f->path, err);
    }
    if (!rc && have < latest) {
      /* The views are made again from their one definition after any migration (views.sql). */
      const embed_file *views = embed_find("store/views.sql");
      rc = views ? exec_sql(s, views->data, views->path, err)
                 : diag_set(err, FT_ESTORE, "store/views.sql is not in this build");
    }
  }
  if (!rc && have < latest) {
    char *bump = xasprintf("PRAGMA user_version = %d", latest);
    rc = exec_sql(s, bump, "setting the schema version", err);
    free(bump);
  }
  if (!rc) rc = foreign_keys_hold(s, err);
  store_durable(s, 1);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "committing a migration", err);
  store_durable(s, 0);
  if (rc) store_tx_rollback(s);
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

/* ---- durability ---- */

/* SQLite's own auto-checkpoint threshold, kept for the commits that skip the checkpoint. */
enum { CKPT_DEFER_PAGES = 1000 };

/* After each commit (this replaces SQLite's auto-checkpoint, which it keeps for the rest): a
 * durable commit (store_durable) is made durable here, before COMMIT returns. It ran with
 * synchronous=NORMAL (nothing synced yet); a full checkpoint (store_checkpoint_full) syncs
 * the -wal, copies the commit into the database file and syncs that: two syncs, and the file
 * alone holds every finished trial, whatever becomes of the -wal. In full, not passive: a
 * partial checkpoint (one a reader held back) skips every page that changed again after the
 * reader's snapshot, so the file is consistent only together with the -wal; a full one waits
 * for such readers (CKPT_WAIT_MS at most: queries are short) and leaves the file whole. When
 * even that is held back, the -wal is synced alone. An error (EIO, ENOSPC on a sync) goes back
 * through COMMIT: the commit happened, but it is not reported as stored. */
static int wal_hook(void *ud, sqlite3 *db, const char *name, int pages) {
  store *s = ud;
  (void)name;
  if (s->saved || s->durable) {
    /* SQLite reports a hook's failure as the statement's SQLITE_ERROR: the code is kept for
     * store_db_fail to name. */
    s->hook_rc = store_checkpoint_full(db, s->saved ? BUSY_TIMEOUT_MS : CKPT_WAIT_MS);
    return s->hook_rc;
  }
  /* A running durability worker checkpoints for us: two checkpoints at once, the second would
   * find the first's lock (and this one would sit on the loop's thread). */
  if (pages >= CKPT_DEFER_PAGES && !store_durable_nudge(s))
    sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  return SQLITE_OK;
}

/* Under STORE_SYNC_DURABLE, the commits between store_durable(s, 1) and store_durable(s, 0)
 * are made durable by the wal hook's checkpoint; all commits run with synchronous=NORMAL (the
 * others reach the disk with the next durable commit). */
void store_durable(store *s, int on) {
  if (s->sync != STORE_SYNC_DURABLE || s->readonly) return;
  /* The worker idle first: two checkpoints at once, the second would find the first's lock. */
  if (on && s->worker) store_durable_drain(s, NULL, NULL);
  s->durable = on;
}

int store_set_sync(store *s, store_sync mode, char **err) {
  const char *sql =
      mode == STORE_SYNC_FULL ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL";
  if (exec_sql(s, sql, "setting synchronous", err)) return FT_ESTORE;
  s->sync = mode;
  return 0;
}

static int configure(store *s, char **err) {
  sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
  /* No memory-mapped I/O of the main file: a file truncated or made unwritable under a
   * mapping raises SIGBUS instead of an error (SQLite's default is already 0; say so). */
  int rc = exec_patiently(s, "PRAGMA foreign_keys = ON; PRAGMA mmap_size = 0");
  if (rc == SQLITE_OK && !s->readonly)
    rc = exec_patiently(s, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  if (rc != SQLITE_OK) return open_fail(s, rc, err);
  if (!s->readonly) sqlite3_wal_hook(s->db, wal_hook, s);
  if (!s->readonly && sqlite3_db_readonly(s->db, "main") == 1)
    return diag_set(err, FT_EINPUT, "database %s is read-only (check its permissions)", s->path);
  return 0;
}

static char *abs_path(const char *path) {
  char cwd[4096];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd)) return xstrdup(path);
  return xasprintf("%s/%s", cwd, path);
}

/* The identity of PATH's SUFFIX file ("-wal", "-shm") now; 0 when there is none. */
static void side_identity(const store *s, const char *suffix, dev_t *dev, ino_t *ino) {
  char *p = xasprintf("%s%s", s->abs, suffix);
  struct stat st;
  *dev = 0;
  *ino = 0;
  if (stat(p, &st) == 0) {
    *dev = st.st_dev;
    *ino = st.st_ino;
  }
  free(p);
}

/* Creates the database file itself when it is missing (O_EXCL: then it is ours alone), so
 * that an open that fails before anything is committed (a full disk) can remove it again. */
static int create_file(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

/* The file create_file made, still empty and still at PATH after a failed open: removed, with
 * whatever SQLite put beside it. Nothing was committed (the migrations are one transaction). */
static void remove_created(const char *path, dev_t dev, ino_t ino) {
  struct stat st;
  if (stat(path, &st) != 0 || st.st_dev != dev || st.st_ino != ino || st.st_size != 0) return;
  unlink(path);
  for (int i = 0; i < 2; i++) {
    char *side = xasprintf("%s%s", path, i ? "-shm" : "-wal");
    unlink(side);
    free(side);
  }
}

int store_open(const char *path, int flags, store **out, char **err) {
  store *s = xcalloc(1, sizeof *s);
  s->path = xstrdup(path);
  s->readonly = (flags & STORE_READONLY) != 0;
  s->must_exist = (flags & STORE_MUST_EXIST) != 0;
  s->query_seconds = STORE_QUERY_SECONDS;
  s->query_bytes = STORE_QUERY_BYTES;
  s->claim_fd = -1;
  s->abs = abs_path(path);
  *out = NULL;
  int oflags = s->readonly     ? SQLITE_OPEN_READONLY
               : s->must_exist ? SQLITE_OPEN_READWRITE
                               : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  struct stat st;
  int created = !s->readonly && !s->must_exist && create_file(s->abs);
  dev_t created_dev = 0;
  ino_t created_ino = 0;
  if (created && stat(s->abs, &st) == 0) {
    created_dev = st.st_dev;
    created_ino = st.st_ino;
  }
  int rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
  rc = rc == SQLITE_OK ? configure(s, err) : open_fail(s, rc, err);
  if (!rc) rc = migrate(s, err);
  if (!rc && stat(s->abs, &st) == 0) {
    s->dev = st.st_dev;
    s->ino = st.st_ino;
  }
  /* The -wal and -shm exist from the first transaction (migrate read the schema version). */
  if (!rc && !s->readonly) {
    side_identity(s, "-wal", &s->wal_dev, &s->wal_ino);
    side_identity(s, "-shm", &s->shm_dev, &s->shm_ino);
  }
  if (rc) {
    int full = s->nospace || (s->db && (sqlite3_errcode(s->db) & 0xff) == SQLITE_FULL);
    char *abs = xstrdup(s->abs);
    store_close(s);
    if (created) remove_created(abs, created_dev, created_ino);
    if (created && full && err) {
      free(*err);
      *err = NULL;
      rc = diag_set(err, FT_ESTORE,
                    "cannot create database %s: the disk is full; nothing was left behind", path);
    }
    free(abs);
    return rc;
  }
  *out = s;
  return 0;
}

int store_identity_check(store *s, char **err);

int64_t store_memory_used(void) {
  return (int64_t)sqlite3_memory_used();
}

int store_close(store *s) {
  if (!s) return 0;
  store_durable_free(s); /* its connection closes first: the main one is the last, as alone */
  for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(s->cache[i]);
  /* The file at our path is no longer ours, but the -wal beside it still is: emptied, it
   * cannot be replayed into the file that took our place. (The frames go into the file we
   * opened, which is no longer at the path.) */
  if (!s->readonly && s->ino != 0 && store_identity_check(s, NULL) != 0)
    sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
  int rc = sqlite3_close(s->db);
  if (s->claim_fd >= 0) close(s->claim_fd); /* releases the sweep's lock */
  free(s->path);
  free(s->abs);
  free(s);
  return rc == SQLITE_OK ? 0 : FT_ESTORE;
}

/* ---- the database file's identity ---- */

/* The -wal (or -shm) at the path is not the one this connection opened. What the connection
 * committed since the last checkpoint lives only in the -wal it still has open (unlinked or
 * not): a full checkpoint through it copies that into the database file now, before anything
 * (a kill -9) can take it away. From then on every commit is checkpointed in full. */
static int save_side(store *s, const char *suffix, const char *how, char **err) {
  int log = -1, done = -1;
  if (s->worker) store_durable_drain(s, NULL, NULL); /* no checkpoint of its own under way */
  int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_FULL, &log, &done);
  if (rc == SQLITE_OK && log == done) {
    s->saved = 1;
    return diag_set(err, FT_ESTORE,
                    "database %s: its %s file was %s while in use: stopping; every result "
                    "recorded so far is saved in %s, nothing was lost (`flagtune resume` "
                    "continues the sweep)",
                    s->path, suffix, how, s->path);
  }
  return diag_set(err, FT_ESTORE,
                  "database %s: its %s file was %s while in use, and copying what it held into "
                  "the database failed (%s): stopping; results since the last checkpoint may "
                  "be lost if flagtune is killed now",
                  s->path, suffix, how,
                  rc == SQLITE_OK ? "a reader held it" : sqlite3_errmsg(s->db));
}

/* "deleted" or "replaced by another file" when PATH's SUFFIX file is no longer DEV/INO. */
static const char *side_change(const store *s, const char *suffix, dev_t dev, ino_t ino) {
  if (ino == 0) return NULL;
  dev_t d;
  ino_t i;
  side_identity(s, suffix, &d, &i);
  if (i == 0) return "deleted";
  return d != dev || i != ino ? "replaced by another file" : NULL;
}

/* A write goes only to the file this connection opened, and only while that file is still
 * the one at its path: a database deleted or replaced (say, by an older copy) under a
 * running sweep stops it instead of writing into a file nobody will read, or over the copy. */
int store_identity_check(store *s, char **err) {
  struct stat st;
  if (s->ino == 0) return 0;
  if (stat(s->abs, &st) != 0)
    return diag_set(err, FT_ESTORE,
                    "database %s was deleted while in use: stopping; nothing more is written",
                    s->path);
  if (st.st_dev != s->dev || st.st_ino != s->ino)
    return diag_set(err, FT_ESTORE,
                    "database %s was replaced by another file while in use: stopping; nothing "
                    "is written to either",
                    s->path);
  if (s->saved) return 0;
  const char *how = side_change(s, "-wal", s->wal_dev, s->wal_ino);
  if (how) return save_side(s, "-wal", how, err);
  how = side_change(s, "-shm", s->shm_dev, s->shm_ino);
  if (how) return save_side(s, "-shm", how, err);
  return 0;
}

int store_was_full(const store *s) {
  return s->full;
}

int store_fault_resumable(const store *s) {
  return s->full || s->saved;
}

char *store_col_strdup(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? xstrdup((const char *)t) : NULL;
}
