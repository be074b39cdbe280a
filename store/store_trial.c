/* The store: trials and their steps. A trial's row from start to finish, its steps in one
 * transaction with its outcome, loads of a sweep's trial records, warm-start history, the
 * profile phase and the winner. Must not call up into other modules. */
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
#include "store_impl.h"

/* ---- trials ---- */

/* The row goes in with the pid its start will most likely give it (t->pid; NULL for 0): one
 * statement, one commit. The start writes the pid again only if it got another. */
int store_trial_begin(store *s, const store_trial_new *t, int64_t *trial_id, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_TRIAL_BEGIN, &st, err);
  if (rc) return rc;
  rc = store_bind_int(st, ":sweep_id", t->sweep_id) | store_bind_int(st, ":number", t->number) |
       store_bind_text(st, ":role", record_role_name(t->number == 0 ? ROLE_BASELINE : t->role)) |
       store_bind_text(st, ":config", t->config_json) | store_bind_text(st, ":label", t->label) |
       store_bind_text(st, ":xla_flags", t->xla_flags) |
       store_bind_text(st, ":tpu_args", t->tpu_args) | store_bind_text(st, ":env", t->env_json) |
       store_bind_text(st, ":command", t->command_json) |
       store_bind_pos(st, ":steps_budget", t->steps_budget) | store_bind_int(st, ":slot", t->slot) |
       store_bind_text(st, ":log_path", t->log_path) |
       store_bind_pos(st, ":rerun_of", t->rerun_of) | store_bind_pos(st, ":pid", t->pid);
  if (rc) return store_bind_fail(s, st, err);
  rc = store_step_done(s, st, "starting a trial", err);
  if (!rc && trial_id) *trial_id = sqlite3_last_insert_rowid(s->db);
  return rc;
}

int store_trial_set_pid(store *s, int64_t trial_id, int pid, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_TRIAL_PID, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":pid", pid) | store_bind_int(st, ":id", trial_id))
    return store_bind_fail(s, st, err);
  return store_step_done(s, st, "recording a trial's pid", err);
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
  int rc = store_stmt_get(s, ST_TRIAL_LOSSES, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", trial_id)) return store_bind_fail(s, st, err);
  int step = sqlite3_step(st);
  cJSON *arr = step == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_TEXT
                   ? cJSON_Parse((const char *)sqlite3_column_text(st, 0))
                   : NULL;
  rc = step == SQLITE_ROW || step == SQLITE_DONE ? 0 : store_db_fail(s, err, "loading losses");
  store_stmt_done(st);
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
  int rc = store_stmt_get(s, ST_TRIAL_FINISH, &st, err);
  if (rc) return rc;
  int ok = e->status == OUTCOME_OK;
  rc = store_bind_text(st, ":status", outcome_name(e->status)) |
       store_bind_real(st, ":value", ok ? e->value : NAN) |
       store_bind_int(st, ":n_steps", n_steps) | store_bind_text(st, ":error", e->error) |
       store_bind_real(st, ":duration_s", e->duration_s) | store_bind_int(st, ":id", trial_id) |
       store_bind_real(st, ":first_step_ms", e->first_step_ms) |
       store_bind_real(st, ":step_ms", e->step_ms);
  char *losses = losses_json(e->losses, e->n_losses);
  rc |= store_bind_text(st, ":losses", losses);
  free(losses);
  rc |= e->has_exit ? store_bind_int(st, ":exit_code", e->exit_code) : SQLITE_OK;
  rc |= e->term_signal ? store_bind_int(st, ":signal", e->term_signal) : SQLITE_OK;
  if (rc) return store_bind_fail(s, st, err);
  rc = store_step_done(s, st, "finishing a trial", err);
  if (!rc && sqlite3_changes(s->db) != 1)
    return diag_set(err, FT_ESTORE, "database %s: no trial %lld", s->path, (long long)trial_id);
  return rc;
}

