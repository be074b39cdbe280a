/* Confirmation. Owns the rules for what is re-measured and how the pooled winner is chosen;
 * knows nothing about processes or SQL (it reads the trial records the caller loaded). */
#include "confirm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

static int is_search(const trial_record *t) {
  return t->role == ROLE_SEARCH || t->role == ROLE_RERUN;
}

static int is_ok(const trial_record *t) {
  return t->status == OUTCOME_OK && !isnan(t->value);
}

/* Run with the full step budget (steps_budget 0 means the experiment's default). */
static int is_full(const trial_record *t, int full_steps) {
  return full_steps <= 0 || t->steps_budget <= 0 || t->steps_budget >= full_steps;
}

/* Confirm trials of CONFIG that ended (whatever their outcome). */
static int confirms_done(const trial_record *t, int n, const char *config) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (t[i].role == ROLE_CONFIRM && outcome_is_final(t[i].status) &&
        strcmp(t[i].config_json, config) == 0)
      k++;
  return k;
}

/* Index of the fastest ok search trial whose config is not among CHOSEN, or -1. */
static int next_fastest(const trial_record *t, int n, int full_steps, const char **chosen,
                        int n_chosen) {
  int best = -1;
  for (int i = 0; i < n; i++) {
    if (!is_search(&t[i]) || !is_ok(&t[i]) || !is_full(&t[i], full_steps)) continue;
    int taken = 0;
    for (int k = 0; k < n_chosen && !taken; k++) taken = strcmp(chosen[k], t[i].config_json) == 0;
    if (!taken && (best < 0 || t[i].value < t[best].value)) best = i;
  }
  return best;
}

int confirm_fastest_needed(int top) {
  int pool = CONFIRM_POOL_PER_TOP * top, plan = top;
  if (pool > CONFIRM_MAX_POOL) pool = CONFIRM_MAX_POOL;
  if (plan > CONFIRM_MAX_TOP) plan = CONFIRM_MAX_TOP;
  int k = pool > plan ? pool : plan;
  return k > 0 ? k : 0;
}

int confirm_pool(const trial_record *t, int n, int full_steps, int pool, const char ***configs,
                 int *n_configs) {
  if (pool > CONFIRM_MAX_POOL) pool = CONFIRM_MAX_POOL;
  const char **out = xcalloc((size_t)(pool > 0 ? pool : 0) + 1, sizeof(char *));
  int m = 0;
  while (m < pool) {
    int i = next_fastest(t, n, full_steps, out, m);
    if (i < 0) break;
    out[m++] = t[i].config_json;
  }
  *configs = out;
  *n_configs = m;
  return 0;
}

/* E's estimate of CONFIG, or NULL (none, or no mean). */
static const confirm_estimate *estimate_of(const confirm_estimate *e, int n_e, const char *config) {
  for (int i = 0; i < n_e; i++)
    if (!isnan(e[i].mean) && e[i].config && strcmp(e[i].config, config) == 0) return &e[i];
  return NULL;
}

static int any_estimate(const confirm_estimate *e, int n_e) {
  for (int i = 0; i < n_e; i++)
    if (!isnan(e[i].mean) && e[i].config) return 1;
  return 0;
}

double confirm_shrunk(double m, int n, double tau2, const confirm_estimate *e) {
  if (!e || isnan(e->mean) || n <= 0 || !(tau2 > 0)) return m;
  double v = fmax(e->sd * e->sd - tau2, tau2 / 4);
  double a = n / tau2, b = 1 / v;
  return (a * m + b * e->mean) / (a + b);
}

/* The mean of the logs of CONFIG's ok full-step values (search trials only with SEARCH_ONLY),
 * their count in *COUNT. */
static double log_mean(const trial_record *t, int n, const char *config, int full_steps,
                       int search_only, int *count) {
  double s = 0;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (!is_ok(&t[i]) || t[i].value <= 0 || !is_full(&t[i], full_steps) ||
        (search_only && !is_search(&t[i])) || strcmp(t[i].config_json, config) != 0)
      continue;
    s += log(t[i].value);
    k++;
  }
  *count = k;
  return k ? s / k : NAN;
}

