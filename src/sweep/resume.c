/* Resume as a plan. Owns the rules for what an interrupted sweep still owes: which trials
 * count, which configurations run again (each once, and only when no finished trial holds
 * it), which processes may be orphans, and what the strategy's history replays. Pure: knows
 * nothing about processes, the loop or SQL. */
#include "resume.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

static int planned(const resume_plan *p, const char *config) {
  for (int k = 0; k < p->n_reruns; k++)
    if (strcmp(p->reruns[k].config_json, config) == 0) return 1;
  return 0;
}

/* R (and its copy of the configuration) appended to *LIST. */
static void push_rerun(resume_rerun **list, int *n, int *cap, resume_rerun r) {
  if (*n == *cap) *list = xrealloc(*list, sizeof **list * (size_t)(*cap = *cap * 2 + 8));
  (*list)[(*n)++] = r;
}

/* Counts a finished trial. */
static void count(resume_plan *p, const trial_record *t) {
  p->counted++;
  if (t->role == ROLE_BASELINE) p->baseline_ended = 1;
  if (t->role == ROLE_CONFIRM) p->confirm_counted++;
  if (t->status != OUTCOME_OK) return;
  if (t->role == ROLE_BASELINE) {
    if (!p->baseline_ok) p->baseline_id = t->id;
    p->baseline_ok = 1;
    p->baseline_ms = t->value;
  } else {
    p->n_ok++;
  }
}

static void add_orphan(resume_plan *p, const trial_record *t) {
  if (p->n_orphans == p->cap_orphans)
    p->orphans = xrealloc(p->orphans,
                          sizeof *p->orphans * (size_t)(p->cap_orphans = p->cap_orphans * 2 + 8));
  p->orphans[p->n_orphans++] = (exec_orphan){.number = t->number, .pid = t->pid};
}

void resume_plan_init(resume_plan *p) {
  memset(p, 0, sizeof *p);
  p->baseline_ms = NAN;
}

int resume_plan_history(const trial_record *t) {
  return t->role != ROLE_MINIMIZE && t->role != ROLE_BASELINE;
}

void resume_plan_add(resume_plan *p, const trial_record *t) {
  if (t->number >= p->next_number) p->next_number = t->number + 1;
  /* `flagtune minimize`'s trials are not the sweep's search: they neither count against
   * its budget nor run again here (minimize continues them itself); only a process a dead
   * minimize left running is reaped. */
  if (t->role == ROLE_MINIMIZE) {
    if (t->status == OUTCOME_RUNNING) add_orphan(p, t);
    return;
  }
  if (t->role != ROLE_BASELINE) p->n_history++;
  if (t->status == OUTCOME_RUNNING) add_orphan(p, t);
  if (outcome_is_final(t->status)) {
    count(p, t);
  } else {
    int base = t->role == ROLE_BASELINE;
    push_rerun(&p->pending, &p->n_pending, &p->cap_pending,
               (resume_rerun){.config_json = xstrdup(t->config_json ? t->config_json : "{}"),
                              .steps_budget = t->steps_budget,
                              .role = base ? ROLE_BASELINE : ROLE_RERUN,
                              .rerun_of = base ? 0 : t->number});
  }
  if (t->role == ROLE_BASELINE) p->seen_base = 1;
}

void resume_plan_end(resume_plan *p, int (*done)(void *ud, const char *config), void *ud) {
  /* Stopped before its first trial was stored (a Ctrl-C during the software probe, a kill
   * right after the sweep's row): the baseline, trial 0, runs first, as in a new sweep. */
  if (!p->seen_base)
    push_rerun(&p->reruns, &p->n_reruns, &p->cap_reruns,
               (resume_rerun){.config_json = xstrdup("{}"), .role = ROLE_BASELINE});
  /* Each unfinished configuration once, in trial order, unless a finished trial holds it. */
  for (int i = 0; i < p->n_pending; i++) {
    resume_rerun *r = &p->pending[i];
    if (done(ud, r->config_json) || planned(p, r->config_json)) {
      free(r->config_json);
      continue;
    }
    push_rerun(&p->reruns, &p->n_reruns, &p->cap_reruns, *r);
  }
  free(p->pending);
  p->pending = NULL;
  p->n_pending = p->cap_pending = 0;
}

typedef struct {
  const trial_record *t;
  int n;
} records;

/* True when some finished trial of the records holds CONFIG. */
static int config_done(void *ud, const char *config) {
  const records *r = ud;
  for (int i = 0; i < r->n; i++)
    if (outcome_is_final(r->t[i].status) && strcmp(r->t[i].config_json, config) == 0) return 1;
  return 0;
}

void resume_plan_make(const trial_record *t, int n, resume_plan *out) {
  resume_plan_init(out);
  out->history = xcalloc((size_t)n + 1, sizeof *out->history);
  int n_history = 0;
  for (int i = 0; i < n; i++) {
    resume_plan_add(out, &t[i]);
    if (resume_plan_history(&t[i])) out->history[n_history++] = t[i];
  }
  records r = {t, n};
  resume_plan_end(out, config_done, &r);
}

void resume_plan_free(resume_plan *p) {
  for (int i = 0; i < p->n_reruns; i++) free(p->reruns[i].config_json);
  for (int i = 0; i < p->n_pending; i++) free(p->pending[i].config_json);
  free(p->reruns);
  free(p->pending);
  free(p->orphans);
  free(p->history);
  memset(p, 0, sizeof *p);
}

/* splitmix64's finalizer: a one-trial difference in the history gives an unrelated seed. */
int64_t resume_seed(int64_t seed, int n_history) {
  uint64_t z = (uint64_t)seed + 0x9E3779B97F4A7C15ull * (uint64_t)(n_history + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (int64_t)(z >> 16);
}
