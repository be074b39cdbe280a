/* Durable commits: the checkpoints and syncs that put a commit into the database file on disk
 * (store.c's wal hook uses them for the synchronous ones), and group commit, the durability
 * worker. A thread with its own connection to the database file makes the trials' finishes
 * durable off the orchestrator's path: the orchestrator commits a finish with
 * synchronous=NORMAL (nothing synced yet) and posts its ticket; the worker lets finishes
 * gather for GATHER_MS, takes the highest ticket waiting and runs a passive checkpoint (it
 * never takes the write lock, so the next trial's start row does not wait: it syncs the -wal
 * and copies it into the database file), then syncs the database file; every commit made
 * before the checkpoint began is then in the file itself, on disk. One checkpoint covers every
 * ticket that arrived while it gathered or while the one before ran. A readable eventfd says that
 * tickets became durable, or that the worker failed. Owns the thread, its connection and that
 * descriptor; must not print, exit or call up; touches the main connection only through the helpers
 * above its worker. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "store_impl.h"

/* A complete checkpoint of a -wal this long (frames of one page: SQLite's auto-checkpoint
 * size) is followed by a restart checkpoint, so that the next commit starts the -wal again
 * from its beginning: with commits arriving faster than checkpoints end, no write ever finds
 * the -wal wholly copied, and it would otherwise grow for the whole sweep. It holds the write
 * lock while it waits for readers (CKPT_WAIT_MS at most), once every thousand frames. */
enum { WAL_RESTART_FRAMES = 1000 };

/* How long the worker lets finishes gather after the first one it sees before it checkpoints
 * (gather): one checkpoint then covers every finish of that time. At parallel 1 finishes come
 * one at a time, and each checkpoint costs its syncs, each a sleep and a wake-up, and a
 * wake-up of the loop; a line is printed this much later at most. */
enum { GATHER_MS = 10 };

struct store_worker {
  pthread_mutex_t mu;
  pthread_cond_t work; /* posted > durable, or quit */
  pthread_cond_t done; /* durable moved, the worker failed, or it went idle */
  pthread_t thread;
  int started; /* the thread runs */
  int quit;
  int hurry;        /* a drain waits: no gathering (gather) */
  int gathering;    /* the worker waits out GATHER_MS: a post need not wake it */
  int busy;         /* a checkpoint is under way */
  uint64_t rounds;  /* checkpoints run (store_durable_rounds) */
  sqlite3 *db;      /* the worker's connection (opened with the thread) */
  uint64_t posted;  /* the highest ticket posted */
  uint64_t durable; /* every ticket up to this one is durable */
  int fail_code;    /* the first failure (an SQLite code; 0: none): nothing more is durable */
  char *fail_msg;   /* its message */
  int efd;          /* readable when durable moved or the worker failed */
};

/* The disk-full flags (store_was_full) of a failure with SQLite code CODE. */
void store_note_fail(store *s, int code) {
  s->nospace = (code & 0xff) == SQLITE_FULL;
  s->full = s->nospace || code == SQLITE_IOERR_WRITE || code == SQLITE_IOERR_FSYNC ||
            code == SQLITE_IOERR_TRUNCATE;
}

/* Syncs the file DB has open for OP: SQLITE_FCNTL_JOURNAL_POINTER, the -wal (the
 * connection's own, even when the one at the path was deleted), or SQLITE_FCNTL_FILE_POINTER,
 * the database file. Returns an SQLite code. */
int store_sync_file(sqlite3 *db, int op) {
  sqlite3_file *f = NULL;
  if (sqlite3_file_control(db, "main", op, &f) != SQLITE_OK || !f || !f->pMethods)
    return SQLITE_IOERR_FSYNC;
  return f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
}

/* After a checkpoint that failed with CODE: its commits are still whole in the -wal. When the
 * failure was the database file's (a write or a truncate: a full disk), a sync of the -wal
 * makes them durable there, as after a checkpoint a reader held back. A failed sync is not
 * tried again (after a failed fsync the kernel may have dropped the pages, and a second one
 * can succeed): that failure stands. */
static int wal_fallback(sqlite3 *db, int code) {
  int file =
      (code & 0xff) == SQLITE_FULL || code == SQLITE_IOERR_WRITE || code == SQLITE_IOERR_TRUNCATE;
  return file && store_sync_file(db, SQLITE_FCNTL_JOURNAL_POINTER) == SQLITE_OK ? SQLITE_OK : code;
}