/* By configuration, then by place in T: the order a stable sort gives, so that each
 * configuration's logs are summed in trial order whatever else T holds. */
static int by_config(const void *a, const void *b) {
  const trial_record *x = *(const trial_record *const *)a, *y = *(const trial_record *const *)b;
  int c = strcmp(x->config_json, y->config_json);
  return c ? c : (x > y) - (x < y);
}

/* confirm_noise over the trials that KEEP accepts. */
static double noise_of(const trial_record *t, int n, int full_steps, int search_only) {
  const trial_record **ok = xcalloc((size_t)n + 1, sizeof *ok);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (is_ok(&t[i]) && t[i].value > 0 && is_full(&t[i], full_steps) &&
        (!search_only || is_search(&t[i])))
      ok[m++] = &t[i];
  qsort(ok, (size_t)m, sizeof *ok, by_config);
  double ss = 0;
  int df = 0;
  for (int a = 0; a < m;) {
    int b = a;
    double mean = 0;
    while (b < m && strcmp(ok[b]->config_json, ok[a]->config_json) == 0)
      mean += log(ok[b++]->value);
    mean /= b - a;
    for (int k = a; k < b; k++) ss += (log(ok[k]->value) - mean) * (log(ok[k]->value) - mean);
    df += b - a - 1;
    a = b;
  }
  free(ok);
  return confirm_noise_posterior(ss, df);
}

double confirm_noise_posterior(double ss, int df) {
  /* The likelihood of sigma is sigma^-df exp(-ss / (2 sigma^2)); on a grid even in log sigma
   * the log-uniform prior is flat, so the posterior weights are the likelihood's. */
  enum { K = 400 };
  double lo = log(CONFIRM_NOISE_LO), hi = log(CONFIRM_NOISE_HI), lw[K + 1], s2[K + 1];
  double top = -INFINITY, sw = 0, sv = 0;
  for (int k = 0; k <= K; k++) {
    double sd = exp(lo + (hi - lo) * k / K);
    s2[k] = sd * sd;
    lw[k] = -df * log(sd) - ss / (2 * s2[k]);
    if (lw[k] > top) top = lw[k];
  }
  for (int k = 0; k <= K; k++) {
    double w = exp(lw[k] - top);
    sw += w, sv += w * s2[k];
  }
  return sv / sw;
}

double confirm_noise(const trial_record *t, int n, int full_steps) {
  return noise_of(t, n, full_steps, 0);
}

/* Up to TOP candidates by their shrunk search measurements, among the estimated ones; the
 * configurations already confirmed (a resumed plan) stay first, so a model that now also
 * knows their confirm trials cannot move the plan to others. Returns how many. */
static int shrunk_candidates(const trial_record *t, int n, int full_steps, int top,
                             const confirm_estimate *est, int n_est, const char **cand) {
  int m = 0;
  for (int i = 0; i < n && m < top; i++) {
    if (t[i].role != ROLE_CONFIRM || strcmp(t[i].config_json, "{}") == 0) continue;
    int seen = 0;
    for (int k = 0; k < m && !seen; k++) seen = strcmp(cand[k], t[i].config_json) == 0;
    if (!seen) cand[m++] = t[i].config_json;
  }
  /* The noise as the search alone measured it: on resume the confirm trials stay out. */
  double tau2 = noise_of(t, n, full_steps, 1);
  while (m < top) {
    int best = -1;
    double best_s = NAN;
    for (int e = 0; e < n_est; e++) {
      if (!est[e].config) continue; /* no mean: its measurements alone */
      int taken = 0;
      for (int k = 0; k < m && !taken; k++) taken = strcmp(cand[k], est[e].config) == 0;
      if (taken) continue;
      int cnt;
      double lm = log_mean(t, n, est[e].config, full_steps, 1, &cnt);
      if (cnt == 0) continue;
      double s = confirm_shrunk(lm, cnt, tau2, isnan(est[e].mean) ? NULL : &est[e]);
      if (best < 0 || s < best_s) best = e, best_s = s;
    }
    if (best < 0) break;
    cand[m++] = est[best].config;
  }
  return m;
}

