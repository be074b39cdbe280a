/* `flagtune minimize` reads only what it uses (src/sweep/sweep_minimize.c): its plan from the
 * sweep's minimize trials (store_trials_load_role), the winner's interval from the baseline's
 * and the winner's trials (store_trials_load_configs), the orphans and the next number from
 * the rows recorded running (store_trials_running). On a stored sweep of many search trials,
 * confirm trials, minimize trials at every stage (ok, failed, lost, running), each read gives
 * what the read of every trial gave before, bit for bit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confirm.h"
#include "diag.h"
#include "minimize.h"
#include "store.h"
#include "store_fixture.h"
#include "test.h"

#define WINNER "{\"A\":1,\"B\":true,\"C\":\"x\",\"D\":7}"

static uint64_t ms_rng = 0x9e3779b9;
static double ms_unit(void) {
  return fx_unit(&ms_rng);
}

/* Stores trial NUMBER of CONFIG with ROLE and STATUS ("running": begun only); an ok trial's
 * value is SPEED with noise, its steps around it. */
static void ms_trial(store *s, int64_t sweep, int number, trial_role role, const char *config,
                     const char *status, double speed) {
  double value =
      strcmp(status, "running") == 0 ? NAN : round(speed * (1 + (ms_unit() - 0.5) * 0.04) * 4) / 4;
  fx_trial(s, sweep, number, role, config, 0, status, value, &ms_rng);
}

/* The plan made from every trial and from the minimize trials alone: the same. Returns
 * whether it is done. */
static int ms_compare_plan(store *s, int64_t sweep, const minimize_input *in) {
  trial_record *all = NULL, *mz = NULL;
  int n_all = 0, n_mz = 0;
  char *err = NULL;
  CHECK_INT(store_trials_load(s, sweep, &all, &n_all, &err), 0);
  CHECK_INT(store_trials_load_role(s, sweep, ROLE_MINIMIZE, &mz, &n_mz, &err), 0);
  CHECK(n_mz < n_all);
  for (int i = 0; i < n_mz; i++) CHECK_INT(mz[i].role, ROLE_MINIMIZE);
  minimize_plan pa, pm;
  CHECK_INT(minimize_plan_make(all, n_all, in, &pa, &err), 0);
  CHECK_INT(minimize_plan_make(mz, n_mz, in, &pm, &err), 0);
  CHECK_INT(pm.done, pa.done);
  CHECK_INT(pm.n_configs, pa.n_configs);
  for (int i = 0; i < pa.n_configs && i < pm.n_configs; i++)
    CHECK_STR(pm.configs[i], pa.configs[i]);
  CHECK_STR(pm.minimal ? pm.minimal : "", pa.minimal ? pa.minimal : "");
  CHECK(fx_same_double(pm.minimal_speedup, pa.minimal_speedup));
  CHECK_INT(pm.n_params, pa.n_params);
  for (int i = 0; i < pa.n_params && i < pm.n_params; i++) {
    CHECK(fx_same_double(pm.params[i].alone, pa.params[i].alone));
    CHECK_INT(pm.params[i].matters, pa.params[i].matters);
    CHECK_INT(pm.params[i].dropped, pa.params[i].dropped);
    CHECK_INT(pm.params[i].tried, pa.params[i].tried);
  }
  int done = pa.done;
  minimize_plan_free(&pa);
  minimize_plan_free(&pm);
  record_free(all, n_all);
  record_free(mz, n_mz);
  free(err);
  return done;
}

/* The configuration a minimize plan asks for next gets its trials (one in ten failing, the
 * speed of a configuration by its length: reverting A or C costs, B and D do not). */
static int ms_run_plan(store *s, int64_t sweep, const minimize_input *in, int *number) {
  trial_record *mz = NULL;
  int n_mz = 0;
  char *err = NULL;
  CHECK_INT(store_trials_load_role(s, sweep, ROLE_MINIMIZE, &mz, &n_mz, &err), 0);
  minimize_plan p;
  CHECK_INT(minimize_plan_make(mz, n_mz, in, &p, &err), 0);
  for (int i = 0; i < p.n_configs; i++) {
    const char *c = p.configs[i];
    double speed = 80 + (strstr(c, "\"A\"") ? 0 : 9) + (strstr(c, "\"C\"") ? 0 : 6);
    ms_trial(s, sweep, (*number)++, ROLE_MINIMIZE, c, ms_unit() < 0.1 ? "oom" : "ok", speed);
  }
  int n = p.n_configs;
  minimize_plan_free(&p);
  record_free(mz, n_mz);
  free(err);
  return n;
}

