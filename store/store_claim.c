/* The store: one owner per sweep. The exclusive claim (a flock on the sweep's lock file beside
 * the database, which the kernel drops when the holder dies) and the holder in the sweep's row
 * (pid, host, start time), taken in one transaction. Must not call up into other modules. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "procstat.h"
#include "store_impl.h"

/* ---- the sweep claim ---- */

/* The start time of process PID: /proc/PID/stat field 22, in clock ticks after boot (the
 * fields after the command name, which may hold spaces and parentheses, follow its last
 * ')'). 0 when the process does not exist or the file cannot be read. */
static long long proc_start(int pid) {
  procstat st;
  return procstat_read(pid, &st) == 0 ? st.starttime : 0;
}

/* Whether process PID, recorded with start time PID_START (0: unknown, a row from before
 * schema 6), still lives: a pid now used by another process (another start time) does not,
 * nor a zombie (an orchestrator killed with -9 a moment ago, not yet reaped by its parent:
 * it has closed its files and will never run again). */
static int holder_alive(int pid, long long pid_start) {
  procstat st;
  if (procstat_read(pid, &st) != 0 || st.state == 'Z' || st.state == 'X') return 0;
  return pid_start == 0 || st.starttime == pid_start;
}

static void this_host(char *buf, size_t n) {
  buf[0] = '\0';
  if (gethostname(buf, n - 1) != 0) snprintf(buf, n, "?");
  buf[n - 1] = '\0';
}

/* Who holds (or last held) a sweep, as its row says. */
typedef struct {
  char status[16], host[256], since[40];
  int pid;
  long long pid_start;
} holder;

static int read_holder(store *s, int64_t id, holder *h, char **err) {
  sqlite3_stmt *st = NULL;
  memset(h, 0, sizeof *h);
  int rc = store_stmt_get(s, ST_SWEEP_HOLDER, &st, err);
  if (rc) return rc;
  if (store_bind_int(st, ":id", id)) return store_bind_fail(s, st, err);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    snprintf(h->status, sizeof h->status, "%s", t ? t : "");
    h->pid = sqlite3_column_int(st, 1);
    t = (const char *)sqlite3_column_text(st, 2);
    snprintf(h->host, sizeof h->host, "%s", t ? t : "");
    h->pid_start = sqlite3_column_int64(st, 3);
    t = (const char *)sqlite3_column_text(st, 4);
    snprintf(h->since, sizeof h->since, "%s", t ? t : "?");
  }
  rc = rc == SQLITE_ROW    ? 0
       : rc == SQLITE_DONE ? diag_set(err, FT_EINPUT, "no sweep %lld", (long long)id)
                           : store_db_fail(s, err, "reading a sweep's holder");
  store_stmt_done(st);
  return rc;
}

/* The lock file of sweep ID, locked (exclusively, without waiting) into *fd. 1 when another
 * process holds it; 0 when this one does now; a negative code on failure. */
static int lock_sweep(store *s, int64_t id, int *fd, char **err) {
  char *path = xasprintf("%s.sweep-%lld.lock", s->abs, (long long)id);
  *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  int rc = 0;
  if (*fd < 0)
    rc = diag_set(err, FT_ESTORE, "cannot create the sweep's lock file %s: %s", path,
                  strerror(errno));
  else if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    rc = errno == EWOULDBLOCK
             ? 1
             : diag_set(err, FT_ESTORE, "cannot lock %s: %s", path, strerror(errno));
    close(*fd);
    *fd = -1;
  }
  free(path);
  return rc;
}

/* The lock is ours; the row may still name another holder: one on another machine (whose
 * lock cannot be seen from here), or a live process with the recorded pid and start time
 * (its lock file deleted, or a flagtune from before schema 6). A reused pid (another start
 * time) holds nothing. */
static int check_row(store *s, int64_t id, int force, const char *host, char **err) {
  holder h;
  int rc = read_holder(s, id, &h, err);
  if (rc || force || strcmp(h.status, "running") != 0 || h.pid <= 0 || h.pid == (int)getpid())
    return rc;
  if (h.host[0] && strcmp(h.host, host) != 0)
    return diag_set(err, FT_EINPUT,
                    "sweep %lld is marked running on host %s (pid %d, since %s); its lock cannot "
                    "be checked from %s: if flagtune is no longer running there, take the sweep "
                    "over with `flagtune resume %lld --force`",
                    (long long)id, h.host, h.pid, h.since, host, (long long)id);
  if (holder_alive(h.pid, h.pid_start))
    return diag_set(err, FT_EINPUT,
                    "sweep %lld is still running (pid %d on %s, since %s) but holds no lock; "
                    "stop that process, or take the sweep over with `flagtune resume %lld "
                    "--force`",
                    (long long)id, h.pid, h.host, h.since, (long long)id);
  return 0;
}

static int claim_row(store *s, int64_t id, const char *host, char **err) {
  sqlite3_stmt *st = NULL;
  int rc = store_stmt_get(s, ST_SWEEP_CLAIM, &st, err);
  if (rc) return rc;
  rc = store_bind_int(st, ":pid", getpid()) | store_bind_text(st, ":host", host) |
       store_bind_int(st, ":pid_start", proc_start((int)getpid())) | store_bind_int(st, ":id", id);
  if (rc) return store_bind_fail(s, st, err);
  return store_step_done(s, st, "claiming a sweep", err);
}

/* Another process holds the lock: name it. Its row may lag its lock by a moment (it locks,
 * then commits its claim), so wait up to a second for the row to name a live process. */
static int held_elsewhere(store *s, int64_t id, char **err) {
  holder h;
  int rc = 0;
  for (int i = 0; i < 20; i++) {
    if ((rc = read_holder(s, id, &h, err))) return rc;
    if (h.pid > 0 && kill(h.pid, 0) == 0) break;
    sqlite3_sleep(50);
  }
  return diag_set(err, FT_EINPUT,
                  "sweep %lld is held by another flagtune (pid %d on %s, since %s); wait for it "
                  "to end, or stop it (kill %d) and resume again",
                  (long long)id, h.pid, h.host, h.since, h.pid);
}

int store_holder_gone(const char *host, int pid, long long pid_start) {
  char here[256];
  this_host(here, sizeof here);
  return pid > 0 && host && strcmp(host, here) == 0 && !holder_alive(pid, pid_start);
}

/* Locks, checks and claims inside one write transaction. */
int store_claim_in_tx(store *s, int64_t id, int force, char **err) {
  char host[256];
  this_host(host, sizeof host);
  int fd = -1;
  int rc = lock_sweep(s, id, &fd, err);
  if (rc == 1) return held_elsewhere(s, id, err);
  if (!rc) rc = check_row(s, id, force, host, err);
  if (!rc) rc = claim_row(s, id, host, err);
  if (rc) {
    if (fd >= 0) close(fd);
    return rc;
  }
  if (s->claim_fd >= 0) close(s->claim_fd);
  s->claim_fd = fd;
  /* Allocated, not sparse: the blocks must exist to be given back. Best effort. */
  (void)posix_fallocate(fd, 0, RESERVE_BYTES);
  return 0;
}

int store_sweep_claim(store *s, int64_t id, int force, char **err) {
  int rc = store_identity_check(s, err);
  if (!rc) rc = store_run_cached(s, ST_BEGIN_WRITE, "claiming a sweep", err);
  if (!rc) rc = store_claim_in_tx(s, id, force, err);
  if (!rc) rc = store_run_cached(s, ST_COMMIT, "claiming a sweep", err);
  if (rc) store_tx_rollback(s);
  return rc;
}