/* Replaces the trial's steps; step numbers start at 1. A non-finite time (never produced
 * by the parser) is skipped rather than losing the whole outcome. */
static int steps_replace(store *s, int64_t trial_id, const double *ms, int n, char **err) {
  sqlite3_stmt *del = NULL, *ins = NULL;
  int rc = store_stmt_get(s, ST_STEPS_DELETE, &del, err);
  if (!rc) rc = store_stmt_get(s, ST_STEP_INSERT, &ins, err);
  if (rc) return rc;
  if (store_bind_int(del, ":trial_id", trial_id)) return store_bind_fail(s, del, err);
  rc = store_step_done(s, del, "replacing step times", err);
  for (int i = 0; i < n && !rc; i++) {
    if (!isfinite(ms[i])) continue;
    if (store_bind_int(ins, ":trial_id", trial_id) | store_bind_int(ins, ":step", i + 1) |
        store_bind_real(ins, ":ms", ms[i]))
      return store_bind_fail(s, ins, err);
    rc = store_step_done(s, ins, "storing step times", err);
  }
  return rc;
}

int store_trial_add_steps(store *s, int64_t trial_id, int first, const double *ms, int n,
                          char **err) {
  sqlite3_stmt *ins = NULL, *upd = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_STEP_INSERT, &ins, err);
  if (!rc) rc = store_stmt_get(s, ST_TRIAL_NSTEPS, &upd, err);
  if (!rc) rc = store_run_cached(s, ST_BEGIN_WRITE, "starting a transaction", err);
  if (rc) return rc;
  for (int i = 0; i < n && !rc; i++) {
    if (!isfinite(ms[i])) continue;
    if (store_bind_int(ins, ":trial_id", trial_id) | store_bind_int(ins, ":step", first + i + 1) |
        store_bind_real(ins, ":ms", ms[i])) {
      rc = store_bind_fail(s, ins, err);
      break;
    }
    rc = store_step_done(s, ins, "storing step times", err);
  }
  if (!rc && (store_bind_int(upd, ":n_steps", first + n) | store_bind_int(upd, ":id", trial_id)))
    rc = store_bind_fail(s, upd, err);
  if (!rc) rc = store_step_done(s, upd, "counting a trial's steps", err);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "committing step times", err);
  if (rc) store_tx_rollback(s);
  return rc;
}

int store_trial_finish(store *s, int64_t trial_id, const store_trial_end *e, const double *steps_ms,
                       int n_steps, char **err) {
  /* Group commit (store_durable_async) unless the -wal changed under us (store.c's
   * save_side: then every commit is checkpointed in full, here). */
  int group = s->worker && !s->saved;
  s->ticket = 0;
  int rc = store_identity_check(s, err);
  if (!rc && group) rc = store_durable_failed(s, err); /* nothing more is durable */
  if (!rc) rc = store_run_cached(s, ST_BEGIN_WRITE, "starting a transaction", err);
  if (rc) return rc;
  rc = finish_row(s, trial_id, e, n_steps, err);
  if (!rc) rc = steps_replace(s, trial_id, steps_ms, n_steps, err);
  /* On disk, and in the database file itself, before the trial is reported: now, or once
   * the worker says its ticket is durable. */
  if (!group) store_durable(s, 1);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "committing a trial", err);
  if (!group) store_durable(s, 0);
  if (rc) store_tx_rollback(s);
  int code = !rc && group ? store_durable_post(s, &s->ticket) : SQLITE_OK;
  if (code != SQLITE_OK) {
    store_note_fail(s, code);
    rc = diag_set(err, FT_ESTORE, "database %s: making a trial durable: %s", s->path,
                  sqlite3_errstr(code));
  }
  return rc;
}

uint64_t store_durable_ticket(const store *s) {
  return s->ticket;
}

