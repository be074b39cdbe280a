/* Resume reads a sweep one trial at a time (store_trials_each) instead of loading every trial
 * with every step: on a stored sweep with a baseline re-run, ok trials with steps, failures
 * with one step, confirm, minimize, running, lost and interrupted trials and a lost trial
 * whose configuration finished elsewhere, the walk gives each trial as store_trials_load
 * does (with its steps, with their count, or without), and the plan made from it one trial
 * at a time (resume_plan_add, store_rerun_done) is the plan made from every record. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "resume.h"
#include "store.h"
#include "store_fixture.h"
#include "test.h"

static uint64_t rs_rng = 0x5eed;

/* A sweep of 40 trials: see the header. Returns its id. */
static int64_t rs_sweep(store *s) {
  store_sweep_new n = {.name = "r",
                       .model = "m",
                       .hardware = "h",
                       .experiment_path = "e.lua",
                       .experiment_text = "return 1",
                       .experiment_hash = "x",
                       .strategy = "random{}",
                       .budget_trials = 100,
                       .parallel = 2};
  int64_t sweep = 0;
  char *err = NULL;
  CHECK_INT(store_sweep_create(s, &n, &sweep, &err), 0);
  free(err);
  static const char *const status[] = {"ok", "ok", "oom", "ok", "crash", "ok", "pruned", "ok"};
  fx_trial(s, sweep, 0, ROLE_BASELINE, "{}", 0, "interrupted", 100, &rs_rng);
  for (int i = 1; i < 40; i++) {
    char config[64];
    /* Repeats up to 19; then each its own, but 21 (20's again) and 38 (7's, which ended). */
    int a = i < 20 ? i % 13 : i == 21 ? 20 : i == 38 ? 7 : i;
    snprintf(config, sizeof config, "{\"a\":%d}", a);
    trial_role role = i == 3    ? ROLE_BASELINE
                      : i == 30 ? ROLE_CONFIRM
                      : i == 31 ? ROLE_MINIMIZE
                                : ROLE_SEARCH;
    const char *st = i == 20   ? "lost"
                     : i == 21 ? "interrupted"
                     : i >= 38 ? "running"
                               : status[i % 8];
    fx_trial(s, sweep, i, role, role == ROLE_BASELINE ? "{}" : config, i % 3, st, 90 + i % 7,
             &rs_rng);
  }
  return sweep;
}

typedef struct {
  const trial_record *want;
  int n, at, read;
  resume_plan plan;
} rs_walk;

static int rs_stop(void *ud, const trial_record *t, char **err) {
  (void)t;
  int *calls = ud;
  ++*calls;
  *err = xstrdup("stopped");
  return -1;
}

static int rs_each(void *ud, const trial_record *t, char **err) {
  (void)err;
  rs_walk *w = ud;
  CHECK(w->at < w->n);
  if (w->at >= w->n) return -1;
  const trial_record *r = &w->want[w->at++];
  CHECK_INT(t->id, r->id);
  CHECK_INT(t->number, r->number);
  CHECK_INT(t->role, r->role);
  CHECK_INT(t->status, r->status);
  CHECK_STR(t->config_json, r->config_json);
  CHECK(fx_same_double(t->value, r->value));
  CHECK_INT(t->steps_budget, r->steps_budget);
  CHECK_INT(t->pid, r->pid);
  CHECK_INT(t->n_steps, w->read == STORE_STEPS_NONE ? 0 : r->n_steps);
  CHECK(w->read == STORE_STEPS_ALL ? t->steps != NULL || r->n_steps == 0 : t->steps == NULL);
  if (w->read == STORE_STEPS_ALL && t->steps && r->steps)
    CHECK(memcmp(t->steps, r->steps, sizeof(double) * (size_t)r->n_steps) == 0);
  resume_plan_add(&w->plan, t);
  return 0;
}

typedef struct {
  char **v;
  int n;
} done_list_t;