TEST(minimize_reads_only_its_trials) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_mstore");
  store_sweep_new sn = {.name = "m",
                        .model = "m",
                        .hardware = "h",
                        .strategy = "random",
                        .experiment_path = "e.lua",
                        .experiment_text = "return experiment{}",
                        .experiment_hash = "x",
                        .seed = 1,
                        .budget_trials = 500,
                        .parallel = 1,
                        .host = "box",
                        .options_json = "{}"};
  int64_t sweep = 0;
  char *err = NULL;
  CHECK_INT(store_sweep_create(s, &sn, &sweep, &err), 0);
  int number = 0;
  ms_trial(s, sweep, number++, ROLE_BASELINE, "{}", "ok", 100);
  char config[96];
  for (int i = 0; i < 400; i++) { /* the search: many configurations, some repeated */
    snprintf(config, sizeof config, "{\"A\":%d,\"B\":%s,\"C\":\"x\",\"D\":%d}", i % 5,
             i % 2 ? "true" : "false", i % 37);
    const char *st = i % 11 == 0 ? "oom" : i % 17 == 0 ? "crash" : "ok";
    ms_trial(s, sweep, number++, ROLE_SEARCH, config, st, 85 + fmod(i * 3.7, 15));
  }
  for (int r = 0; r < 3; r++) { /* confirmation: the baseline and the winner */
    ms_trial(s, sweep, number++, ROLE_CONFIRM, "{}", "ok", 100);
    ms_trial(s, sweep, number++, ROLE_CONFIRM, WINNER, "ok", 80);
    ms_trial(s, sweep, number++, ROLE_CONFIRM, "{\"A\":3}", "ok", 90); /* not read */
  }
  ms_trial(s, sweep, number++, ROLE_SEARCH, WINNER, "ok", 80);
  minimize_input in = {.winner = WINNER, .repeats = 2, .speedup = 1.25, .lo = 1.2};
  /* The winner's interval: from its trials and the baseline's, as from every trial. */
  trial_record *all = NULL, *sel = NULL;
  int n_all = 0, n_sel = 0;
  CHECK_INT(store_trials_load(s, sweep, &all, &n_all, &err), 0);
  const char *configs[] = {"{}", WINNER};
  CHECK_INT(store_trials_load_configs(s, sweep, configs, 2, &sel, &n_sel, &err), 0);
  int want = 0; /* the baseline, 3 + 3 confirm trials, the winner's search trials */
  for (int i = 0; i < n_all; i++)
    want += strcmp(all[i].config_json, "{}") == 0 || strcmp(all[i].config_json, WINNER) == 0;
  CHECK(want >= 9); /* the search drew the winner once before it was stored as such */
  CHECK_INT(n_sel, want);
  for (int i = 1; i < n_sel; i++) CHECK(sel[i].number > sel[i - 1].number);
  store_winner wa, ws;
  CHECK_INT(confirm_config(all, n_all, WINNER, 0, 1, &wa), 0);
  CHECK_INT(confirm_config(sel, n_sel, WINNER, 0, 1, &ws), 0);
  CHECK_INT((int)ws.trial_id, (int)wa.trial_id);
  CHECK_INT(ws.n_trials, wa.n_trials);
  CHECK(fx_same_double(ws.value, wa.value) && fx_same_double(ws.baseline, wa.baseline));
  CHECK(fx_same_double(ws.lo, wa.lo) && fx_same_double(ws.hi, wa.hi));
  CHECK(!isnan(ws.lo));
  record_free(all, n_all);
  record_free(sel, n_sel);
  /* The plan at every stage, as minimize makes it after each batch. */
  int batches = 0, done = 0;
  while (!done && batches < 20) {
    done = ms_compare_plan(s, sweep, &in);
    if (!done) CHECK(ms_run_plan(s, sweep, &in, &number) > 0);
    if (batches == 1) { /* a dead minimize's trial, and one lost */
      ms_trial(s, sweep, number++, ROLE_MINIMIZE, WINNER, "running", 0);
      ms_trial(s, sweep, number++, ROLE_MINIMIZE, WINNER, "lost", 0);
    }
    batches++;
  }
  CHECK(done);
  CHECK(batches >= 3); /* the ablation, a greedy stage and the end were compared */
  /* The orphans and the next number: the running rows, the highest number + 1. */
  ms_trial(s, sweep, number++, ROLE_SEARCH, "{\"A\":9}", "running", 0);
  trial_record *run = NULL;
  int n_run = 0, next = -1;
  CHECK_INT(store_trials_running(s, sweep, &run, &n_run, &next, &err), 0);
  CHECK_INT(next, number);
  CHECK_INT(n_run, 2);
  if (n_run == 2) {
    CHECK_INT(run[0].role, ROLE_MINIMIZE);
    CHECK_INT(run[1].number, number - 1);
    CHECK_INT(run[1].pid, 100000 + number - 1);
    CHECK_INT(run[0].status, OUTCOME_RUNNING);
  }
  record_free(run, n_run);
  /* An empty sweep: no rows, next number 0; a configuration no trial has: none. */
  int64_t empty = 0;
  CHECK_INT(store_sweep_create(s, &sn, &empty, &err), 0);
  CHECK_INT(store_trials_running(s, empty, &run, &n_run, &next, &err), 0);
  CHECK_INT(n_run, 0);
  CHECK_INT(next, 0);
  const char *none[] = {"{\"Z\":1}"};
  CHECK_INT(store_trials_load_configs(s, sweep, none, 1, &sel, &n_sel, &err), 0);
  CHECK_INT(n_sel, 0);
  CHECK_INT(store_trials_load_configs(s, sweep, NULL, 0, &sel, &n_sel, &err), 0);
  CHECK_INT(n_sel, 0);
  free(err);
  store_close(s);
  fx_remove(&t);
}