int store_trials_mark(store *s, int64_t sweep_id, outcome from, outcome to, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_TRIALS_MARK, &st, err);
  if (rc) return rc;
  if (store_bind_text(st, ":from", outcome_name(from)) |
      store_bind_text(st, ":to", outcome_name(to)) | store_bind_int(st, ":sweep_id", sweep_id))
    return store_bind_fail(s, st, err);
  rc = store_step_done(s, st, "marking trials", err);
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

/* A set of configurations (owned copies, sorted once filled): the rows of which a partial
 * load keeps. */
typedef struct {
  char **v;
  int n, cap;
} config_set;

static void set_add(config_set *c, const char *config) {
  if (c->n == c->cap) c->v = xrealloc(c->v, sizeof *c->v * (size_t)(c->cap = c->cap * 2 + 16));
  c->v[c->n++] = xstrdup(config ? config : "");
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts C and drops its repeats. */
static void set_seal(config_set *c) {
  if (c->n > 1) qsort(c->v, (size_t)c->n, sizeof *c->v, cmp_str);
  int kept = 0;
  for (int i = 0; i < c->n; i++) {
    if (kept > 0 && strcmp(c->v[kept - 1], c->v[i]) == 0)
      free(c->v[i]);
    else
      c->v[kept++] = c->v[i];
  }
  c->n = kept;
}

/* Whether CONFIG is in C. */
static int set_has(const config_set *c, const char *config) {
  return config && c->n > 0 && bsearch(&config, c->v, (size_t)c->n, sizeof *c->v, cmp_str);
}

static void set_free(config_set *c) {
  for (int i = 0; i < c->n; i++) free(c->v[i]);
  free(c->v);
}

/* Appends the rows of ST (bound and ready) to the *N trial records of *OUT, which has room
 * for *CAP: all of them (KEEP NULL), or those whose configuration is in KEEP (a row not kept
 * is never copied). */
static int rows_append(store *s, sqlite3_stmt *st, const config_set *keep, trial_record **out,
                       int *n, int *cap, char **err) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (keep && !set_has(keep, (const char *)sqlite3_column_text(st, 4))) continue;
    if (*n == *cap) *out = xrealloc(*out, sizeof **out * (size_t)(*cap = *cap ? *cap * 2 : 16));
    trial_record *t = memset(&(*out)[(*n)++], 0, sizeof **out);
    t->id = sqlite3_column_int64(st, 0);
    t->number = sqlite3_column_int(st, 1);
    t->role = (trial_role)col_enum(st, 2, record_role_from_name, ROLE_SEARCH);
    t->status = (outcome)col_enum(st, 3, outcome_from_name, OUTCOME_CRASH);
    t->config_json = store_col_strdup(st, 4);
    t->value = col_real(st, 5);
    t->steps_budget = sqlite3_column_int(st, 6);
    t->pid = sqlite3_column_int(st, 7);
  }
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "loading trials");
  store_stmt_done(st);
  return rc;
}

/* Reads the rows of ST (bound and ready) into trial records: all of them (KEEP NULL), or
 * those whose configuration is in KEEP, trimmed to their number. */
static int trial_rows_of(store *s, sqlite3_stmt *st, const config_set *keep, trial_record **out,
                         int *n, char **err) {
  int cap = 0, rc = rows_append(s, st, keep, out, n, &cap, err);
  if (!rc && keep && *n > 0 && *n < cap) /* trimmed: what is kept stays as long as the end */
    *out = xrealloc(*out, sizeof **out * (size_t)*n);
  return rc;
}

static int trials_rows(store *s, int64_t sweep_id, trial_record **out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_TRIALS_LOAD, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id)) return store_bind_fail(s, st, err);
  return trial_rows_of(s, st, NULL, out, n, err);
}

