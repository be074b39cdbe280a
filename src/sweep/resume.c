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

/* True when some finished trial already holds CONFIG (so a lost copy needs no re-run). */
static int config_done(const trial_record *t, int n, const char *config) {
  for (int i = 0; i < n; i++)
    if (outcome_is_final(t[i].status) && strcmp(t[i].config_json, config) == 0) return 1;
  return 0;
}

static int planned(const resume_plan *p, const char *config) {
  for (int k = 0; k < p->n_reruns; k++)
    if (strcmp(p->reruns[k].config_json, config) == 0) return 1;
  return 0;
}

static void add_rerun(resume_plan *p, const trial_record *t) {
  int base = t->role == ROLE_BASELINE;
  p->reruns[p->n_reruns++] = (resume_rerun){.config_json = t->config_json,
                                            .steps_budget = t->steps_budget,
                                            .role = base ? ROLE_BASELINE : ROLE_RERUN,
                                            .rerun_of = base ? 0 : t->number};
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

void resume_plan_make(const trial_record *t, int n, resume_plan *out) {
  memset(out, 0, sizeof *out);
  out->baseline_ms = NAN;
  out->reruns = xcalloc((size_t)n + 1, sizeof *out->reruns);
  out->orphans = xcalloc((size_t)n + 1, sizeof *out->orphans);
  out->history = xcalloc((size_t)n + 1, sizeof *out->history);
  int seen_base = 0;
  for (int i = 0; i < n; i++) {
    if (t[i].number >= out->next_number) out->next_number = t[i].number + 1;
    /* `flagtune minimize`'s trials are not the sweep's search: they neither count against
     * its budget nor run again here (minimize continues them itself); only a process a dead
     * minimize left running is reaped. */
    if (t[i].role == ROLE_MINIMIZE) {
      if (t[i].status == OUTCOME_RUNNING)
        out->orphans[out->n_orphans++] = (exec_orphan){.number = t[i].number, .pid = t[i].pid};
      continue;
    }
    if (t[i].role != ROLE_BASELINE) out->history[out->n_history++] = t[i];
    if (t[i].status == OUTCOME_RUNNING)
      out->orphans[out->n_orphans++] = (exec_orphan){.number = t[i].number, .pid = t[i].pid};
    if (outcome_is_final(t[i].status)) {
      count(out, &t[i]);
    } else if (!config_done(t, n, t[i].config_json) && !planned(out, t[i].config_json)) {
      add_rerun(out, &t[i]);
    }
    if (t[i].role == ROLE_BASELINE) seen_base = 1;
  }
  /* Stopped before its first trial was stored (a Ctrl-C during the software probe, a kill
   * right after the sweep's row): the baseline, trial 0, runs first, as in a new sweep. */
  if (!seen_base) {
    memmove(out->reruns + 1, out->reruns, sizeof *out->reruns * (size_t)out->n_reruns);
    out->reruns[0] = (resume_rerun){.config_json = "{}", .role = ROLE_BASELINE};
    out->n_reruns++;
  }
}

void resume_plan_free(resume_plan *p) {
  free(p->reruns);
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