double confirm_moves(int n, int r, double tau2, const confirm_estimate *e) {
  double prior = e && !isnan(e->mean) ? 1 / fmax(e->sd * e->sd - tau2, tau2 / 4) : 0;
  return 1 / (n / tau2 + prior) - 1 / ((n + r) / tau2 + prior);
}

/* Keeps, of the N candidates CAND (the first the leader, or the lowest score), those that are
 * confirmed already (a resumed plan), the leader and those whose REPEATS re-runs can still
 * change the answer (src/sweep/confirm.h, confirm_plan). Returns how many are kept, in order. */
static int can_change(const trial_record *t, int n, int full_steps, int repeats, double z,
                      const confirm_estimate *est, int n_est, const char **cand, int n_cand) {
  if (n_cand <= 1 || isinf(z)) return n_cand;
  double tau2 = noise_of(t, n, full_steps, 1), s[CONFIRM_MAX_TOP], mv[CONFIRM_MAX_TOP];
  int lead = 0;
  for (int k = 0; k < n_cand; k++) {
    int cnt;
    double lm = log_mean(t, n, cand[k], full_steps, 1, &cnt);
    const confirm_estimate *e = estimate_of(est, n_est, cand[k]);
    s[k] = cnt ? confirm_shrunk(lm, cnt, tau2, e) : NAN;
    mv[k] = cnt ? confirm_moves(cnt, repeats, tau2, e) : NAN;
    if (!isnan(s[k]) && (isnan(s[lead]) || s[k] < s[lead])) lead = k;
  }
  int m = 0;
  for (int k = 0; k < n_cand; k++)
    if (k == lead || isnan(s[k]) || confirms_done(t, n, cand[k]) > 0 ||
        s[k] - s[lead] <= z * sqrt(mv[k] + mv[lead]))
      cand[m++] = cand[k];
  return m;
}

int confirm_plan(const trial_record *t, int n, int full_steps, int top, int repeats, double z,
                 const confirm_estimate *est, int n_est, const char ***configs, int *n_configs) {
  if (top > CONFIRM_MAX_TOP) top = CONFIRM_MAX_TOP;
  const char *cand[CONFIRM_MAX_TOP + 1] = {"{}"};
  int n_cand = 1, done[CONFIRM_MAX_TOP + 1], total = 0;
  if (top > 0 && any_estimate(est, n_est))
    n_cand += shrunk_candidates(t, n, full_steps, top, est, n_est, cand + 1);
  while (n_cand <= top) { /* no model, or too few estimated: the fastest measured */
    int i = next_fastest(t, n, full_steps, cand + 1, n_cand - 1);
    if (i < 0) break;
    cand[n_cand++] = t[i].config_json;
  }
  n_cand = 1 + can_change(t, n, full_steps, repeats, z, est, n_est, cand + 1, n_cand - 1);
  for (int k = 0; k < n_cand; k++) {
    done[k] = confirms_done(t, n, cand[k]);
    if (done[k] < repeats) total += repeats - done[k];
  }
  const char **out = xcalloc((size_t)total + 1, sizeof(char *));
  int m = 0;
  /* Interleave: one round of every candidate before the next repeat, so a drift in the
   * machine's speed over time hits all of them alike. A candidate with D confirm trials
   * already done (resume) joins from round D on. */
  for (int r = 0; r < repeats; r++)
    for (int k = 0; k < n_cand; k++)
      if (r >= done[k]) out[m++] = cand[k];
  *configs = out;
  *n_configs = m;
  return 0;
}

/* Collects the ok values and the step times (after SKIP) of CONFIG's trials. */
typedef struct {
  double *values, *steps;
  int n_values, n_steps, n_confirms;
  int64_t first_id;
} pooled;

static void pool(const trial_record *t, int n, const char *config, int full_steps, int skip,
                 pooled *p) {
  memset(p, 0, sizeof *p);
  p->values = xcalloc((size_t)n + 1, sizeof(double));
  int cap = 0;
  for (int i = 0; i < n; i++) {
    if (!is_ok(&t[i]) || !is_full(&t[i], full_steps) || strcmp(t[i].config_json, config) != 0)
      continue;
    if (p->n_values == 0) p->first_id = t[i].id;
    p->values[p->n_values++] = t[i].value;
    if (t[i].role == ROLE_CONFIRM) p->n_confirms++;
    for (int s = skip; s < t[i].n_steps; s++) {
      if (p->n_steps == cap)
        p->steps = xrealloc(p->steps, sizeof(double) * (size_t)(cap = cap * 2 + 64));
      p->steps[p->n_steps++] = t[i].steps[s];
    }
  }
}