int store_warm_trials(store *s, const char *model, const char *hardware, int64_t sweep_id,
                      trial_record **out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  *n = 0;
  int rc = store_stmt_get(s, ST_WARM_TRIALS, &st, err);
  if (rc) return rc;
  if (store_bind_text(st, ":model", model) | store_bind_text(st, ":hardware", hardware) |
      store_bind_int(st, ":sweep_id", sweep_id) | store_bind_int(st, ":best", STORE_WARM_BEST) |
      store_bind_int(st, ":recent", STORE_WARM_RECENT))
    return store_bind_fail(s, st, err);
  rc = trial_rows_of(s, st, NULL, out, n, err);
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
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_TRIAL_PROFILE, &st, err);
  if (rc) return rc;
  rc = store_bind_text(st, ":path", path) | store_bind_text(st, ":status", outcome_name(status)) |
       store_bind_real(st, ":duration_s", duration_s) | store_bind_int(st, ":id", trial_id);
  if (rc) return store_bind_fail(s, st, err);
  return store_step_done(s, st, "recording a PGLE profile run", err);
}

int store_sweep_set_winner(store *s, int64_t sweep_id, const store_winner *w, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_stmt_get(s, ST_SWEEP_WINNER, &st, err);
  if (rc) return rc;
  rc = store_bind_int(st, ":trial_id", w->trial_id) | store_bind_real(st, ":winner_ms", w->value) |
       store_bind_real(st, ":baseline_ms", w->baseline) | store_bind_int(st, ":n", w->n_trials) |
       store_bind_real(st, ":lo", w->lo) | store_bind_real(st, ":hi", w->hi) |
       store_bind_text(st, ":kind", w->kind) | store_bind_int(st, ":id", sweep_id);
  if (rc) return store_bind_fail(s, st, err);
  return store_step_done(s, st, "recording a sweep's winner", err);
}

/* Gives T its step times: the N in BUF, in an array of exactly that length. */
static void steps_keep(trial_record *t, const double *buf, int n) {
  if (n == 0) return;
  double *steps = xmalloc(sizeof(double) * (size_t)n);
  memcpy(steps, buf, sizeof(double) * (size_t)n);
  t->steps = steps;
  t->n_steps = n;
}

/* Steps arrive ordered like the trials (by number, then step), so one walk assigns them. */
/* The step times of the trials of T marked in WANT (all when WANT is NULL). Each trial's are
 * gathered in one scratch buffer and then allocated once at their length: arrays grown by
 * doubling and trimmed afterwards left the heap a hole a trial (30 MB at 60,000 trials). */
static int trials_steps(store *s, int64_t sweep_id, trial_record *t, int n, const char *want,
                        char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_STEPS_LOAD, &st, err), k = 0, cap = 0, len = 0;
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id)) return store_bind_fail(s, st, err);
  double *buf = NULL;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    if (k < n && t[k].id != id) {
      steps_keep(&t[k], buf, len);
      len = 0;
      while (k < n && t[k].id != id) k++;
    }
    if (k == n) continue;
    if (want && !want[k]) continue;
    if (len == cap) buf = xrealloc(buf, sizeof(double) * (size_t)(cap = cap ? cap * 2 : 64));
    buf[len++] = sqlite3_column_double(st, 1);
  }
  if (k < n) steps_keep(&t[k], buf, len);
  free(buf);
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "loading step times");
  store_stmt_done(st);
  return rc;
}

