/* Group commit (store/store_durable.c): a finish handed to the worker is in the database file
 * itself, without its -wal, once the worker says its ticket is durable; a stop drains it; the
 * synchronous durable commits wait for it; connections it does not apply to have none. */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "store.h"
#include "store_fixture.h"
#include "test.h"

/* The first column of a row, when a number (ROW is NULL for the header). */
static int first_num(const cJSON *columns, cJSON *row, void *ud) {
  (void)columns;
  cJSON *cell = cJSON_GetArrayItem(row, 0);
  if (cJSON_IsNumber(cell)) *(double *)ud = cell->valuedouble;
  return 0;
}

/* SQL's one number in a copy of T's database file made without its -wal and -shm (what a
 * lost -wal leaves); NAN when the copy cannot be read. */
static double file_alone_num(const fx_tmpdb *t, const char *sql) {
  char *copy = xasprintf("%s/alone.db", t->dir);
  char *cmd = xasprintf("rm -f '%s'*; cp '%s' '%s'", copy, t->path, copy);
  double v = NAN;
  store *c = NULL;
  char *err = NULL;
  if (system(cmd) == 0 && store_open(copy, STORE_READONLY, &c, &err) == 0 &&
      store_query(c, sql, first_num, &v, &err) != 0)
    v = NAN;
  if (err) fprintf(stderr, "%s\n", err);
  free(err);
  store_close(c);
  free(cmd);
  free(copy);
  return v;
}

/* Waits (on the store's descriptor) until ticket K is durable; 0 when it is, else the error. */
static int wait_durable(store *s, int fd, uint64_t k) {
  uint64_t done = 0;
  for (int tries = 0; tries < 100; tries++) {
    int rc = store_durable_reached(s, &done, NULL);
    if (rc || done >= k) return rc;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    poll(&p, 1, 100);
  }
  return -1;
}

static int64_t sweep_of(store *s) {
  store_sweep_new n = {.name = "d",
                       .model = "m",
                       .hardware = "h",
                       .strategy = "random",
                       .experiment_path = "e.lua",
                       .experiment_text = "return {}",
                       .experiment_hash = "x",
                       .budget_trials = 10,
                       .parallel = 1,
                       .host = "box",
                       .options_json = "{}"};
  int64_t id = 0;
  CHECK_INT(store_sweep_create(s, &n, &id, NULL), 0);
  return id;
}

#define OK_TRIALS "SELECT count(*) FROM trials WHERE status = 'ok'"

TEST(finish_is_in_the_file_alone_once_its_ticket_is) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_durable");
  int fd = -1;
  CHECK_INT(store_durable_async(s, &fd, NULL), 0);
  CHECK(fd >= 0);
  int64_t id = sweep_of(s);
  uint64_t rng = 1;
  fx_trial(s, id, 0, ROLE_BASELINE, "{}", 0, "ok", 100, &rng);
  uint64_t k0 = store_durable_ticket(s);
  fx_trial(s, id, 1, ROLE_SEARCH, "{\"x\":1}", 0, "ok", 90, &rng);
  uint64_t k1 = store_durable_ticket(s);
  CHECK(k0 > 0);
  CHECK(k1 > k0);
  CHECK_INT(wait_durable(s, fd, k1), 0);
  CHECK_NEAR(file_alone_num(&t, OK_TRIALS), 2, 0);
  uint64_t done = 0;
  CHECK_INT(store_durable_stop(s, &done, NULL), 0);
  CHECK(done == k1);
  CHECK_STORE_END(s);
  fx_remove(&t);
}

/* A stop waits for every ticket; a finish after it starts the worker again. */
TEST(stop_drains_and_a_later_finish_starts_again) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_durable");
  int fd = -1;
  CHECK_INT(store_durable_async(s, &fd, NULL), 0);
  int64_t id = sweep_of(s);
  uint64_t rng = 2, done = 0;
  for (int i = 0; i < 20; i++) fx_trial(s, id, i, ROLE_SEARCH, "{}", 0, "ok", 50 + i, &rng);
  uint64_t k = store_durable_ticket(s);
  CHECK_INT(store_durable_stop(s, &done, NULL), 0);
  CHECK(done == k);
  CHECK_NEAR(file_alone_num(&t, OK_TRIALS), 20, 0);
  fx_trial(s, id, 20, ROLE_SEARCH, "{}", 0, "ok", 40, &rng);
  CHECK(store_durable_ticket(s) > k);
  CHECK_INT(store_durable_stop(s, &done, NULL), 0);
  CHECK(done == store_durable_ticket(s));
  CHECK_NEAR(file_alone_num(&t, OK_TRIALS), 21, 0);
  CHECK_STORE_END(s);
  fx_remove(&t);
}

