/* The end of a sweep reads only the trials its confirmation can use
 * (store_trials_load_confirm): on a stored sweep with many trials, repeated configurations,
 * failures, short rungs, ties, a minimize trial and confirm trials already run, the plan, the
 * pool, the noise and the winner are the same, bit for bit, as on every trial of the sweep
 * (store_trials_load_some, the read that the end of a sweep made before), for many settings
 * of top, repeats, the full step budget and the strategy's estimates. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confirm.h"
#include "diag.h"
#include "store.h"
#include "store_fixture.h"
#include "test.h"

static uint64_t cs_rng = 0x1234567;
static double cs_noise = 0.06; /* a trial's spread around its configuration's speed */
static double cs_unit(void) {
  return fx_unit(&cs_rng);
}

/* Configuration I: long enough to look like a real one. */
static void cs_config(char *buf, size_t n, int i) {
  if (i < 0)
    snprintf(buf, n, "{}");
  else
    snprintf(buf, n,
             "{\"xla_gpu_enable_latency_hiding_scheduler\":%s,\"BENCH_A\":%d,\"BENCH_B\":%d}",
             i % 2 ? "true" : "false", i, (i * 37) % 101);
}

/* Stores trial NUMBER of configuration CFG (-1: the baseline's) with ROLE and STATUS; an ok
 * trial's value is the configuration's speed with noise, rounded to 0.5 ms (ties). */
static void cs_trial(store *s, int64_t sweep, int number, trial_role role, int cfg,
                     const char *status, int steps_budget) {
  char config[160];
  cs_config(config, sizeof config, cfg);
  double speed = cfg < 0 ? 100 : 80 + fmod(cfg * 7.31, 25.0);
  double value = round(speed * (1 + (cs_unit() - 0.5) * cs_noise) * 2) / 2;
  fx_trial(s, sweep, number, role, config, steps_budget, status, value, &cs_rng);
}

/* The strategy's estimates of CONFIGS, made up from the configuration (every fifth has none). */
static confirm_estimate *cs_estimates(const char **configs, int n) {
  confirm_estimate *e = xcalloc((size_t)n + 1, sizeof *e);
  for (int i = 0; i < n; i++) {
    unsigned h = 5381;
    for (const char *c = configs[i]; *c; c++) h = h * 33 + (unsigned char)*c;
    e[i].config = configs[i];
    e[i].mean = h % 5 == 0 ? NAN : log(80 + h % 23);
    e[i].sd = 0.01 + (h % 7) * 0.01;
  }
  return e;
}

/* sweep.c's choice of the trials whose steps the winner pools. */
static void cs_want(const trial_record *t, int n, char *want, void *ud) {
  (void)ud;
  for (int i = 0; i < n; i++) {
    want[i] = strcmp(t[i].config_json, "{}") == 0;
    for (int c = 0; c < n && !want[i]; c++)
      want[i] = t[c].role == ROLE_CONFIRM && strcmp(t[c].config_json, t[i].config_json) == 0;
  }
}

/* Compares the plan (and the pool and the noise) on every trial and on the selected ones.
 * Returns the number of rows the selection kept. */
static int cs_compare_plan(store *s, int64_t sweep, int full, int top, int repeats, int with_est,
                           int *n_all_out) {
  trial_record *all = NULL, *sel = NULL;
  int n_all = 0, n_sel = 0;
  char *err = NULL;
  CHECK_INT(store_trials_load_some(s, sweep, NULL, NULL, &all, &n_all, &err), 0);
  CHECK_INT(store_trials_load_confirm(s, sweep, full, confirm_fastest_needed(top), NULL, NULL, &sel,
                                      &n_sel, &err),
            0);
  const char **pa, **ps, **ca, **cs;
  int npa, nps, nca, ncs;
  int pool = CONFIRM_POOL_PER_TOP * top;
  confirm_pool(all, n_all, full, pool, &pa, &npa);
  confirm_pool(sel, n_sel, full, pool, &ps, &nps);
  CHECK_INT(nps, npa);
  for (int i = 0; i < npa && i < nps; i++) CHECK_STR(ps[i], pa[i]);
  confirm_estimate *ea = with_est ? cs_estimates(pa, npa) : NULL;
  confirm_estimate *es = with_est ? cs_estimates(ps, nps) : NULL;
  /* every candidate, and only those whose re-run can change the answer */
  for (int adaptive = 0; adaptive < 2; adaptive++) {
    double z = adaptive ? CONFIRM_Z : INFINITY;
    confirm_plan(all, n_all, full, top, repeats, z, ea, with_est ? npa : 0, &ca, &nca);
    confirm_plan(sel, n_sel, full, top, repeats, z, es, with_est ? nps : 0, &cs, &ncs);
    CHECK_INT(ncs, nca);
    int diff = 0;
    for (int i = 0; i < nca && i < ncs; i++) diff += strcmp(cs[i], ca[i]) != 0;
    if (diff)
      fprintf(stderr, "full %d top %d repeats %d est %d z %g: plans differ\n", full, top, repeats,
              with_est, z);
    CHECK_INT(diff, 0);
    if (!adaptive) {
      free(ca);
      free(cs);
    }
  }
  CHECK(fx_same_double(confirm_noise(sel, n_sel, full), confirm_noise(all, n_all, full)));
  /* the fixture has repeated configurations: the noise is not the prior alone */
  CHECK(fabs(confirm_noise(all, n_all, full) - confirm_noise_posterior(0, 0)) > 1e-6);
  free(pa);
  free(ps);
  free(ca);
  free(cs);
  free(ea);
  free(es);
  record_free(all, n_all);
  record_free(sel, n_sel);
  free(err);
  *n_all_out = n_all;
  return n_sel;
}