/* Rows, then the steps of all of them (ALL) or of those WANT marks. */
static int trials_load(store *s, int64_t sweep_id, int all, store_want_steps want, void *ud,
                       trial_record **out, int *n, char **err) {
  *out = NULL;
  *n = 0;
  char *marks = NULL;
  /* One read transaction, so a trial finishing meanwhile cannot split rows from steps. */
  int rc = store_run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc) rc = trials_rows(s, sweep_id, out, n, err);
  if (!rc && !all) {
    marks = xcalloc((size_t)*n + 1, 1);
    if (want) want(*out, *n, marks, ud);
  }
  if (!rc) rc = trials_steps(s, sweep_id, *out, *n, marks, err);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "ending a read", err);
  free(marks);
  if (rc) {
    store_tx_rollback(s);
    record_free(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

int store_trials_load(store *s, int64_t sweep_id, trial_record **out, int *n, char **err) {
  return trials_load(s, sweep_id, 1, NULL, NULL, out, n, err);
}

int store_trials_load_some(store *s, int64_t sweep_id, store_want_steps want, void *ud,
                           trial_record **out, int *n, char **err) {
  return trials_load(s, sweep_id, 0, want, ud, out, n, err);
}

/* The first FASTEST distinct configurations of ST_CONFIRM_FASTEST's order into KEEP (each
 * row is read and dropped: a sweep of many trials of a few configurations costs no memory). */
static int fastest_configs(store *s, int64_t sweep_id, int full_steps, int fastest,
                           config_set *keep, char **err) {
  sqlite3_stmt *st = NULL;
  if (fastest <= 0) return 0;
  int rc = store_stmt_get(s, ST_CONFIRM_FASTEST, &st, err), found = 0;
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id) | store_bind_int(st, ":full", full_steps))
    return store_bind_fail(s, st, err);
  int first = keep->n;
  while (found < fastest && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *config = (const char *)sqlite3_column_text(st, 0);
    int seen = 0;
    for (int i = first; i < keep->n && !seen; i++) seen = strcmp(keep->v[i], config) == 0;
    if (!seen) set_add(keep, config), found++;
  }
  rc = found == fastest || rc == SQLITE_DONE ? 0
                                             : store_db_fail(s, err, "reading the fastest trials");
  store_stmt_done(st);
  return rc;
}

/* Into KEEP: the configurations of the sweep's confirm trials, and those with two or more
 * ok full-step trials (of the configurations report_repeats holds, by a seek of an index
 * each: no table row, no read of a configuration run once). */
static int confirmed_and_repeated(store *s, int64_t sweep_id, int full_steps, config_set *keep,
                                  char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_CONFIRM_CONFIRMED, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id)) return store_bind_fail(s, st, err);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    set_add(keep, (const char *)sqlite3_column_text(st, 0));
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading the confirmed configurations");
  store_stmt_done(st);
  if (!rc) rc = store_stmt_get(s, ST_CONFIRM_REPEATED, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id) | store_bind_int(st, ":full", full_steps))
    return store_bind_fail(s, st, err);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    set_add(keep, (const char *)sqlite3_column_text(st, 0));
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading the repeated configurations");
  store_stmt_done(st);
  return rc;
}

static int cmp_number(const void *a, const void *b) {
  int x = ((const trial_record *)a)->number, y = ((const trial_record *)b)->number;
  return (x > y) - (x < y);
}

/* The rows of statement ID for CONFIG of the sweep, appended to the *N records of *OUT. */
static int config_rows(store *s, stmt_id id, int64_t sweep_id, const char *config,
                       trial_record **out, int *n, int *cap, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, id, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id) | store_bind_text(st, ":config", config))
    return store_bind_fail(s, st, err);
  return rows_append(s, st, NULL, out, n, cap, err);
}

/* Every trial of the configurations in KEEP, into records ordered by number (the order of a
 * read of every row): for each configuration its ok trials and its others (not ok), a seek
 * of each one's partial index, so no row of another configuration is read. */
static int kept_rows(store *s, int64_t sweep_id, const config_set *keep, trial_record **out, int *n,
                     char **err) {
  int rc = 0, cap = 0;
  for (int i = 0; i < keep->n && !rc; i++) {
    rc = config_rows(s, ST_CONFIRM_OK_ROWS, sweep_id, keep->v[i], out, n, &cap, err);
    if (!rc) rc = config_rows(s, ST_CONFIRM_OTHER_ROWS, sweep_id, keep->v[i], out, n, &cap, err);
  }
  if (!rc && *n > 1) qsort(*out, (size_t)*n, sizeof **out, cmp_number);
  if (!rc && *n > 0 && *n < cap) *out = xrealloc(*out, sizeof **out * (size_t)*n);
  return rc;
}

