/* What a sweep tells people while and after it runs: the live view's status area and its line
 * per finished trial (drawn by progress.c from what the scheduler counts), and the notify hooks
 * at its end (run by run_process.c). Shares sweep_state.h with the scheduler (sweep.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "launch.h"
#include "lhost.h"
#include "progress.h"
#include "run_process.h"
#include "stats.h"
#include "sweep_state.h"

/* Writing progress to a terminal that closed (SSH gone) or a pipe whose reader left
 * (`| tee` ended) fails with EIO or EPIPE (SIGPIPE is ignored): the sweep stops printing
 * and keeps running. */
void sweep_quiet_if_unwritable(void) {
  if (!ferror(stderr)) return;
  diag_quiet = 1;
  clearerr(stderr);
}

/* The trials shown on the status area, running now. */
/* Not a terminal (a log, `| tee`, --detach): whether a status line is due, every
 * $FLAGTUNE_STATUS_EVERY seconds (default 60; 0: never). */
static int status_line_due(void) {
  static double last = -1;
  const char *e = getenv("FLAGTUNE_STATUS_EVERY");
  double every = e && *e ? atof(e) : 60, now = sweep_now_s();
  if (!(every > 0)) return 0;
  if (last < 0) last = now; /* the first after one interval, not at the start */
  if (now - last < every) return 0;
  last = now;
  return 1;
}

void sweep_view_status(sweep *sw) {
  if (sw->view.quiet || (!sw->view.tty && !status_line_due())) return;
  progress_running run[16];
  int n = 0;
  for (int i = 0; i < sw->parallel && n < 16; i++) {
    if (!sw->slots[i]) continue;
    trial_view v = trial_get_view(sw->slots[i]);
    run[n++] = (progress_running){.number = v.number,
                                  .label = v.number == 0 ? "baseline" : v.label,
                                  .n_steps = v.n_steps,
                                  .steps_budget = v.steps_budget,
                                  .profiling = v.profiling,
                                  .elapsed_s = v.elapsed_s};
  }
  progress_state st = {.done = budget_done_shown(&sw->bud),
                       .total = sw->bud.trials,
                       .parallel = sw->parallel,
                       .best_ms = sw->best.value,
                       .baseline_ms = sw->best.baseline,
                       .higher = sw->exp->metric_higher,
                       .best_number = sw->best.number,
                       .best_lo = sw->best.lo,
                       .best_hi = sw->best.hi,
                       .eta_s = -1,
                       .deadline_left_s = budget_time_left(&sw->bud, sweep_now_s()),
                       .running = run,
                       .n_running = n};
  memcpy(st.counts, sw->counts, sizeof st.counts);
  /* ETA from the measured costs: the trials left, each what a trial of the full step budget
   * costs so far (cost_predict), over the slots, less what the running ones have done. */
  if (sw->cost.n > 0) {
    double med = cost_predict(&sw->cost, sw->exp->budget_steps), work = 0;
    int left = sw->bud.trials - sw->bud.done - n;
    if (left > 0) work += left * med;
    for (int i = 0; i < n; i++) work += run[i].elapsed_s < med ? med - run[i].elapsed_s : 0;
    st.eta_s = work / sw->parallel;
    if (st.deadline_left_s >= 0 && st.eta_s > st.deadline_left_s) st.eta_s = st.deadline_left_s;
  }
  if (sw->view.tty)
    progress_print_status(&sw->view, &st);
  else
    progress_print_status_line(&sw->view, &st);
  sweep_quiet_if_unwritable();
}

/* The short names of lua/progress.lua's short_names, once: names[0..n) then their shorts. A
 * failure costs only the shortening. */