static void cs_compare_winner(store *s, int64_t sweep, int full, int with_est) {
  trial_record *all = NULL, *sel = NULL;
  int n_all = 0, n_sel = 0;
  char *err = NULL;
  CHECK_INT(store_trials_load_some(s, sweep, cs_want, NULL, &all, &n_all, &err), 0);
  CHECK_INT(store_trials_load_confirm(s, sweep, full, 0, cs_want, NULL, &sel, &n_sel, &err), 0);
  const char **ka = xcalloc((size_t)n_all + 1, sizeof *ka),
             **ks = xcalloc((size_t)n_sel + 1, sizeof *ks);
  int nka = 0, nks = 0;
  for (int i = 0; i < n_all; i++)
    if (all[i].role == ROLE_CONFIRM && strcmp(all[i].config_json, "{}") != 0)
      ka[nka++] = all[i].config_json;
  for (int i = 0; i < n_sel; i++)
    if (sel[i].role == ROLE_CONFIRM && strcmp(sel[i].config_json, "{}") != 0)
      ks[nks++] = sel[i].config_json;
  CHECK_INT(nks, nka);
  confirm_estimate *ea = with_est ? cs_estimates(ka, nka) : NULL;
  confirm_estimate *es = with_est ? cs_estimates(ks, nks) : NULL;
  store_winner wa, ws;
  memset(&wa, 0, sizeof wa);
  memset(&ws, 0, sizeof ws);
  int ra = confirm_winner(all, n_all, full, 1, ea, with_est ? nka : 0, &wa);
  int rs = confirm_winner(sel, n_sel, full, 1, es, with_est ? nks : 0, &ws);
  CHECK_INT(rs, ra);
  CHECK_INT(ra, 0);
  CHECK_INT(ws.trial_id, wa.trial_id);
  CHECK_INT(ws.n_trials, wa.n_trials);
  CHECK(fx_same_double(ws.value, wa.value));
  CHECK(fx_same_double(ws.baseline, wa.baseline));
  CHECK(fx_same_double(ws.lo, wa.lo));
  CHECK(fx_same_double(ws.hi, wa.hi));
  CHECK(!isnan(ws.lo));
  /* The steps read are those of the pooled trials, as before. */
  long steps_all = 0, steps_sel = 0;
  for (int i = 0; i < n_all; i++) steps_all += all[i].n_steps;
  for (int i = 0; i < n_sel; i++) steps_sel += sel[i].n_steps;
  CHECK_INT(steps_sel, steps_all);
  CHECK(n_sel < n_all / 4);
  free(ka);
  free(ks);
  free(ea);
  free(es);
  record_free(all, n_all);
  record_free(sel, n_sel);
  free(err);
}

/* A new sweep of BUDGET_TRIALS trials of 20 steps in S; its id. */
static int64_t cs_sweep(store *s, int budget_trials) {
  store_sweep_new sn = {.name = "c",
                        .model = "m",
                        .hardware = "h",
                        .strategy = "random",
                        .experiment_path = "e.lua",
                        .experiment_text = "x",
                        .experiment_hash = "x",
                        .budget_trials = budget_trials,
                        .budget_steps = 20,
                        .parallel = 1,
                        .host = "b",
                        .options_json = "{}"};
  int64_t sw = 0;
  char *err = NULL;
  CHECK_INT(store_sweep_create(s, &sn, &sw, &err), 0);
  free(err);
  return sw;
}