/* The step times of trial T (a known id), trimmed to their length. */
static int trial_steps_of(store *s, trial_record *t, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_TRIAL_STEPS, &st, err), cap = 0;
  if (rc) return rc;
  if (store_bind_int(st, ":trial_id", t->id)) return store_bind_fail(s, st, err);
  double *steps = NULL;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (t->n_steps == cap)
      steps = xrealloc(steps, sizeof(double) * (size_t)(cap = cap ? cap * 2 : 64));
    steps[t->n_steps++] = sqlite3_column_double(st, 0);
  }
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "loading step times");
  store_stmt_done(st);
  if (t->n_steps > 0) steps = xrealloc(steps, sizeof(double) * (size_t)t->n_steps);
  t->steps = steps;
  return rc;
}

int store_trials_load_confirm(store *s, int64_t sweep_id, int full_steps, int fastest,
                              store_want_steps want, void *ud, trial_record **out, int *n,
                              char **err) {
  *out = NULL;
  *n = 0;
  config_set keep = {0};
  char *marks = NULL;
  set_add(&keep, "{}");
  /* One read transaction, so a trial finishing meanwhile cannot split the choice of the
   * configurations from their rows and steps. */
  int rc = store_run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc) rc = fastest_configs(s, sweep_id, full_steps, fastest, &keep, err);
  if (!rc) rc = confirmed_and_repeated(s, sweep_id, full_steps, &keep, err);
  set_seal(&keep);
  if (!rc) rc = kept_rows(s, sweep_id, &keep, out, n, err);
  if (!rc) {
    marks = xcalloc((size_t)*n + 1, 1);
    if (want) want(*out, *n, marks, ud);
    for (int i = 0; i < *n && !rc; i++)
      if (marks[i]) rc = trial_steps_of(s, &(*out)[i], err);
  }
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "ending a read", err);
  free(marks);
  set_free(&keep);
  if (rc) {
    store_tx_rollback(s);
    record_free(*out, *n);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

/* ---- partial loads: what minimize and resume read instead of every trial ---- */

/* Ends a failed read transaction and drops its records. */
static int load_failed(store *s, int rc, trial_record **out, int *n) {
  store_tx_rollback(s);
  record_free(*out, *n);
  *out = NULL;
  *n = 0;
  return rc;
}

int store_trials_load_role(store *s, int64_t sweep_id, trial_role role, trial_record **out, int *n,
                           char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  *n = 0;
  int rc = store_stmt_get(s, ST_TRIALS_ROLE, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id) |
      store_bind_text(st, ":role", record_role_name(role)))
    return store_bind_fail(s, st, err);
  rc = trial_rows_of(s, st, NULL, out, n, err);
  if (rc) record_free(*out, *n), *out = NULL, *n = 0;
  return rc;
}

int store_trials_running(store *s, int64_t sweep_id, trial_record **out, int *n, int *next_number,
                         char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  *n = 0;
  *next_number = 0;
  int rc = store_run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc) rc = store_stmt_get(s, ST_TRIALS_NEXT, &st, err);
  if (!rc && store_bind_int(st, ":sweep_id", sweep_id)) rc = store_bind_fail(s, st, err);
  if (!rc) {
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) *next_number = sqlite3_column_int(st, 0);
    rc = r == SQLITE_ROW ? 0 : store_db_fail(s, err, "reading the next trial number");
    store_stmt_done(st);
  }
  if (!rc) rc = store_stmt_get(s, ST_TRIALS_RUNNING, &st, err);
  if (!rc && store_bind_int(st, ":sweep_id", sweep_id)) rc = store_bind_fail(s, st, err);
  if (!rc) rc = trial_rows_of(s, st, NULL, out, n, err);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "ending a read", err);
  return rc ? load_failed(s, rc, out, n) : 0;
}