static void load_names(sweep *sw) {
  if (sw->names || !sw->host) return;
  char *err = NULL, *save = NULL;
  char *all = lhost_call_text(sw->host, "progress", "short_names", sw->exp->spec_ref, &err);
  if (all) {
    int n = 0;
    for (char *p = all; *p; p++) n += *p == '\n';
    sw->names = xcalloc(2 * (size_t)(n + 1) + 1, sizeof(char *));
    for (char *ln = strtok_r(all, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
      char *tab = strchr(ln, '\t');
      if (!tab) continue;
      *tab = '\0';
      sw->names[sw->n_names] = xstrdup(ln);
      sw->names[n + 1 + sw->n_names++] = xstrdup(tab + 1);
    }
    /* the shorts after the names, packed */
    memmove(sw->names + sw->n_names, sw->names + n + 1, (size_t)sw->n_names * sizeof(char *));
    free(all);
  }
  if (!sw->names) sw->names = xcalloc(1, sizeof(char *));
  if (err && diag_verbose) diag_warn("progress: %s", err);
  free(err);
}

static void held_free(sweep_held *h) {
  free((char *)h->line.label);
  free((char *)h->line.reason);
}

void sweep_view_free(sweep *sw) {
  for (int i = 0; i < sw->n_held; i++) held_free(&sw->held[i]);
  free(sw->held);
  sw->held = NULL;
  sw->n_held = 0;
  for (int i = 0; sw->names && i < 2 * sw->n_names; i++) free(sw->names[i]);
  free(sw->names);
  sw->names = NULL;
}

void sweep_report_progress(sweep *sw, const trial_result *r) {
  const trial_record *t = &r->record;
  load_names(sw);
  /* Nothing is reported as its outcome unless it is stored, and durable. */
  int steps = t->steps_budget;
  progress_line l = {
      .number = t->number,
      .role = t->role,
      .is_baseline = t->number == 0 || t->role == ROLE_BASELINE ||
                     (t->config_json && strcmp(t->config_json, "{}") == 0),
      .status = t->status,
      .value = t->value,
      .baseline_ms = sw->best.baseline,
      .higher = sw->exp->metric_higher,
      .rung_steps =
          steps > 0 && sw->exp->budget_steps > 0 && steps < sw->exp->budget_steps ? steps : 0,
      .label = r->label,
      .defaults = (const char *const *)sw->defaults,
      .n_defaults = sw->n_defaults,
      .names = (const char *const *)sw->names,
      .shorts = (const char *const *)sw->names + sw->n_names,
      .n_names = sw->n_names,
      .reason = r->store_err ? NULL : r->reason,
      .not_stored = r->store_err != NULL,
      .done = budget_done_shown(&sw->bud),
      .total = sw->bud.trials};
  if (!r->store_err && r->ticket > sw->durable_done) {
    if (sw->n_held == sw->cap_held) {
      sw->cap_held = sw->cap_held ? 2 * sw->cap_held : 8;
      sw->held = xrealloc(sw->held, sizeof *sw->held * (size_t)sw->cap_held);
    }
    l.label = l.label ? xstrdup(l.label) : NULL;
    l.reason = l.reason ? xstrdup(l.reason) : NULL;
    sw->held[sw->n_held++] = (sweep_held){.line = l, .ticket = r->ticket};
    return;
  }
  progress_print_line(&sw->view, &l);
  sweep_quiet_if_unwritable();
  sweep_view_status(sw);
}

void sweep_view_release(sweep *sw, int failed) {
  int kept = 0, printed = 0;
  for (int i = 0; i < sw->n_held; i++) {
    sweep_held *h = &sw->held[i];
    if (h->ticket > sw->durable_done && !failed) {
      sw->held[kept++] = *h;
      continue;
    }
    if (h->ticket > sw->durable_done) { /* stored, but maybe not on disk: not reported so */
      h->line.not_stored = 1;
      free((char *)h->line.reason);
      h->line.reason = NULL;
      if (sw->counts[h->line.status] > 0) sw->counts[h->line.status]--;
    }
    progress_print_line(&sw->view, &h->line);
    held_free(h);
    printed++;
  }
  sw->n_held = kept;
  if (!printed) return;
  sweep_quiet_if_unwritable();
  sweep_view_status(sw);
}

/* The notify hooks (the experiment's on_done, then --notify), with the sweep's end. */
void sweep_notify(sweep *sw, const char *status, const char *why) {
  char **argv = sw->exp->on_done && sw->exp->on_done[0] ? sw->exp->on_done : NULL;
  if (!argv && !sw->notify) return;
  char *cwd = launch_cwd();
  const char *db = sw->db_path;
  char *db_abs = db ? launch_absolute(db, cwd) : NULL;
  char *log_abs = sw->log_dir ? launch_absolute(sw->log_dir, cwd) : NULL;
  int confirmed = !isnan(sw->winner_ms);
  run_process_summary sum = {.sweep_id = sw->id,
                             .name = sw->exp->name,
                             .model = sw->exp->model,
                             .hardware = sw->hardware,
                             .status = status,
                             .reason = why,
                             .db_path = db_abs,
                             .log_dir = log_abs,
                             .best_ms = confirmed ? sw->winner_ms : sw->best.value,
                             .baseline_ms = confirmed ? sw->winner_base_ms : sw->best.baseline,
                             .best_confirmed = confirmed,
                             .higher = sw->exp->metric_higher,
                             .trials_done = sw->bud.done,
                             .trials_planned = sw->bud.trials,
                             .trials_ok = sw->counts[OUTCOME_OK]};
  const char *t = getenv("FLAGTUNE_NOTIFY_TIMEOUT");
  double limit = t && atof(t) > 0 ? atof(t) : 60;
  if (argv) run_process_notify(argv, NULL, &sum, limit);
  if (sw->notify) run_process_notify(NULL, sw->notify, &sum, limit);
  free(db_abs);
  free(log_abs);
  free(cwd);
}