TEST(confirm_rows_decide_as_every_row) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_cstore");
  int64_t sw = cs_sweep(s, 2000);
  char *err = NULL;
  const char *fails[] = {"oom", "crash", "timeout", "invalid", "no_metric", "interrupted", "lost"};
  cs_trial(s, sw, 0, ROLE_BASELINE, -1, "ok", 20);
  int number = 1;
  for (; number <= 1200; number++) {
    /* 20,000 configurations: a few dozen measured more than once */
    int cfg = (int)(cs_unit() * 20000);
    double u = cs_unit();
    const char *status = u < 0.2 ? fails[(int)(u * 35) % 7] : "ok";
    trial_role role = cs_unit() < 0.05 ? ROLE_RERUN : ROLE_SEARCH;
    int budget = cs_unit() < 0.15 ? 5 : (cs_unit() < 0.1 ? 0 : 20); /* short rungs */
    cs_trial(s, sw, number, role, cs_unit() < 0.01 ? -1 : cfg, status, budget);
  }
  cs_trial(s, sw, number++, ROLE_MINIMIZE, 7, "ok", 20);
  int n_all = 0;
  int settings[][3] = {{0, 1, 1},  {20, 1, 1},  {20, 3, 2}, {0, 3, 3},
                       {20, 8, 1}, {20, 16, 2}, {0, 20, 1}, {20, 5, 1}};
  for (int k = 0; k < 8; k++)
    for (int est = 0; est < 2; est++) {
      int n_sel =
          cs_compare_plan(s, sw, settings[k][0], settings[k][1], settings[k][2], est, &n_all);
      CHECK(n_sel < n_all / 4);
    }
  /* The confirmation of a top 4, two rounds, ran (some re-measurements failed), plus a
   * re-measurement of a slow configuration (an earlier plan, on resume): resumed plans and the
   * winner must agree too. */
  trial_record *all = NULL;
  const char **plan;
  int n_plan;
  CHECK_INT(store_trials_load_some(s, sw, NULL, NULL, &all, &n_all, &err), 0);
  confirm_plan(all, n_all, 20, 4, 2, INFINITY, NULL, 0, &plan, &n_plan);
  for (int i = 0; i < n_plan; i++) {
    int cfg = -1;
    if (strcmp(plan[i], "{}") != 0) sscanf(strstr(plan[i], "\"BENCH_A\":"), "\"BENCH_A\":%d", &cfg);
    cs_trial(s, sw, number++, ROLE_CONFIRM, cfg, i % 7 == 3 ? "oom" : "ok", 20);
  }
  free(plan);
  record_free(all, n_all);
  cs_trial(s, sw, number++, ROLE_CONFIRM, 499, "ok", 20);
  cs_trial(s, sw, number++, ROLE_CONFIRM, 498, "interrupted", 20);
  for (int k = 0; k < 8; k++)
    for (int est = 0; est < 2; est++)
      cs_compare_plan(s, sw, settings[k][0], settings[k][1], settings[k][2], est, &n_all);
  for (int est = 0; est < 2; est++) {
    cs_compare_winner(s, sw, 20, est);
    cs_compare_winner(s, sw, 0, est);
  }
  CHECK_STORE_END(s);
  fx_remove(&t);
}

/* The selection itself: the baseline's, the fastest's, the confirmed and the repeated
 * configurations' trials, every confirm trial, in number order; the step times only where
 * asked; a sweep with no trials is an empty answer. */