int store_trials_load_configs(store *s, int64_t sweep_id, const char *const *configs, int n_configs,
                              trial_record **out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  *n = 0;
  config_set keep = {0};
  for (int i = 0; i < n_configs; i++) set_add(&keep, configs[i]);
  set_seal(&keep);
  /* One read transaction: the rows and their steps of the same moment. */
  int rc = store_run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc) rc = store_stmt_get(s, ST_TRIALS_LOAD, &st, err);
  if (!rc && store_bind_int(st, ":sweep_id", sweep_id)) rc = store_bind_fail(s, st, err);
  if (!rc && keep.n == 0) store_stmt_done(st);
  if (!rc && keep.n > 0) rc = trial_rows_of(s, st, &keep, out, n, err);
  for (int i = 0; i < *n && !rc; i++) rc = trial_steps_of(s, &(*out)[i], err);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "ending a read", err);
  set_free(&keep);
  return rc ? load_failed(s, rc, out, n) : 0;
}

/* ---- one trial at a time: resume's walk ---- */

/* The record of ST's row (ST_TRIALS_LOAD's columns, then ST_TRIALS_COUNTED's step count),
 * its strings the statement's. */
static void row_record(sqlite3_stmt *st, int counted, trial_record *t) {
  memset(t, 0, sizeof *t);
  t->id = sqlite3_column_int64(st, 0);
  t->number = sqlite3_column_int(st, 1);
  t->role = (trial_role)col_enum(st, 2, record_role_from_name, ROLE_SEARCH);
  t->status = (outcome)col_enum(st, 3, outcome_from_name, OUTCOME_CRASH);
  t->config_json = (const char *)sqlite3_column_text(st, 4);
  t->value = col_real(st, 5);
  t->steps_budget = sqlite3_column_int(st, 6);
  t->pid = sqlite3_column_int(st, 7);
  if (counted) t->n_steps = sqlite3_column_int(st, 8);
}

/* The step rows of trial ID from STEPS (ST_STEPS_LOAD, positioned: *HAVE says it holds a
 * row) into *BUF: steps arrive ordered like the trials, so one walk of both assigns them. */
static int steps_of(sqlite3_stmt *steps, int *have, int64_t id, double **buf, int *cap, int *n) {
  *n = 0;
  while (*have == SQLITE_ROW && sqlite3_column_int64(steps, 0) == id) {
    if (*n == *cap) *buf = xrealloc(*buf, sizeof(double) * (size_t)(*cap = *cap ? *cap * 2 : 64));
    (*buf)[(*n)++] = sqlite3_column_double(steps, 1);
    *have = sqlite3_step(steps);
  }
  return *have == SQLITE_ROW || *have == SQLITE_DONE ? 0 : -1;
}

int store_trials_each(store *s, int64_t sweep_id, store_steps_read read, store_walk_fn each,
                      void *ud, char **err) {
  sqlite3_stmt *st = NULL, *steps = NULL;
  double *buf = NULL;
  int cap = 0, have = SQLITE_DONE;
  int rc = store_run_cached(s, ST_BEGIN_READ, "starting a read", err);
  if (!rc)
    rc =
        store_stmt_get(s, read == STORE_STEPS_COUNT ? ST_TRIALS_COUNTED : ST_TRIALS_LOAD, &st, err);
  if (!rc && store_bind_int(st, ":sweep_id", sweep_id)) rc = store_bind_fail(s, st, err);
  if (!rc && read == STORE_STEPS_ALL) {
    rc = store_stmt_get(s, ST_STEPS_LOAD, &steps, err);
    if (!rc && store_bind_int(steps, ":sweep_id", sweep_id)) rc = store_bind_fail(s, steps, err);
    if (!rc) have = sqlite3_step(steps);
  }
  int r = SQLITE_DONE;
  while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
    trial_record t;
    row_record(st, read == STORE_STEPS_COUNT, &t);
    if (steps) {
      /* rows of trials before this one (none: both walk the sweep in number order) */
      while (have == SQLITE_ROW && sqlite3_column_int64(steps, 0) != t.id)
        have = sqlite3_step(steps);
      if (steps_of(steps, &have, t.id, &buf, &cap, &t.n_steps) != 0) {
        rc = store_db_fail(s, err, "loading step times");
        break;
      }
      t.steps = buf;
    }
    rc = each(ud, &t, err);
  }
  if (!rc && r != SQLITE_DONE) rc = store_db_fail(s, err, "loading trials");
  if (st) store_stmt_done(st);
  if (steps) store_stmt_done(steps);
  free(buf);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "ending a read", err);
  if (rc) store_tx_rollback(s);
  return rc;
}

