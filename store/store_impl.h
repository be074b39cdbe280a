/* The store's inside, shared by its files (src/store*.c) and by nothing else: the statement
 * table's ids, the connection struct, and the helpers every part uses (prepared statements
 * with named binds, errors naming the database, the write-side identity check). The store is
 * one module in several files: store.c (connection, migrations, statements, sweeps),
 * store_trial.c (trials and their steps), store_claim.c (one owner per sweep),
 * store_list.c (JSON listings, imported flag lists), store_query.c (the read-only guard for
 * user queries). */
#ifndef FLAGTUNE_STORE_IMPL_H
#define FLAGTUNE_STORE_IMPL_H

#include <sqlite3.h>
#include <sys/types.h>

#include "store.h"

/* busy_timeout covers ordinary contention; the retries cover a writer that holds the lock
 * longer than that (a checkpoint on a slow disk), so a night's results are not dropped. */
enum { BUSY_TIMEOUT_MS = 10000, BUSY_RETRIES = 4 };

/* How long a durable commit's checkpoint waits for a reader still on an older snapshot. */
enum { CKPT_WAIT_MS = 1000 };

/* The durability worker (store_durable.c): its thread, connection and descriptor. */
typedef struct store_worker store_worker;

/* The sweep's lock file is also a reserve of disk space beside the database: on a full disk
 * it is given back so that the sweep's last word (its status) can still be written. A few
 * WAL frames of 4 KiB pages need far less. */
enum { RESERVE_BYTES = 128 * 1024 };

/* clang-format off */
typedef enum {
  ST_BEGIN_WRITE, ST_BEGIN_READ, ST_COMMIT, ST_ROLLBACK,
  ST_SWEEP_CREATE, ST_SWEEP_STATUS, ST_SWEEP_EXISTS, ST_SWEEP_BY_NAME, ST_SWEEP_NAMES, ST_SWEEP_LOAD,
  ST_TRIAL_BEGIN, ST_TRIAL_PID, ST_TRIAL_FINISH, ST_STEPS_DELETE, ST_STEP_INSERT,
  ST_TRIAL_NSTEPS,
  ST_TRIALS_MARK, ST_TRIALS_LOAD, ST_STEPS_LOAD, ST_TRIAL_STEPS,
  ST_TRIALS_ROLE, ST_TRIALS_RUNNING, ST_TRIALS_NEXT, ST_TRIALS_COUNTED, ST_RERUN_DONE,
  ST_CONFIRM_FASTEST, ST_CONFIRM_CONFIRMED, ST_CONFIRM_REPEATED, ST_CONFIRM_OK_ROWS,
  ST_CONFIRM_OTHER_ROWS,
  ST_LIST_SWEEPS, ST_SHOW_SWEEP, ST_SHOW_COUNTS, ST_SHOW_TRIALS, ST_SHOW_TRIAL_LINES, ST_SHOW_TRIALS_FASTEST, ST_SHOW_LOG_FAILURES, ST_SHOW_COST, ST_SHOW_BEST, ST_SHOW_BASELINE,
  ST_BEST, ST_SWEEP_WINNER, ST_SWEEP_CI_SOURCE, ST_SWEEP_CI_SET, ST_WARM_TRIALS, ST_TRIAL_PROFILE, ST_TRIAL_LOSSES,
  ST_SWEEP_HOLDER, ST_SWEEP_CLAIM, ST_SWEEP_PLACE, ST_SWEEP_BUDGET,
  ST_TRIAL_SLURM, ST_TRIAL_SLURM_GET, ST_SWEEP_SLURM_JOB, ST_SWEEP_HARDWARE,
  ST_SWEEP_FORGET_DIGEST,
  ST_COUNT
} stmt_id;
/* clang-format on */