TEST(confirm_rows_are_the_ones_it_can_use) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_cstore");
  int64_t sw = cs_sweep(s, 20);
  char *err = NULL;
  trial_record *r = NULL;
  int n = -1;
  CHECK_INT(store_trials_load_confirm(s, sw, 20, 3, NULL, NULL, &r, &n, &err), 0);
  CHECK_INT(n, 0);
  record_free(r, n);
  cs_noise = 0; /* values: config i at 80 + (7.31 i mod 25), to the half millisecond */
  cs_trial(s, sw, 0, ROLE_BASELINE, -1, "ok", 20);
  cs_trial(s, sw, 1, ROLE_SEARCH, 0, "ok", 20);      /* 80: the fastest */
  cs_trial(s, sw, 2, ROLE_SEARCH, 3, "ok", 20);      /* 102, once */
  cs_trial(s, sw, 3, ROLE_SEARCH, 1, "ok", 20);      /* 87.5: third */
  cs_trial(s, sw, 4, ROLE_SEARCH, 2, "ok", 5);       /* 94.5, a short rung: not a candidate */
  cs_trial(s, sw, 5, ROLE_SEARCH, 3, "oom", 20);     /* 3 again, failed: not repeated */
  cs_trial(s, sw, 6, ROLE_SEARCH, 4, "ok", 20);      /* 84: second */
  cs_trial(s, sw, 7, ROLE_SEARCH, 4, "ok", 20);      /* (and repeated) */
  cs_trial(s, sw, 8, ROLE_SEARCH, 5, "ok", 20);      /* 91.5 */
  cs_trial(s, sw, 9, ROLE_RERUN, 5, "ok", 20);       /* 5 repeated: the noise's */
  cs_trial(s, sw, 10, ROLE_CONFIRM, 6, "crash", 20); /* 6 confirmed (crashed) */
  cs_trial(s, sw, 11, ROLE_SEARCH, 6, "ok", 20);     /* 99 */
  cs_trial(s, sw, 12, ROLE_SEARCH, 3, "crash", 20);
  cs_noise = 0.06;
  CHECK_INT(store_trials_load_confirm(s, sw, 20, 2, NULL, NULL, &r, &n, &err), 0);
  /* kept: {} (0), the fastest two 0 (1) and 4 (6, 7), 5 (8, 9), 6 (10, 11) */
  int want[] = {0, 1, 6, 7, 8, 9, 10, 11};
  CHECK_INT(n, 8);
  for (int i = 0; i < n && i < 8; i++) {
    CHECK_INT(r[i].number, want[i]);
    CHECK_INT(r[i].n_steps, 0);
  }
  if (n == 8) {
    CHECK_INT(r[3].role, ROLE_SEARCH);
    CHECK_NEAR(r[3].value, 84, 0);
    CHECK_INT(r[6].status, OUTCOME_CRASH);
    CHECK_STR(r[0].config_json, "{}");
  }
  record_free(r, n);
  CHECK_INT(store_trials_load_confirm(s, sw, 20, 3, cs_want, NULL, &r, &n, &err), 0);
  CHECK_INT(n, 9); /* and 1 (3), the third fastest */
  for (int i = 0; i < n; i++) {
    int steps = r[i].number == 0 || r[i].number == 11 ? 6 : r[i].number == 10 ? 1 : 0;
    CHECK_INT(r[i].n_steps, steps);
  }
  if (n == 9) CHECK_INT(r[2].number, 3);
  record_free(r, n);
  free(err);
  CHECK_STORE_END(s);
  fx_remove(&t);
}

/* The repeated configurations are those two ok full-step trials ran now: not one whose
 * repeat ran a short rung, nor one whose repeat was deleted by hand (the configurations
 * report_repeats keeps are then more than those). */
TEST(confirm_repeats_are_those_of_the_trials_now) {
  fx_tmpdb t;
  store *s = fx_open(&t, "ft_crep");
  int64_t sw = cs_sweep(s, 20);
  char *err = NULL;
  trial_record *r = NULL;
  int n = -1;
  cs_trial(s, sw, 0, ROLE_BASELINE, -1, "ok", 20);
  cs_trial(s, sw, 1, ROLE_SEARCH, 4, "ok", 20);
  cs_trial(s, sw, 2, ROLE_SEARCH, 4, "ok", 20); /* 4 repeated */
  cs_trial(s, sw, 3, ROLE_SEARCH, 5, "ok", 20);
  cs_trial(s, sw, 4, ROLE_RERUN, 5, "ok", 20); /* 5 repeated, until trial 4 is deleted */
  cs_trial(s, sw, 5, ROLE_SEARCH, 5, "oom", 20);
  cs_trial(s, sw, 6, ROLE_SEARCH, 2, "ok", 20);
  cs_trial(s, sw, 7, ROLE_SEARCH, 2, "ok", 5); /* 2 again, a short rung: not repeated */
  CHECK_INT(store_trials_load_confirm(s, sw, 20, 0, NULL, NULL, &r, &n, &err), 0);
  int want[] = {0, 1, 2, 3, 4, 5};
  CHECK_INT(n, 6);
  for (int i = 0; i < n && i < 6; i++) CHECK_INT(r[i].number, want[i]);
  record_free(r, n);
  sqlite3 *db = NULL;
  CHECK_INT(sqlite3_open(t.path, &db), SQLITE_OK);
  CHECK_INT(sqlite3_exec(db, "DELETE FROM trials WHERE number = 4", NULL, NULL, NULL), SQLITE_OK);
  CHECK_INT(sqlite3_close(db), SQLITE_OK);
  CHECK_INT(store_trials_load_confirm(s, sw, 20, 0, NULL, NULL, &r, &n, &err), 0);
  CHECK_INT(n, 3); /* {} (0) and 4 (1, 2) */
  for (int i = 0; i < n && i < 3; i++) CHECK_INT(r[i].number, want[i]);
  record_free(r, n);
  free(err);
  CHECK_STORE_END(s);
  fx_remove(&t);
}
