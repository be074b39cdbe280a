/* The results database: every SQL statement flagtune runs lives here or in the store/ SQL files.
 * WAL mode, busy timeout, migrations by PRAGMA user_version, prepared statements cached,
 * short BEGIN IMMEDIATE transactions. Never calls up into other modules. */
#ifndef FLAGTUNE_STORE_H
#define FLAGTUNE_STORE_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "classify.h"
#include "record.h"

typedef struct store store;

/* STORE_READONLY: read only; STORE_MUST_EXIST: read and write an existing file (resume: a
 * mistyped --db must not leave a new, empty database behind). */
enum { STORE_READONLY = 1, STORE_MUST_EXIST = 2 };

/* Opens (creating when absent, unless STORE_READONLY or STORE_MUST_EXIST) and migrates the
 * database at PATH. Errors: FT_EINPUT for what the user can fix about PATH (a database newer
 * than this flagtune, a read-only or must-exist open of a missing file, a missing or
 * read-only directory, a file that is not a flagtune database); FT_ESTORE otherwise. */
int store_open(const char *path, int flags, store **out, char **err);
/* Finalizes every cached statement and closes the connection. Returns 0, or FT_ESTORE when
 * SQLite refused to close (a statement was left unfinalized: a bug). S may be NULL. */
int store_close(store *s);
/* How a write connection makes its commits durable. STORE_SYNC_DURABLE (what store_open
 * sets): a trial's finish, a sweep's creation and status and the migrations are made durable
 * before the commit returns: committed with synchronous=NORMAL, then a full checkpoint syncs
 * the -wal, copies it into the database file and syncs that (when a reader holds the
 * checkpoint back, the -wal alone is synced), so that a lost -wal cannot take them along; the
 * other commits (a trial's start, its running steps) reach the disk with the next durable
 * one. The others exist for tests/bench/bench_durability.sh, which measures what this costs:
 * STORE_SYNC_FULL (every commit synchronous=FULL, no checkpoint of its own),
 * STORE_SYNC_NORMAL (SQLite's WAL default: a power loss may roll the last commits back). */
typedef enum { STORE_SYNC_DURABLE, STORE_SYNC_FULL, STORE_SYNC_NORMAL } store_sync;
int store_set_sync(store *s, store_sync mode, char **err);
/* Group commit (store/store_durable.c), for a caller with a loop that can wait: turns it on
 * for S (a write connection under STORE_SYNC_DURABLE; otherwise nothing changes and *FD is
 * -1) and sets *FD to a descriptor (an eventfd; S owns it) that becomes readable whenever
 * trials became durable or the worker failed. From then on store_trial_finish returns once
 * the finish is committed (synchronous=NORMAL) and hands it to a worker thread with its own
 * connection (started at the first finish), which checkpoints off the caller's path; the
 * finish is durable, in the database file itself, once store_durable_reached says its
 * ticket (store_durable_ticket) is. The other durable commits (a sweep's creation and
 * status, migrations) stay synchronous, after the worker is drained. FT_ESYS when no
 * descriptor can be made. */
int store_durable_async(store *s, int *fd, char **err);
/* The ticket of the last store_trial_finish: durable once store_durable_reached's *DONE is at
 * least this; 0 when it was made durable before it returned. */
uint64_t store_durable_ticket(const store *s);
/* Reads the descriptor empty and sets *DONE to the highest durable ticket. FT_ESTORE (ERR
 * says why, and store_was_full whether it was a full disk) once the worker failed: the tickets
 * above *DONE are not durable, and no later finish is stored. */
int store_durable_reached(store *s, uint64_t *done, char **err);
/* Waits until every ticket is durable (or the worker failed), then stops the worker thread
 * (a later finish starts it again): what a process that forks or ends does first. *DONE (may
 * be NULL) and the return as store_durable_reached's. Nothing to do without group commit. */
int store_durable_stop(store *s, uint64_t *done, char **err);
/* How many checkpoints S's worker has run (one covers every finish that gathered for it); 0
 * without group commit. */