static int rs_done(void *ud, const char *config) {
  const done_list_t *d = ud;
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->v[i], config) == 0) return 1;
  return 0;
}

TEST(walk_gives_every_trial_as_the_full_load) {
  fx_tmpdb db;
  store *s = fx_open(&db, "ft_resume_walk");
  int64_t sweep = rs_sweep(s);
  trial_record *all = NULL;
  int n = 0;
  char *err = NULL;
  CHECK_INT(store_trials_load(s, sweep, &all, &n, &err), 0);
  CHECK_INT(n, 40);
  for (int read = STORE_STEPS_NONE; read <= STORE_STEPS_ALL; read++) {
    rs_walk w = {.want = all, .n = n, .read = read};
    resume_plan_init(&w.plan);
    CHECK_INT(store_trials_each(s, sweep, (store_steps_read)read, rs_each, &w, &err), 0);
    CHECK_INT(w.at, n);
    done_list_t d = {0};
    CHECK_INT(store_rerun_done(s, sweep, &d.v, &d.n, &err), 0);
    resume_plan_end(&w.plan, rs_done, &d);
    resume_plan full;
    resume_plan_make(all, n, &full);
    CHECK_INT(w.plan.counted, full.counted);
    CHECK_INT(w.plan.confirm_counted, full.confirm_counted);
    CHECK_INT(w.plan.next_number, full.next_number);
    CHECK_INT(w.plan.baseline_ok, full.baseline_ok);
    CHECK_INT(w.plan.baseline_id, full.baseline_id);
    CHECK(fx_same_double(w.plan.baseline_ms, full.baseline_ms));
    CHECK_INT(w.plan.baseline_ended, full.baseline_ended);
    CHECK_INT(w.plan.n_ok, full.n_ok);
    CHECK_INT(w.plan.n_history, full.n_history);
    CHECK_INT(w.plan.n_orphans, full.n_orphans);
    CHECK_INT(w.plan.n_reruns, full.n_reruns);
    CHECK_INT(full.n_reruns, 2); /* the test can tell: {"a":20} once, {"a":39} */
    for (int i = 0; i < w.plan.n_reruns && i < full.n_reruns; i++) {
      CHECK_STR(w.plan.reruns[i].config_json, full.reruns[i].config_json);
      CHECK_INT(w.plan.reruns[i].rerun_of, full.reruns[i].rerun_of);
      CHECK_INT(w.plan.reruns[i].role, full.reruns[i].role);
      CHECK_INT(w.plan.reruns[i].steps_budget, full.reruns[i].steps_budget);
    }
    for (int i = 0; i < d.n; i++) free(d.v[i]);
    free(d.v);
    resume_plan_free(&full);
    resume_plan_free(&w.plan);
  }
  /* A walk stopped by its callback ends the read and says so. */
  int calls = 0;
  CHECK(store_trials_each(s, sweep, STORE_STEPS_ALL, rs_stop, &calls, &err) != 0);
  CHECK_INT(calls, 1);
  CHECK_STR(err, "stopped");
  free(err);
  err = NULL;
  trial_record *again = NULL;
  int n_again = 0;
  CHECK_INT(store_trials_load(s, sweep, &again, &n_again, &err), 0); /* no read left open */
  CHECK_INT(n_again, n);
  record_free(again, n_again);
  /* The baseline's steps, read alone, are the full load's. */
  double *steps = NULL;
  int n_steps = 0;
  CHECK_INT(store_trial_steps(s, all[3].id, &steps, &n_steps, &err), 0);
  CHECK_INT(n_steps, all[3].n_steps);
  if (steps && n_steps == all[3].n_steps)
    CHECK(memcmp(steps, all[3].steps, sizeof(double) * (size_t)n_steps) == 0);
  free(steps);
  free(err);
  record_free(all, n);
  CHECK_STORE_END(s);
  fx_remove(&db);
}