static void pool_free(pooled *p) {
  free(p->values);
  free(p->steps);
}

/* W from the pooled baseline BASE and the pooled configuration BEST (whose value is VALUE). */
static void fill_winner(const pooled *base, const pooled *best, double value, store_winner *w) {
  w->trial_id = best->first_id;
  w->kind = NULL;
  w->value = value;
  w->n_trials = best->n_values;
  w->baseline = base->n_values ? stats_median(base->values, base->n_values) : NAN;
  w->lo = w->hi = NAN;
  double sp;
  if (base->n_steps && best->n_steps)
    stats_speedup_ci(base->steps, base->n_steps, best->steps, best->n_steps, 4242, &sp, &w->lo,
                     &w->hi);
}

int confirm_winner(const trial_record *t, int n, int full_steps, int skip,
                   const confirm_estimate *est, int n_est, store_winner *w) {
  pooled base, best = {0}, cur;
  double best_score = NAN, best_value = NAN;
  int found = 0, model = any_estimate(est, n_est);
  double tau2 = model ? confirm_noise(t, n, full_steps) : NAN;
  pool(t, n, "{}", full_steps, skip, &base);
  for (int i = 0; i < n; i++) {
    if (t[i].role != ROLE_CONFIRM || strcmp(t[i].config_json, "{}") == 0) continue;
    int seen = 0; /* each config once: its first confirm trial stands for it */
    for (int k = 0; k < i && !seen; k++)
      seen = t[k].role == ROLE_CONFIRM && strcmp(t[k].config_json, t[i].config_json) == 0;
    if (seen) continue;
    pool(t, n, t[i].config_json, full_steps, skip, &cur);
    double v = cur.n_confirms > 0 ? stats_median(cur.values, cur.n_values) : NAN;
    double score = v;
    if (!isnan(v) && model) { /* the shrunk estimate of its pooled measurements */
      int cnt;
      double lm = log_mean(t, n, t[i].config_json, full_steps, 0, &cnt);
      score = cnt ? confirm_shrunk(lm, cnt, tau2, estimate_of(est, n_est, t[i].config_json)) : NAN;
    }
    if (!isnan(score) && (!found || score < best_score)) {
      if (found) pool_free(&best);
      best = cur, best_score = score, best_value = v, found = 1;
    } else {
      pool_free(&cur);
    }
  }
  if (found) {
    fill_winner(&base, &best, best_value, w);
    pool_free(&best);
  }
  pool_free(&base);
  return found ? 0 : -1;
}

int confirm_config(const trial_record *t, int n, const char *config, int full_steps, int skip,
                   store_winner *w) {
  pooled base, cur;
  pool(t, n, "{}", full_steps, skip, &base);
  pool(t, n, config, full_steps, skip, &cur);
  int found = cur.n_values > 0;
  if (found) fill_winner(&base, &cur, stats_median(cur.values, cur.n_values), w);
  pool_free(&cur);
  pool_free(&base);
  return found ? 0 : -1;
}