/* Makes every commit of DB so far durable: a full checkpoint (WAIT_MS for a reader still on
 * an older snapshot) syncs the -wal, copies it into the database file and syncs that (it holds
 * the write lock: nothing is committed while it copies, so SQLite syncs the file). A
 * checkpoint a reader held back (LOG > DONE, or SQLITE_BUSY) leaves the commits synced in
 * the -wal alone, as does one the database file refused (wal_fallback). Returns SQLITE_OK, or
 * the error that kept them off the disk. */
int store_checkpoint_full(sqlite3 *db, int wait_ms) {
  int log = -1, done = -1;
  sqlite3_busy_timeout(db, wait_ms);
  int rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_FULL, &log, &done);
  sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
  if (rc == SQLITE_OK && log == done && log >= 0) return SQLITE_OK; /* -1: not in WAL mode */
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) return wal_fallback(db, sqlite3_extended_errcode(db));
  return store_sync_file(db, SQLITE_FCNTL_JOURNAL_POINTER);
}

/* Makes every commit before now durable through DB: a passive checkpoint (it syncs the -wal,
 * copies it), then a sync of the database file. SQLite's passive checkpoint syncs the file
 * only when no commit arrived while it copied (it compares with the -wal's end after the
 * copy), which under a running sweep is most of the time: without the sync of its own, the
 * pages would be in the file for every reader but not yet on the disk. One a reader held back
 * is followed by a full one (store_checkpoint_full: it holds the write lock, so it syncs the
 * file; it waits CKPT_WAIT_MS for the reader, then syncs the -wal alone when still held
 * back). */
static int make_durable(sqlite3 *db) {
  int log = -1, done = -1;
  int rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &done);
  if (rc == SQLITE_OK && log == done && log >= 0) {
    rc = store_sync_file(db, SQLITE_FCNTL_FILE_POINTER);
    if (rc == SQLITE_OK && log >= WAL_RESTART_FRAMES) {
      sqlite3_busy_timeout(db, CKPT_WAIT_MS);
      sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_RESTART, NULL, NULL);
      sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    }
    return rc;
  }
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) return wal_fallback(db, sqlite3_extended_errcode(db));
  return store_checkpoint_full(db, CKPT_WAIT_MS);
}

static void wake(store_worker *w) {
  uint64_t one = 1;
  while (write(w->efd, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

/* Lets finishes gather for GATHER_MS after the first one seen, unless a drain waits or the
 * worker is to quit (either ends the wait at once). Called with the lock held. */
static void gather(store_worker *w) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_nsec += GATHER_MS * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  w->gathering = 1;
  while (!w->quit && !w->hurry && pthread_cond_timedwait(&w->work, &w->mu, &until) != ETIMEDOUT) {
  }
  w->gathering = 0;
}

static void *worker_main(void *arg) {
  store_worker *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->quit && (w->posted == w->durable || w->fail_code))
      pthread_cond_wait(&w->work, &w->mu);
    if (w->posted == w->durable || w->fail_code) break; /* quit, and nothing left to do */
    gather(w);
    uint64_t k = w->posted; /* posted after its commit: the checkpoint below covers it */
    w->busy = 1;
    w->rounds++;
    pthread_mutex_unlock(&w->mu);
    int rc = make_durable(w->db);
    pthread_mutex_lock(&w->mu);
    w->busy = 0;
    if (rc == SQLITE_OK) {
      w->durable = k;
    } else {
      w->fail_code = rc;
      w->fail_msg = xstrdup(sqlite3_errstr(rc));
    }
    pthread_cond_broadcast(&w->done);
    wake(w);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int store_durable_async(store *s, int *fd, char **err) {
  *fd = -1;
  if (s->readonly || s->sync != STORE_SYNC_DURABLE || !sqlite3_threadsafe()) return 0;
  if (s->worker) {
    *fd = s->worker->efd;
    return 0;
  }
  int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd < 0) return diag_set(err, FT_ESYS, "eventfd: %s", strerror(errno));
  store_worker *w = xcalloc(1, sizeof *w);
  pthread_mutex_init(&w->mu, NULL);
  pthread_condattr_t monotonic; /* gather's deadline: not moved by a change of the wall clock */
  pthread_condattr_init(&monotonic);
  pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
  pthread_cond_init(&w->work, &monotonic);
  pthread_condattr_destroy(&monotonic);
  pthread_cond_init(&w->done, NULL);
  w->efd = efd;
  s->worker = w;
  *fd = efd;
  return 0;
}

/* Opens the worker's connection and starts its thread, with every signal blocked in it (they
 * are the loop's) but the faults: a fault the thread itself raises (SIGBUS on the -shm made
 * unwritable under its checkpoint) is delivered to it whatever its mask, and a blocked one
 * kills the process silently instead of running the process's handler (run_process.c).
 * 0, or an SQLite code when it cannot start. */
static int worker_start(store *s) {
  store_worker *w = s->worker;
  int rc = sqlite3_open_v2(s->abs, &w->db, SQLITE_OPEN_READWRITE, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(w->db, BUSY_TIMEOUT_MS);
    /* A read first: a connection that has read nothing does not know the file is in WAL mode,
     * and its checkpoints would do nothing (and say so with -1 frames, which is no error). */
    rc = sqlite3_exec(w->db, "PRAGMA mmap_size = 0; SELECT count(*) FROM sqlite_schema", NULL, NULL,
                      NULL);
  }
  sigset_t all, old;
  sigfillset(&all);
  static const int faults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) sigdelset(&all, faults[i]);
  if (rc == SQLITE_OK && pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
    rc = pthread_create(&w->thread, NULL, worker_main, w) == 0 ? SQLITE_OK : SQLITE_ERROR;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  } else if (rc == SQLITE_OK) {
    rc = SQLITE_ERROR;
  }
  if (rc != SQLITE_OK) {
    sqlite3_close(w->db);
    w->db = NULL;
    return rc;
  }
  w->started = 1;
  return 0;
}

