/* Shared by the unit tests that build a stored sweep in a real database: a database in a
 * fresh temporary directory, a seeded uniform draw, one stored trial with its six step
 * times (the first 1.5x: the compile), and a monotonic clock. Header-only. */
#ifndef FLAGTUNE_TEST_STORE_FIXTURE_H
#define FLAGTUNE_TEST_STORE_FIXTURE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diag.h"
#include "store.h"
#include "test.h"

typedef struct {
  char dir[64];
  char path[96];
} fx_tmpdb;

/* Opens T->path, a new database in a new directory under /tmp named after PREFIX. */
static inline store *fx_open(fx_tmpdb *t, const char *prefix) {
  snprintf(t->dir, sizeof t->dir, "/tmp/%s_XXXXXX", prefix);
  if (!mkdtemp(t->dir)) perror("mkdtemp");
  snprintf(t->path, sizeof t->path, "%s/t.db", t->dir);
  store *s = NULL;
  char *err = NULL;
  CHECK_INT(store_open(t->path, 0, &s, &err), 0);
  free(err);
  return s;
}

static inline void fx_remove(fx_tmpdb *t) {
  char *cmd = xasprintf("rm -rf '%s'", t->dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", t->dir);
  free(cmd);
}

/* A uniform draw in [0, 1) from the generator *STATE. */
static inline double fx_unit(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 11) * 0x1p-53;
}

/* Stores trial NUMBER of CONFIG with ROLE and STEPS_BUDGET (0: the experiment's). STATUS
 * "running": begun only, with a pid; otherwise ended with STATUS, an ok one at VALUE with six
 * step times around it drawn from *RNG. */
static inline void fx_trial(store *s, int64_t sweep, int number, trial_role role,
                            const char *config, int steps_budget, const char *status, double value,
                            uint64_t *rng) {
  store_trial_new n = {.sweep_id = sweep,
                       .number = number,
                       .role = role,
                       .config_json = config,
                       .label = "t",
                       .env_json = "{}",
                       .steps_budget = steps_budget,
                       .log_path = "/tmp/log"};
  int64_t id = 0;
  char *err = NULL;
  CHECK_INT(store_trial_begin(s, &n, &id, &err), 0);
  if (strcmp(status, "running") == 0) {
    CHECK_INT(store_trial_set_pid(s, id, 100000 + number, &err), 0);
    free(err);
    return;
  }
  int ok = strcmp(status, "ok") == 0;
  double steps[6];
  for (int k = 0; k < 6; k++) steps[k] = value * (k ? 1 + (fx_unit(rng) - 0.5) * 0.02 : 1.5);
  store_trial_end e = {.status = (outcome)outcome_from_name(status), .value = ok ? value : NAN};
  CHECK_INT(store_trial_finish(s, id, &e, steps, ok ? 6 : 1, &err), 0);
  if (err) fprintf(stderr, "%s\n", err);
  free(err);
}

/* Whether A and B are the same double, bit for bit (two NaNs are). */
static inline int fx_same_double(double a, double b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Milliseconds of the monotonic clock. */
static inline double fx_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