uint64_t store_durable_rounds(store *s);
/* Bytes SQLite holds now in this process (page caches, statements, schema): sqlite3_memory_used. */
int64_t store_memory_used(void);

/* ---- sweeps ---- */

typedef struct {
  const char *name, *model, *hardware;
  const char *experiment_path, *experiment_text, *experiment_hash;
  const char *strategy; /* e.g. "random", "tpe{startup=10}" */
  int64_t seed;
  int budget_trials;
  double budget_hours; /* 0: none */
  int budget_steps;
  int parallel;
  const char *host;         /* machine running the orchestrator */
  const char *options_json; /* command-line overrides, replayed by resume */
  const char *software;     /* "jax 0.4.31, jaxlib 0.4.31", NULL when unknown */
  const char *jaxlib;       /* the jaxlib version alone */
  const char *space_digest; /* the keys' identity (lua/space.lua, Space:digest); may be NULL */
} store_sweep_new;

/* Creates a sweep with status 'running' and claims it for this process (store_sweep_claim),
 * in one transaction. Budgets of 0 mean none. */
int store_sweep_create(store *s, const store_sweep_new *n, int64_t *id, char **err);

/* Makes this process the sweep's one owner (schema 6): an exclusive flock on the file
 * "<database>.sweep-<id>.lock" (the kernel drops it when the holder dies), then, in one
 * write transaction, the row's status 'running', pid, host, pid_start (/proc/PID/stat
 * field 22) and claimed_at. The lock is held until store_close. FT_EINPUT naming the holder
 * (pid, host, since) when another process holds the lock, when the row says the sweep runs
 * on another host (a lock there cannot be seen from here; FORCE takes it over), or when a
 * live process with the recorded pid and start time holds no lock (FORCE takes it over).
 * A recorded pid now used by another process (another start time) holds nothing. */
int store_sweep_claim(store *s, int64_t id, int force, char **err);

/* Whether the orchestrator a `running` sweep's row names (HOST, PID, PID_START: /proc/PID/stat
 * field 22, 0 when unknown) is known to be gone: it ran on this machine and no process with
 * that pid and start time lives now. 0 when it lives, or ran on another machine (not visible
 * from here). Reads no database: for the listings, which mark such a sweep `died`. */
int store_holder_gone(const char *host, int pid, long long pid_start);

/* Records where `run` ran (absolute directory) and its resolved command (a JSON array). */
int store_sweep_set_place(store *s, int64_t id, const char *workdir, const char *command_json,
                          char **err);

/* Records a budget raised by `resume --trials N` and the options a later resume replays. */
int store_sweep_set_budget(store *s, int64_t id, int budget_trials, const char *options_json,
                           char **err);

/* Whether the last failure was a full disk (or another write I/O error): the sweep stops
 * resumable, not failed. */
int store_was_full(const store *s);
/* Whether the last write failure leaves the sweep resumable (a full disk, or a -wal or -shm
 * changed under it once its contents were saved into the database file). */
int store_fault_resumable(const store *s);

/* Sets status (running, done, interrupted, failed) and the error text (may be NULL);
 * sets finished_at unless the status is running (then clears it and records PID as the
 * orchestrator's process id). */
int store_sweep_set_status(store *s, int64_t id, const char *status, const char *error, int pid,
                           char **err);

typedef struct {
  int64_t id;
  /* Owned; NULL where the column is NULL (name, model, hardware, status never are). */
  char *name, *model, *hardware, *experiment_path, *experiment_text, *strategy, *status;
  char *options_json;
  int64_t seed;
  int budget_trials, budget_steps, parallel;
  double budget_hours;
  int pid;                                                  /* orchestrator pid while running */
  char *host, *claimed_at, *workdir, *command_json, *error; /* owned; NULL when unset */
  long long pid_start;
  char *space_digest; /* owned; NULL for a sweep created before schema 19 */
} store_sweep;