int store_durable_post(store *s, uint64_t *ticket) {
  store_worker *w = s->worker;
  *ticket = 0;
  if (!w->started && worker_start(s) != 0) return store_checkpoint_full(s->db, CKPT_WAIT_MS);
  pthread_mutex_lock(&w->mu);
  *ticket = ++w->posted;
  if (!w->gathering) pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  return SQLITE_OK;
}

int store_durable_nudge(store *s) {
  store_worker *w = s->worker;
  if (!w || !w->started || s->saved) return 0;
  pthread_mutex_lock(&w->mu);
  w->posted++;
  if (!w->gathering) pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  return 1;
}

/* The worker's failure as the store's error (the main connection's flags say "disk full" as
 * store_db_fail would). Called with the lock held. */
static int worker_fail(store *s, char **err) {
  store_worker *w = s->worker;
  int code = w->fail_code;
  store_note_fail(s, code);
  return diag_set(err, FT_ESTORE, "database %s: making results durable: %s", s->path,
                  w->fail_msg ? w->fail_msg : sqlite3_errstr(code));
}

int store_durable_failed(store *s, char **err) {
  store_worker *w = s->worker;
  if (!w) return 0;
  pthread_mutex_lock(&w->mu);
  int rc = w->fail_code ? worker_fail(s, err) : 0;
  pthread_mutex_unlock(&w->mu);
  return rc;
}

int store_durable_reached(store *s, uint64_t *done, char **err) {
  store_worker *w = s->worker;
  if (!w) return 0;
  uint64_t n;
  while (read(w->efd, &n, sizeof n) < 0 && errno == EINTR) {
  }
  pthread_mutex_lock(&w->mu);
  *done = w->durable;
  int rc = w->fail_code ? worker_fail(s, err) : 0;
  pthread_mutex_unlock(&w->mu);
  return rc;
}

int store_durable_drain(store *s, uint64_t *done, char **err) {
  store_worker *w = s->worker;
  if (!w) return 0;
  pthread_mutex_lock(&w->mu);
  w->hurry++;
  pthread_cond_signal(&w->work); /* a gathering worker checkpoints now */
  while (w->started && !w->fail_code && (w->durable < w->posted || w->busy))
    pthread_cond_wait(&w->done, &w->mu);
  w->hurry--;
  if (done) *done = w->durable;
  int rc = w->fail_code ? worker_fail(s, err) : 0;
  pthread_mutex_unlock(&w->mu);
  return rc;
}

int store_durable_stop(store *s, uint64_t *done, char **err) {
  store_worker *w = s->worker;
  if (!w) return 0;
  int rc = store_durable_drain(s, done, err);
  if (!w->started) return rc;
  pthread_mutex_lock(&w->mu);
  w->quit = 1;
  pthread_cond_signal(&w->work);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  w->started = 0;
  w->quit = 0;
  sqlite3_close(w->db);
  w->db = NULL;
  return rc;
}

uint64_t store_durable_rounds(store *s) {
  store_worker *w = s->worker;
  if (!w) return 0;
  pthread_mutex_lock(&w->mu);
  uint64_t n = w->rounds;
  pthread_mutex_unlock(&w->mu);
  return n;
}

void store_durable_free(store *s) {
  store_worker *w = s->worker;
  if (!w) return;
  store_durable_stop(s, NULL, NULL);
  close(w->efd);
  pthread_cond_destroy(&w->work);
  pthread_cond_destroy(&w->done);
  pthread_mutex_destroy(&w->mu);
  free(w->fail_msg);
  free(w);
  s->worker = NULL;
}
