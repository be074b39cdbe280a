/* A trial's cost in wall time (src/sweep/cost.h): the samples of a sweep's finished trials and the
 * prediction for a step budget. Pure: must not read the clock, the store or a trial. */
#include "cost.h"

#include <math.h>
#include <stdlib.h>

#include "diag.h"
#include "stats.h"

double cost_step_ms(int from_n, double from_s, int last_n, double last_s) {
  if (last_n <= from_n) return NAN;
  return (last_s - from_s) * 1e3 / (last_n - from_n);
}

void cost_add(cost_model *m, double wall_s, int n_steps, int budget, double step_ms) {
  if (!(wall_s >= 0)) return;
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 16;
    m->base_s = xrealloc(m->base_s, sizeof(double) * (size_t)m->cap);
    m->steps_s = xrealloc(m->steps_s, sizeof(double) * (size_t)m->cap);
    m->budget = xrealloc(m->budget, sizeof(int) * (size_t)m->cap);
  }
  double steps = n_steps > 0 && step_ms > 0 ? n_steps * step_ms / 1e3 : 0;
  if (steps > wall_s) steps = wall_s;
  m->base_s[m->n] = wall_s - steps;
  m->steps_s[m->n] = steps;
  m->budget[m->n++] = budget > 0 ? budget : 0;
}

/* Sample I's cost at step budget BUDGET. */
static double sample_at(const cost_model *m, int i, int budget) {
  double scale = budget > 0 && m->budget[i] > 0 ? (double)budget / m->budget[i] : 1.0;
  return m->base_s[i] + m->steps_s[i] * scale;
}

/* The kept prediction for BUDGET, made when there is room; NULL when there is none. */
static cost_kept *kept_for(cost_model *m, int budget) {
  for (int i = 0; i < m->n_kept; i++)
    if (m->kept[i].budget == budget) return &m->kept[i];
  if (m->n_kept == COST_KEPT) return NULL;
  cost_kept *k = &m->kept[m->n_kept++];
  k->budget = budget;
  k->fed = 0;
  stats_running_init(&k->med, REDUCE_MEDIAN);
  return k;
}

double cost_predict(cost_model *m, int budget) {
  if (m->n == 0) return NAN;
  cost_kept *k = kept_for(m, budget);
  if (k) {
    for (; k->fed < m->n; k->fed++) stats_running_add(&k->med, sample_at(m, k->fed, budget));
    return stats_running_value(&k->med);
  }
  double *v = xmalloc(sizeof(double) * (size_t)m->n);
  for (int i = 0; i < m->n; i++) v[i] = sample_at(m, i, budget);
  double med = stats_median(v, m->n);
  free(v);
  return med;
}

void cost_free(cost_model *m) {
  free(m->base_s);
  free(m->steps_s);
  free(m->budget);
  for (int i = 0; i < m->n_kept; i++) stats_running_free(&m->kept[i].med);
  *m = (cost_model){0};
}