/* Replaces the sweep's hardware key (a Slurm sweep's compute node, known once its allocation
 * exists). */
int store_sweep_set_hardware(store *s, int64_t id, const char *hardware, char **err);

/* Sets the sweep's space_digest NULL: a flagtune whose space has another digest resumes it, so
 * its stored configurations are no longer all the keys of one space (a later resume decodes
 * them). */
int store_sweep_forget_space_digest(store *s, int64_t id, char **err);

/* Finds a sweep by id ("12") or unique name. FT_EINPUT with a clear message when there
 * is none or the name is ambiguous (listing the ids). */
int store_sweep_get(store *s, const char *ref, store_sweep *out, char **err);
void store_sweep_clear(store_sweep *sw);

/* ---- trials ---- */

typedef struct {
  int64_t sweep_id;
  int number;               /* 0 is the baseline */
  trial_role role;          /* trial 0 is stored as the baseline whatever this says */
  const char *config_json;  /* canonical JSON of the searched values ("{}" for the baseline) */
  const char *label;        /* short human form */
  const char *xla_flags;    /* exact XLA_FLAGS given to the child (NULL if unset) */
  const char *tpu_args;     /* exact LIBTPU_INIT_ARGS (NULL if unset) */
  const char *env_json;     /* variables flagtune set: {"NAME": "value"} */
  const char *command_json; /* the argv as a JSON array */
  int steps_budget;
  int slot;
  const char *log_path;
  int rerun_of; /* trial number this re-runs, 0 for none */
  int pid;      /* the pid its start will most likely give it, written with the row; 0: none */
} store_trial_new;

/* Inserts a trial with status 'running' and started_at now. NULL config/env mean "{}"; a pid
 * of 0 is NULL. */
int store_trial_begin(store *s, const store_trial_new *t, int64_t *trial_id, char **err);
int store_trial_set_pid(store *s, int64_t trial_id, int pid, char **err);
/* The Slurm job, step and node trial NUMBER of sweep SWEEP_ID runs as (schema 8). */
int store_trial_set_slurm(store *s, int64_t sweep_id, int number, int64_t job, int step,
                          const char *node, char **err);
/* Trial NUMBER's stored job and step; *job = 0 and *step = -1 when it has none. */
int store_trial_slurm(store *s, int64_t sweep_id, int number, int64_t *job, int *step, char **err);
/* The job of the sweep's latest trial that ran under Slurm (its allocation); 0: none. */
int store_sweep_slurm_job(store *s, int64_t sweep_id, int64_t *job, char **err);

typedef struct {
  outcome status;
  double value; /* reduced step time in ms, NaN for none */
  int has_exit; /* exit_code is meaningful */
  int64_t exit_code;
  int term_signal; /* 0 for none */
  double duration_s;
  const char *error;    /* excerpt (last stderr lines) or reason; may be NULL */
  const double *losses; /* metric.check's losses in the order printed (schema 7) */
  int n_losses;
  double first_step_ms; /* measured run start to first step line; NaN: none (schema 16) */
  double step_ms;       /* steady step time, wall ms (cost_step_ms); NaN: unknown (schema 16) */
} store_trial_end;

/* Steps FIRST+1 .. FIRST+N of a running trial (MS[0..N)), stored as they arrive so that
 * `query` and `show` see a running trial, with the row's n_steps, in one transaction (a
 * batch: one per flush, never one per step). store_trial_finish later replaces them all. */
int store_trial_add_steps(store *s, int64_t trial_id, int first, const double *ms, int n,
                          char **err);
/* Finishes a trial and stores all its step times (numbered from 1), in one transaction.
 * The value is stored only when the status is "ok" (the schema's rule). */
int store_trial_finish(store *s, int64_t trial_id, const store_trial_end *e, const double *steps_ms,
                       int n_steps, char **err);

/* The losses a trial stored (metric.check), in order: *out (caller frees) holds *n of them,
 * none when it stored none. */
int store_trial_losses(store *s, int64_t trial_id, double **out, int *n, char **err);

