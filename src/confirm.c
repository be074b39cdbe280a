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

int confirm_plan(const trial_record *t, int n, int full_steps, int top, int repeats,
                 const char ***configs, int *n_configs) {
  if (top > CONFIRM_MAX_TOP) top = CONFIRM_MAX_TOP;
  const char *cand[CONFIRM_MAX_TOP + 1] = {"{}"};
  int n_cand = 1, done[CONFIRM_MAX_TOP + 1], total = 0;
  while (n_cand <= top) {
    int i = next_fastest(t, n, full_steps, cand + 1, n_cand - 1);
    if (i < 0) break;
    cand[n_cand++] = t[i].config_json;
  }
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
  w->value = value;
  w->n_trials = best->n_values;
  w->baseline = base->n_values ? stats_median(base->values, base->n_values) : NAN;
  w->lo = w->hi = NAN;
  double sp;
  if (base->n_steps && best->n_steps)
    stats_speedup_ci(base->steps, base->n_steps, best->steps, best->n_steps, 4242, &sp, &w->lo,
                     &w->hi);
}

int confirm_winner(const trial_record *t, int n, int full_steps, int skip, store_winner *w) {
  pooled base, best = {0}, cur;
  double best_value = NAN;
  int found = 0;
  pool(t, n, "{}", full_steps, skip, &base);
  for (int i = 0; i < n; i++) {
    if (t[i].role != ROLE_CONFIRM || strcmp(t[i].config_json, "{}") == 0) continue;
    int seen = 0; /* each config once: its first confirm trial stands for it */
    for (int k = 0; k < i && !seen; k++)
      seen = t[k].role == ROLE_CONFIRM && strcmp(t[k].config_json, t[i].config_json) == 0;
    if (seen) continue;
    pool(t, n, t[i].config_json, full_steps, skip, &cur);
    double v = cur.n_confirms > 0 ? stats_median(cur.values, cur.n_values) : NAN;
    if (!isnan(v) && (!found || v < best_value)) {
      if (found) pool_free(&best);
      best = cur, best_value = v, found = 1;
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