int store_rerun_done(store *s, int64_t sweep_id, char ***out, int *n, char **err) {
  sqlite3_stmt *st = NULL;
  *out = NULL;
  *n = 0;
  int rc = store_stmt_get(s, ST_RERUN_DONE, &st, err), cap = 0;
  if (rc) return rc;
  if (store_bind_int(st, ":sweep_id", sweep_id)) return store_bind_fail(s, st, err);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) *out = xrealloc(*out, sizeof **out * (size_t)(cap = cap * 2 + 8));
    (*out)[(*n)++] = store_col_strdup(st, 0);
  }
  rc = rc == SQLITE_DONE ? 0 : store_db_fail(s, err, "reading the finished re-runs");
  store_stmt_done(st);
  return rc;
}

int store_trial_steps(store *s, int64_t trial_id, double **out, int *n, char **err) {
  trial_record t = {.id = trial_id};
  int rc = trial_steps_of(s, &t, err);
  *out = (double *)t.steps;
  *n = t.n_steps;
  if (rc) {
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return rc;
}

/* ---- Slurm steps (schema 8): what resume needs to cancel a dead orchestrator's steps ---- */

int store_trial_set_slurm(store *s, int64_t sweep_id, int number, int64_t job, int step,
                          const char *node, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_TRIAL_SLURM, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":job", job) | store_bind_int(st, ":step", step) |
      store_bind_text(st, ":node", node) | store_bind_int(st, ":sweep", sweep_id) |
      store_bind_int(st, ":number", number))
    return store_bind_fail(s, st, err);
  return store_step_done(s, st, "recording a trial's Slurm step", err);
}

int store_trial_slurm(store *s, int64_t sweep_id, int number, int64_t *job, int *step, char **err) {
  sqlite3_stmt *st = NULL;
  *job = 0;
  *step = -1;
  int rc = store_stmt_get(s, ST_TRIAL_SLURM_GET, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":sweep", sweep_id) | store_bind_int(st, ":number", number))
    return store_bind_fail(s, st, err);
  int r = sqlite3_step(st);
  if (r == SQLITE_ROW) {
    *job = sqlite3_column_int64(st, 0);
    *step = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
  }
  rc = r == SQLITE_ROW || r == SQLITE_DONE ? 0
                                           : store_db_fail(s, err, "loading a trial's Slurm step");
  store_stmt_done(st);
  return rc;
}

int store_sweep_slurm_job(store *s, int64_t sweep_id, int64_t *job, char **err) {
  sqlite3_stmt *st = NULL;
  *job = 0;
  int rc = store_stmt_get(s, ST_SWEEP_SLURM_JOB, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":sweep", sweep_id)) return store_bind_fail(s, st, err);
  int r = sqlite3_step(st);
  if (r == SQLITE_ROW) *job = sqlite3_column_int64(st, 0);
  rc = r == SQLITE_ROW || r == SQLITE_DONE ? 0
                                           : store_db_fail(s, err, "loading a sweep's Slurm job");
  store_stmt_done(st);
  return rc;
}
