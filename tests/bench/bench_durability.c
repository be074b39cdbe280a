/* What durability costs per trial (docs/RELIABILITY.md, "Durability"): the store's writes of
 * one trial as a sweep makes them (its row, one flush of 10 running steps, its finish with 20
 * steps) under each store_sync mode: NORMAL (SQLite's WAL default), FULL (synchronous=FULL),
 * DURABLE (each finish checkpointed into the database file before it returns: the store with
 * no worker), and GROUP (DURABLE with group commit, store_durable_async: what a sweep runs;
 * the time includes the final wait for the worker).
 * One round runs TRIALS trials in each mode on a fresh database in DIR, the modes' order
 * rotating from round to round; it prints each round's microseconds per trial and, at the
 * end, the median per mode and the median of the paired differences. Not built by CMake;
 * tests/bench/bench_durability.sh builds and runs it against a built tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store.h"

enum { MODES = 4, MODE_GROUP = 3, MAX_ROUNDS = 200 };
static const char *const mode_name[MODES] = {"normal", "full", "durable", "group"};
static const store_sync mode_sync[MODES] = {STORE_SYNC_NORMAL, STORE_SYNC_FULL, STORE_SYNC_DURABLE,
                                            STORE_SYNC_DURABLE};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int fail(const char *what, char *err) {
  fprintf(stderr, "bench_durability: %s: %s\n", what, err ? err : "?");
  free(err);
  return -1;
}

/* Microseconds per trial of TRIALS trials in MODE on a new database at PATH; < 0: failed. */
static double run_mode(const char *path, int mode, int trials) {
  store *s = NULL;
  char *err = NULL;
  char side[4200];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  if (store_open(path, 0, &s, &err) != 0) return fail("open", err);
  if (store_set_sync(s, mode_sync[mode], &err) != 0) return fail("sync", err);
  int fd = -1;
  if (mode == MODE_GROUP && store_durable_async(s, &fd, &err) != 0) return fail("group", err);
  store_sweep_new n = {.name = "bench",
                       .model = "m",
                       .hardware = "h",
                       .strategy = "random",
                       .experiment_path = "x.lua",
                       .experiment_text = "return {}",
                       .experiment_hash = "0",
                       .budget_trials = trials,
                       .parallel = 1};
  int64_t sweep = 0;
  if (store_sweep_create(s, &n, &sweep, &err) != 0) return fail("sweep", err);
  double ms[20];
  for (int i = 0; i < 20; i++) ms[i] = 100.0 + i;
  double t0 = now_us();
  for (int i = 0; i < trials; i++) {
    char config[64];
    snprintf(config, sizeof config, "{\"x\":%d}", i);
    store_trial_new t = {.sweep_id = sweep,
                         .number = i,
                         .role = ROLE_SEARCH,
                         .config_json = config,
                         .label = config,
                         .xla_flags = "--xla_gpu_enable_latency_hiding_scheduler=true",
                         .command_json = "[\"python3\",\"train.py\"]",
                         .steps_budget = 20,
                         .log_path = "/tmp/x.log",
                         .pid = 1000 + i};
    int64_t id = 0;
    store_trial_end e = {.status = OUTCOME_OK, .value = 105.0, .has_exit = 1, .duration_s = 1};
    if (store_trial_begin(s, &t, &id, &err) || store_trial_add_steps(s, id, 0, ms, 10, &err) ||
        store_trial_finish(s, id, &e, ms, 20, &err))
      return fail("trial", err);
  }
  if (store_durable_stop(s, NULL, &err) != 0) return fail("durable", err);
  double per = (now_us() - t0) / trials;
  store_close(s);
  return per;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_durability DIR ROUNDS TRIALS\n");
    return 2;
  }
  int rounds = atoi(argv[2]), trials = atoi(argv[3]);
  if (rounds < 1 || rounds > MAX_ROUNDS || trials < 1) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/bench.db", argv[1]);
  static double us[MODES][MAX_ROUNDS], diff[MODES][MAX_ROUNDS];
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < MODES; k++) {
      int m = (r + k) % MODES;
      if ((us[m][r] = run_mode(path, m, trials)) < 0) return 1;
    }
    printf("round %d: normal %.0f us, full %.0f us, durable %.0f us, group %.0f us per trial\n",
           r + 1, us[0][r], us[1][r], us[2][r], us[3][r]);
    for (int m = 1; m < MODES; m++) diff[m][r] = us[m][r] - us[0][r];
  }
  double med[MODES];
  for (int m = 0; m < MODES; m++) med[m] = median(us[m], rounds);
  printf(
      "median of %d rounds of %d trials: normal %.0f us, full %.0f us, durable %.0f us, "
      "group %.0f us per trial\n",
      rounds, trials, med[0], med[1], med[2], med[3]);
  printf(
      "paired difference over normal: full %+.0f us, durable %+.0f us, group %+.0f us per "
      "trial\n",
      median(diff[1], rounds), median(diff[2], rounds), median(diff[3], rounds));
  return 0;
}