struct store {
  sqlite3 *db;
  char *path;
  char *abs; /* PATH made absolute: the identity check and the lock name survive a chdir */
  int readonly;
  int must_exist;       /* STORE_MUST_EXIST: a missing file is an error, never created */
  double query_seconds; /* store_query's limits: STORE_QUERY_SECONDS, STORE_QUERY_BYTES */
  int64_t query_bytes;
  dev_t dev; /* the database file's identity when opened: a write checks it still is */
  ino_t ino;
  dev_t wal_dev, shm_dev; /* the -wal's and the -shm's, likewise (0: not known) */
  ino_t wal_ino, shm_ino;
  int saved;   /* the -wal or -shm changed and what the WAL held went into the file: every
                  later commit is checkpointed in full (the -wal at the path is not ours) */
  int durable; /* the commit under way is durable: the wal hook checkpoints it in full */
  store_sync sync;
  store_worker *worker; /* group commit, once store_durable_async turned it on; NULL: none */
  uint64_t ticket;      /* the last trial finish's (store_durable_ticket) */
  int hook_rc;          /* the wal hook's failure (an SQLite code) for store_db_fail; 0: none */
  int claim_fd;         /* the lock file of the sweep this connection holds; -1: none */
  int full;             /* the last failure was "disk full" */
  int nospace;          /* ... and SQLite said so itself (SQLITE_FULL) */
  sqlite3_stmt *cache[ST_COUNT]; /* prepared on first use, finalized by store_close */
};

/* Statements (store.c): the cached statement ID, its reset, named binds and their errors. */
int store_bind_fail(store *s, sqlite3_stmt *st, char **err);
int store_bind_index(sqlite3_stmt *st, const char *name);
int store_bind_int(sqlite3_stmt *st, const char *name, int64_t v);
int store_bind_pos(sqlite3_stmt *st, const char *name, int64_t v);
int store_bind_real(sqlite3_stmt *st, const char *name, double v);
int store_bind_text(sqlite3_stmt *st, const char *name, const char *v);
int store_claim_in_tx(store *s, int64_t id, int force, char **err);
cJSON *store_col_json(sqlite3_stmt *st, int i);
char *store_col_strdup(sqlite3_stmt *st, int i);
int store_db_fail(store *s, char **err, const char *what);
/* Sets S's disk-full flags (store_was_full) from the SQLite code CODE of a failure. */
void store_note_fail(store *s, int code);
void store_durable(store *s, int on);
/* Syncs the file DB has open for OP: SQLITE_FCNTL_JOURNAL_POINTER (its -wal) or
 * SQLITE_FCNTL_FILE_POINTER (the database file). Returns an SQLite code. */
int store_sync_file(sqlite3 *db, int op);
/* Makes every commit of DB so far durable: a full checkpoint waiting WAIT_MS at most for
 * readers, and when one held it back, a sync of the -wal. Returns an SQLite code. */
int store_checkpoint_full(sqlite3 *db, int wait_ms);
/* Group commit (store_durable.c). Posts the commit just made to the worker (starting it at the
 * first post); *TICKET is its ticket. When the worker cannot start, makes the commit durable
 * here (*TICKET 0) and returns that checkpoint's SQLite code. */
int store_durable_post(store *s, uint64_t *ticket);
/* Asks a running worker for a checkpoint (a ticket nobody waits for); 0 when none runs. */
int store_durable_nudge(store *s);
/* FT_ESTORE with the worker's failure (S's disk-full flags set from it), 0 when none. */
int store_durable_failed(store *s, char **err);
/* Waits until every ticket posted is durable or the worker failed, and the worker is idle:
 * then nothing checkpoints but the main connection. *DONE (may be NULL): the highest durable
 * ticket. Returns store_durable_failed's answer. */
int store_durable_drain(store *s, uint64_t *done, char **err);
/* Stops the worker (store_durable_stop) and frees it. */
void store_durable_free(store *s);
int store_identity_check(store *s, char **err);
int store_run_cached(store *s, stmt_id id, const char *what, char **err);
int store_step_done(store *s, sqlite3_stmt *st, const char *what, char **err);
void store_stmt_done(sqlite3_stmt *st);
int store_stmt_get(store *s, stmt_id id, sqlite3_stmt **out, char **err);
/* The SQL of statement ID (what store_stmt_get prepares); NULL outside the table. The query
 * plan test reads every one. */
const char *store_stmt_text(stmt_id id);
/* The I-th of store_report.c's reads (0 <= I < STORE_REPORT_READS), for the plan test
 * (tests/unit/test_store_plan.c): they are prepared where they run, not in the table. */
enum { STORE_REPORT_READS = 14 };
const char *store_report_read(int i);
void store_tx_rollback(store *s);

/* Computes the sweep's best-versus-baseline 95 % interval (stats_speedup_ci over their steps
 * past the skip, seed STATS_DISPLAY_SEED, as listing.c does) and stores it with the two trial
 * ids (schema 11). Nothing to do without an ok best and baseline. */
int store_sweep_cache_interval(store *s, int64_t sweep_id, char **err);

#endif