/* Changes every trial of SWEEP_ID in status FROM to status TO (e.g. running -> lost);
 * *n receives the count (may be NULL). */
int store_trials_mark(store *s, int64_t sweep_id, outcome from, outcome to, int *n, char **err);

/* All trials of a sweep, ordered by number, with their step times. Free with record_free. */
int store_trials_load(store *s, int64_t sweep_id, trial_record **out, int *n, char **err);
/* store_trials_load with the step times of only the trials WANT marks: it is called once
 * with every row loaded (steps not yet) and sets want[i] to 1 for each trial whose steps it
 * needs (want starts zeroed; WANT NULL: none). The others get n_steps 0: a sweep of 10,000
 * trials of 1,000 steps holds 80 MB of step times, what its end needs is a few trials'. */
typedef void (*store_want_steps)(const trial_record *t, int n, char *want, void *ud);
int store_trials_load_some(store *s, int64_t sweep_id, store_want_steps want, void *ud,
                           trial_record **out, int *n, char **err);
/* The trials of a sweep that its confirmation can read (src/sweep/confirm.h), ordered by number,
 * and no others: every trial of the baseline ("{}"), of the first FASTEST distinct
 * configurations among the ok search trials run with FULL_STEPS (0: any) in (value, number)
 * order, of every configuration with a confirm trial, and of every configuration with two or
 * more ok full-step trials of a positive value (the noise's); and so every confirm trial.
 * Each set is read off an index (the fastest off (sweep_id, status, value), the others off
 * the configuration's indexes of schema 18) and each kept configuration's trials by a seek,
 * so neither time nor memory goes with the sweep's other rows. Step times as store_trials_load_some
 * (WANT), each read by the trial's key. confirm_plan and confirm_winner decide on these
 * exactly as on every trial when FASTEST is confirm_fastest_needed(top). */
int store_trials_load_confirm(store *s, int64_t sweep_id, int full_steps, int fastest,
                              store_want_steps want, void *ud, trial_record **out, int *n,
                              char **err);

/* Partial loads, so that a command on a 100,000-trial sweep holds what it uses (records as
 * store_trials_load's; free with record_free):
 * - store_trials_load_role: the trials of ROLE (e.g. ROLE_MINIMIZE), by number, without step
 *   times;
 * - store_trials_running: the trials recorded running (a dead orchestrator's), by number,
 *   without step times, and *next_number, the number the sweep's next trial gets (one more
 *   than the highest stored; 0 for none);
 * - store_trials_load_configs: every trial whose configuration is one of the N_CONFIGS
 *   CONFIGS (canonical JSON, "{}" the baseline), by number, with their step times; the other
 *   rows are read and dropped, never copied. */
int store_trials_load_role(store *s, int64_t sweep_id, trial_role role, trial_record **out, int *n,
                           char **err);
int store_trials_running(store *s, int64_t sweep_id, trial_record **out, int *n, int *next_number,
                         char **err);
int store_trials_load_configs(store *s, int64_t sweep_id, const char *const *configs, int n_configs,
                              trial_record **out, int *n, char **err);

/* A sweep's trials one at a time, so that a walk over a 60,000-trial sweep holds one trial:
 * EACH(UD, T, ERR) for every trial of SWEEP_ID in number order, in one read transaction,
 * with (READ) no step times, only their count (T->n_steps, T->steps NULL), or all of them.
 * T's strings and steps are the store's, valid during the call only. A non-zero return of
 * EACH ends the walk and is returned (EACH sets *ERR). */
typedef enum { STORE_STEPS_NONE, STORE_STEPS_COUNT, STORE_STEPS_ALL } store_steps_read;
typedef int (*store_walk_fn)(void *ud, const trial_record *t, char **err);
int store_trials_each(store *s, int64_t sweep_id, store_steps_read read, store_walk_fn each,
                      void *ud, char **err);