int confirm_add_recipe(const trial_record *t, int n, const char *recipe, int repeats,
                       const char ***configs, int *n_configs) {
  if (!recipe || strcmp(recipe, "{}") == 0) return 0;
  int has_ok = 0, in_plan = 0;
  for (int i = 0; i < n && !has_ok; i++) has_ok = is_ok(&t[i]) && !strcmp(t[i].config_json, recipe);
  for (int k = 0; k < *n_configs && !in_plan; k++) in_plan = !strcmp((*configs)[k], recipe);
  int missing = repeats - confirms_done(t, n, recipe);
  if (!has_ok || in_plan || missing <= 0) return 0;
  const char **out = xcalloc((size_t)(*n_configs + missing) + 1, sizeof(char *));
  int m = 0, added = 0;
  /* After the first candidate that follows each of the baseline's re-runs (each round starts
   * with the baseline, then the leader), so the recipe is interleaved with the others as they
   * are with each other, and a plan cut to the trials left (sweep_plan_confirmation) keeps the
   * baseline, the leader, the recipe, then the contenders, in that order. A baseline with no
   * candidate after it before the next baseline: the recipe right after it. The rest at the
   * end. */
  int pending = 0;
  for (int k = 0; k < *n_configs; k++) {
    int is_base = !strcmp((*configs)[k], "{}");
    if (is_base && pending && added < missing) out[m++] = recipe, added++;
    out[m++] = (*configs)[k];
    if (!is_base && pending && added < missing) out[m++] = recipe, added++;
    pending = is_base;
  }
  while (added < missing) out[m++] = recipe, added++;
  free(*configs);
  *configs = out;
  *n_configs = m;
  return added;
}

/* Whether the pooled FAST is confirmed faster than the pooled SLOW: the lower end of the 95 %
 * interval of the speedup of FAST over SLOW above 1. */
static int confirmed_faster(const pooled *fast, const pooled *slow) {
  double sp, lo, hi;
  if (!fast->n_steps || !slow->n_steps || fast->n_confirms == 0 || slow->n_confirms == 0) return 0;
  if (stats_speedup_ci(slow->steps, slow->n_steps, fast->steps, fast->n_steps, 4242, &sp, &lo,
                       &hi) != 0)
    return 0;
  return lo > 1;
}

static const char *config_of_trial(const trial_record *t, int n, int64_t id) {
  for (int i = 0; i < n; i++)
    if (t[i].id == id) return t[i].config_json;
  return NULL;
}

confirm_answer confirm_guard(const trial_record *t, int n, int full_steps, int skip,
                             const char *recipe, store_winner *w) {
  const char *won = config_of_trial(t, n, w->trial_id);
  if (!won || !strcmp(won, "{}")) return CONFIRM_WINNER;
  if (recipe && !strcmp(recipe, "{}")) recipe = NULL;
  pooled base, best, rec = {0};
  pool(t, n, "{}", full_steps, skip, &base);
  pool(t, n, won, full_steps, skip, &best);
  int have_rec = recipe && strcmp(recipe, won) != 0;
  if (have_rec) pool(t, n, recipe, full_steps, skip, &rec);
  have_rec = have_rec && rec.n_confirms > 0 && rec.n_values > 0;
  int beats_base = confirmed_faster(&best, &base);
  int beats_rec = !have_rec || confirmed_faster(&best, &rec);
  confirm_answer a = CONFIRM_WINNER;
  if (recipe && !strcmp(recipe, won)) { /* the recipe won: say so */
    a = beats_base ? CONFIRM_RECIPE : CONFIRM_BASELINE;
    if (a == CONFIRM_RECIPE) pool(t, n, recipe, full_steps, skip, &rec);
  } else if (!beats_base || !beats_rec) {
    double v_best = stats_median(best.values, best.n_values);
    double v_rec = have_rec ? stats_median(rec.values, rec.n_values) : NAN;
    if (have_rec && confirmed_faster(&rec, &base))
      a = CONFIRM_RECIPE; /* the recipe is confirmed; the winner is not confirmed past it */
    else if (beats_base && have_rec && v_rec <= v_best)
      a = CONFIRM_RECIPE; /* not confirmed past the recipe, which measured no slower */
    else if (!beats_base)
      a = CONFIRM_BASELINE;
  }
  if (a == CONFIRM_RECIPE) fill_winner(&base, &rec, stats_median(rec.values, rec.n_values), w);
  if (a == CONFIRM_BASELINE && base.n_values > 0) {
    fill_winner(&base, &base, stats_median(base.values, base.n_values), w);
    w->lo = w->hi = NAN; /* the baseline against itself: no interval to give */
  } else if (a == CONFIRM_BASELINE) {
    a = CONFIRM_WINNER; /* no ok baseline to fall back to: the pooled winner stands */
  }
  pool_free(&base);
  pool_free(&best);
  pool_free(&rec);
  return a;
}