/* Finishes that come one at a time (parallel 1) but close together share one checkpoint: the
 * worker lets them gather (10 ms) before it checkpoints, where one each cost its syncs. The
 * count is checked only when the second finish came within 8 ms of the first (a loaded
 * machine may take longer). */
TEST(finishes_close_together_share_one_checkpoint) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_durable");
  int fd = -1;
  CHECK_INT(store_durable_async(s, &fd, NULL), 0);
  int64_t id = sweep_of(s);
  uint64_t rng = 4;
  fx_trial(s, id, 0, ROLE_BASELINE, "{}", 0, "ok", 100, &rng); /* starts the worker */
  CHECK_INT(wait_durable(s, fd, store_durable_ticket(s)), 0);
  uint64_t r0 = store_durable_rounds(s);
  fx_trial(s, id, 1, ROLE_SEARCH, "{\"x\":1}", 0, "ok", 90, &rng);
  double t0 = fx_now_ms(); /* its finish is posted */
  usleep(1000);         /* the worker has heard of it by now */
  fx_trial(s, id, 2, ROLE_SEARCH, "{\"x\":2}", 0, "ok", 80, &rng);
  double gap = fx_now_ms() - t0;
  CHECK_INT(wait_durable(s, fd, store_durable_ticket(s)), 0);
  CHECK_NEAR(file_alone_num(&t, OK_TRIALS), 3, 0);
  if (gap < 8)
    CHECK(store_durable_rounds(s) == r0 + 1);
  else
    fprintf(stderr, "note: the finishes came %.1f ms apart: their checkpoints not counted\n", gap);
  CHECK_INT(store_durable_stop(s, NULL, NULL), 0);
  CHECK_STORE_END(s);
  fx_remove(&t);
}

/* A sweep's status is durable when it returns (synchronous, after the worker is drained): the
 * file alone holds it and every finish before it. */
TEST(status_commit_waits_for_the_worker) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_durable");
  int fd = -1;
  CHECK_INT(store_durable_async(s, &fd, NULL), 0);
  int64_t id = sweep_of(s);
  uint64_t rng = 3;
  for (int i = 0; i < 5; i++) fx_trial(s, id, i, ROLE_SEARCH, "{}", 0, "ok", 70 + i, &rng);
  CHECK_INT(store_sweep_set_status(s, id, "done", NULL, 0, NULL), 0);
  CHECK_NEAR(file_alone_num(&t, OK_TRIALS), 5, 0);
  CHECK_NEAR(file_alone_num(&t, "SELECT count(*) FROM sweeps WHERE status = 'done'"), 1, 0);
  CHECK_STORE_END(s); /* closes with the worker running: store_close stops it */
  fx_remove(&t);
}

/* Read-only handles and the measuring modes keep their finishes synchronous: no worker. */
TEST(no_worker_where_it_does_not_apply) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_durable");
  int64_t id = sweep_of(s);
  store *r = NULL;
  int fd = 0;
  CHECK_INT(store_open(t.path, STORE_READONLY, &r, NULL), 0);
  CHECK_INT(store_durable_async(r, &fd, NULL), 0);
  CHECK_INT(fd, -1);
  CHECK_STORE_END(r);
  CHECK_INT(store_set_sync(s, STORE_SYNC_FULL, NULL), 0);
  CHECK_INT(store_durable_async(s, &fd, NULL), 0);
  CHECK_INT(fd, -1);
  uint64_t rng = 4;
  fx_trial(s, id, 0, ROLE_SEARCH, "{}", 0, "ok", 10, &rng);
  CHECK(store_durable_ticket(s) == 0);
  CHECK_INT(store_durable_stop(s, NULL, NULL), 0);
  CHECK_STORE_END(s);
  fx_remove(&t);
}