/* The configurations of SWEEP_ID's finished trials that an unfinished trial (running,
 * interrupted, lost) also holds: *N new strings in *OUT (free each, and the array). */
int store_rerun_done(store *s, int64_t sweep_id, char ***out, int *n, char **err);
/* The step times of trial TRIAL_ID, in step order: a new array in *OUT (NULL for none). */
int store_trial_steps(store *s, int64_t trial_id, double **out, int *n, char **err);

/* Records a trial's manual-PGLE profile phase (schema 5): the profile's path, ok or the
 * outcome that ended the trial, and the phase's duration. */
int store_trial_set_profile(store *s, int64_t trial_id, const char *path, outcome status,
                            double duration_s, char **err);

/* The history a warm start replays: finished, non-baseline trials of the other sweeps of
 * (MODEL, HARDWARE), at most STORE_WARM_BEST of them ok (the fastest, by value) and at most
 * STORE_WARM_RECENT others (failed, pruned, ...: the most recently stored), in (sweep, number)
 * order, without step times, numbered -1. Bounded so that a database of 100,000 earlier trials
 * costs a new sweep what 2,000 do. Free with record_free. */
enum { STORE_WARM_BEST = 1000, STORE_WARM_RECENT = 1000 };
int store_warm_trials(store *s, const char *model, const char *hardware, int64_t sweep_id,
                      trial_record **out, int *n, char **err);

/* The winner a confirmation phase chose: a representative trial of the winning
 * configuration and the pooled values. NaN values are stored as NULL. */
typedef struct {
  int64_t trial_id;
  double value;     /* pooled (median of its ok trials' values) */
  double baseline;  /* pooled baseline */
  int n_trials;     /* ok trials pooled for the winner */
  double lo, hi;    /* 95% interval of the speedup */
  const char *kind; /* "search", "recipe" or "baseline" (schema 16); NULL: "search" */
} store_winner;

int store_sweep_set_winner(store *s, int64_t sweep_id, const store_winner *w, char **err);

/* ---- listings for the CLI and reports (cJSON, caller deletes) ----
 * Column names are the keys. config, env, command and options_json are strings holding
 * JSON text, as stored (parse them to use them); a missing number (no baseline, no ok
 * trial) is null. */

/* Array of sweeps by id: id, name, model, hardware, status, strategy, started_at, finished_at,
 * trials, ok, best_ms, baseline_ms, speedup, best_trial, and the count per other status
 * (running, oom, invalid, timeout, crash, no_metric, pruned, interrupted, lost). */
int store_list_sweeps(store *s, cJSON **out, char **err);

/* Object: the sweep's columns, n_trials, best_trial, best_ms, baseline_ms, speedup,
 * "counts" {status: n} (statuses with no trial are absent), "trials" [ {id, number, role,
 * status, value, speedup, steps_budget, n_steps, duration_s, exit_code, signal, label,
 * config, xla_flags, tpu_args, env, command, error, log_path, started_at, finished_at, slot,
 * rerun_of} ] by number, "best" (the best ok trial object with a "steps" array, or null),
 * "baseline" (trial 0 whatever its status, with "steps", or null). FT_EINPUT for no sweep.
 * The trial table is paged, so that a read of a 100,000-trial sweep costs
 * what it prints: LIMIT < 0 (STORE_SHOW_ALL) lists every trial by number; LIMIT > 0 lists
 * every trial by number when the sweep has at most LIMIT, else its LIMIT fastest ok trials by
 * value; LIMIT 0 lists none (export); STORE_SHOW_SUMMARY lists none and adds "log_failures"
 * (how many trials' logs could not be written: a scan of the sweep's errors, for the
 * end-of-run summary). "trials_listed" says which: "all", "fastest" or "none". */
#define STORE_SHOW_ALL (-1)
#define STORE_SHOW_SUMMARY (-2)
int store_show_sweep_page(store *s, int64_t sweep_id, int limit, cJSON **out, char **err);

/* store_show_sweep_page without the "steps" arrays of "best" and "baseline": for what prints
 * no unconfirmed run's interval (text `show`, `export`), since reading a 20,000-step trial's
 * times into cJSON was most of such a read. */
int store_show_sweep_brief(store *s, int64_t sweep_id, int limit, cJSON **out, char **err);

/* Calls FN(row, UD) for every trial of the sweep by number, one row at a time (the trial
 * objects of store_show_sweep_page's "trials"), so that listing a 100,000-trial sweep holds one
 * row: FN may change ROW; it is deleted after FN returns. FN returning nonzero stops the walk
 * (that value is returned). 0, or FT_EDB with *ERR. */
typedef int (*store_trial_fn)(cJSON *row, void *ud);
int store_each_trial(store *s, int64_t sweep_id, store_trial_fn fn, void *ud, char **err);

/* What show's trial table prints of one trial (listing_trial_line): numbers NaN and strings
 * NULL where the column is NULL; the strings are valid until the callback returns. */
typedef struct {
  double number, value, n_steps, duration_s, first_step_ms;
  const char *role, *status, *label, *error;
} store_trial_line;
typedef int (*store_trial_line_fn)(const store_trial_line *t, void *ud);
/* store_each_trial for show --all's text: FN(line, UD) for every trial of the sweep by
 * number, read into one reused line (no allocation per row). FN returning nonzero stops the
 * walk (that value is returned). 0, or FT_EDB with *ERR. */
int store_each_trial_line(store *s, int64_t sweep_id, store_trial_line_fn fn, void *ud, char **err);

/* Array: best ok trial per (model, hardware), optionally filtered (NULL = any): model,
 * hardware, sweep_id, sweep_name, strategy, trial (its number), trial_id, role, value,
 * baseline_ms, speedup, n_steps, label, xla_flags, tpu_args, env, config, finished_at,
 * baseline_id, plus "steps" and "baseline_steps" arrays ([] when there are none). */
int store_best(store *s, const char *model, const char *hardware, cJSON **out, char **err);
/* store_best without the step arrays (`best` as text prints none: reading a 20,000-step
 * best and baseline into cJSON was most of its time). */
int store_best_brief(store *s, const char *model, const char *hardware, cJSON **out, char **err);

/* Runs one read-only statement on S and hands its result to FN as it comes: first once with
 * ROW NULL (COLUMNS, the array of names, known), then once per row (an array of values:
 * integers and reals as numbers, text as strings, blobs as hex strings, NULL as null). FN
 * may change or take apart ROW, which is freed after it, but keeps nothing of either;
 * non-zero from FN stops the query (its reader went away),
 * which is not an error. Nothing of the result is held, so its size has no limit.
 * FT_EINPUT, "query is read-only: ...", for anything that would write or change the
 * connection (INSERT, ATTACH, BEGIN, PRAGMA x = y, DROP TABLE, ...); FT_EINPUT too for more
 * than one statement, an empty query or an SQL error. */
typedef int (*store_query_row)(const cJSON *columns, cJSON *row, void *ud);
int store_query(store *s, const char *sql, store_query_row fn, void *ud, char **err);
/* A query also runs under limits: STORE_QUERY_SECONDS of SQLite's time (an endless
 * recursive CTE; the time FN takes does not count), STORE_QUERY_BYTES of memory in SQLite,
 * a quarter of that for one value (zeroblob(1e9)); past one it fails with FT_EINPUT,
 * "query: stopped at the time limit of 10 s" and the like, after the rows handed over so
 * far. fts3_tokenizer() is refused. */
#define STORE_QUERY_SECONDS 10.0
#define STORE_QUERY_BYTES ((int64_t)256 << 20)

/* ---- imported jaxlib flag lists (store/0002_flags.sql) ---- */

typedef struct {
  const char *name;          /* without dashes */
  const char *type;          /* bool, int32, int64, float, string */
  const char *default_value; /* may be NULL */
  const char *description;   /* may be NULL */
} store_flag_row;

/* Replaces the flag list of JAXLIB with ROWS (N of them) in one transaction. */
int store_flags_import(store *s, const char *jaxlib, const store_flag_row *rows, int n, char **err);

/* Array of {name, type, default_value, description, imported_at} of JAXLIB's list, by name;
 * empty when nothing was imported for it. Caller deletes. */
int store_flags_list(store *s, const char *jaxlib, cJSON **out, char **err);

/* Array of {name}: every flag any imported list holds. Caller deletes. */
int store_flags_names(store *s, cJSON **out, char **err);

/* ---- what `flagtune report` reads beyond the listing (store/store_report.c) ---- */

/* One trial as store_report_each passes it: no steps, no flags. The strings are valid during
 * the call only; VALUE is NaN and a text NULL where the column is NULL, STEPS_BUDGET 0. */
typedef struct {
  int64_t id;
  int number;
  const char *role, *status, *config; /* config: the canonical JSON text as stored */
  double value;
  int steps_budget;
  const char *started_at, *finished_at;
  const char *error; /* the first line of its error (a pruned trial's reason); the runs only */
} store_report_row;
typedef int (*store_report_fn)(const store_report_row *row, void *ud);
/* Calls FN for every trial of the sweep by number, one row at a time, holding none: a report
 * aggregates a 100,000-trial sweep in one pass. FN returning nonzero stops the walk (that value
 * is returned). 0, or FT_ESTORE with *ERR. */
int store_report_each(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err);
/* Trial TRIAL_ID (its table id) as an object: id, number, role, status, value, steps_budget,
 * label, config, xla_flags, tpu_args, env (JSON columns as stored text); null when none. */
int store_report_trial(store *s, int64_t trial_id, cJSON **out, char **err);
/* Trial TRIAL_ID's step times in step order: *OUT (caller frees) holds *N of them. */
int store_report_steps(store *s, int64_t trial_id, double **out, int *n, char **err);

/* Schema 13's report aggregates (store/0013_report.sql) and the bounded reads beside them, each
 * passing store_report_rows to FN as store_report_each does (columns a read has not: NULL). */
/* One row: STEPS_BUDGET the largest step budget of any trial, STARTED_AT the earliest start. */
int store_report_span(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err);
/* A row per step budget of ok search trials (STEPS_BUDGET; 0: none): NUMBER the largest trial
 * number, FINISHED_AT the latest finish among them. */
int store_report_tail(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err);
/* The best-so-far curves' candidates (a superset of their change points), still ok, by
 * number: id, number, role, status, value, steps_budget, finished_at. */
int store_report_curve(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err);
/* The ok trials of every configuration more than one ok trial ran whose fastest is no slower
 * than BEST (NaN: any), and of "{}" (the baseline's), by configuration then number: id,
 * number, role, status, config, value, steps_budget. */
int store_report_repeats(store *s, int64_t sweep_id, double best, store_report_fn fn, void *ud,
                         char **err);
/* The ok trials with a value of the configurations run once (not "{}", not a repeat), fastest
 * first (then by number), until FN returns STORE_REPORT_STOP (then 0): id, number, role,
 * status, config, value, steps_budget. */
#define STORE_REPORT_STOP (-1000)
int store_report_fastest(store *s, int64_t sweep_id, store_report_fn fn, void *ud, char **err);
/* The trials in runs of RUN consecutive numbers, one run every PERIOD (the numbers N with
 * N mod PERIOD < RUN), by number: id, number, role, status, config, value, steps_budget and
 * the first line of a failure's error (at most 300 bytes; NULL for ok and running). A
 * range read a run: the rows of consecutive trials share their pages. */
int store_report_runs(store *s, int64_t sweep_id, int period, int run, store_report_fn fn, void *ud,
                      char **err);
/* Sets the connection's page cache to PAGES pages (PRAGMA cache_size). For reads that visit
 * most pages once: SQLite's default cache (2 MiB) keeps every page read, each a page of new
 * memory. */
int store_report_cache(store *s, int pages, char **err);

#endif
