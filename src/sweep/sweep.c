/* The orchestrator: one sweep on one libuv loop. Owns the scheduling: the slots, which trial
 * of the queue runs next (baseline and re-runs first, then the strategy's proposals, then the
 * confirmation), the deadline's timer, the signal policy, loading the experiment and the
 * strategy, and the sweep row's end status. The arithmetic of the budget is budget.c's, the
 * best so far best.c's, fail fast failfast.c's; starting a sweep (validation, its row, the
 * executor) sweep_start.c's. One running trial is trial.c's; building its launch, launch.c's;
 * what a resume owes, resume.c's (carried out by sweep_resume.c); processes, the executor's.
 * It decides nothing about syntax, flags, quoting, processes, outcome rules or SQL: it wires
 * them together, and calls none of its helper files back. */
#include "sweep.h"

#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "confirm.h"
#include "diag.h"
#include "experiment.h"
#include "hardware.h"
#include "json.h"
#include "launch.h"
#include "lhost.h"
#include "progress.h"
#include "resume.h"
#include "run_process.h"
#include "stats.h"
#include "store.h"
#include "strategy.h"
#include "sweep_failfast.h"
#include "sweep_state.h"
#include "trial.h"

/* ---- a trial ended ---- */

static void schedule(sweep *sw);

static void tell_strategy(sweep *sw, const trial_result *r) {
  const trial_record *t = &r->record;
  if (t->role == ROLE_BASELINE || t->role == ROLE_CONFIRM || t->role == ROLE_MINIMIZE ||
      !outcome_is_final(t->status) || sw->fail.failed)
    return;
  char *err = NULL;
  if (strategy_tell_cost(sw->strat, t, r->spawn_error ? NAN : r->wall_s, r->step_ms, &err) != 0)
    sweep_fail(sw, err);
  free(err);
}

/* Keeps the baseline's value and the best search value; hands a new best to every running
 * trial (they are pruned against it). */
static void track_best(sweep *sw, const trial_record *t) {
  if (t->status != OUTCOME_OK) return;
  int skip = sw->exp->metric_skip;
  if (t->number == 0 || t->role == ROLE_BASELINE) {
    best_baseline(&sw->best, t->value);
    if (t->n_steps > skip) best_baseline_steps(&sw->best, t->steps + skip, t->n_steps - skip);
    return;
  }
  if (t->role == ROLE_CONFIRM || t->role == ROLE_MINIMIZE) return;
  if (!best_search_ok(&sw->best, t->value, t->number)) return;
  if (t->n_steps > skip) best_interval(&sw->best, t->steps + skip, t->n_steps - skip);
  for (int i = 0; i < sw->parallel; i++)
    if (sw->slots[i]) trial_set_best(sw->slots[i], sw->best.value);
}

/* metric.check: the first baseline that ends gives the losses every later trial is
 * compared with; one that fails leaves the sweep unchecked (and says so). */
static void keep_check_ref(sweep *sw, const trial_result *r) {
  const trial_record *t = &r->record;
  if (!sw->check_waits || t->role != ROLE_BASELINE || !outcome_is_final(t->status)) return;
  sw->check_waits = 0;
  if (t->status != OUTCOME_OK || r->n_losses == 0) {
    diag_note("flagtune: metric.check: the baseline %s, so no trial's loss can be checked",
              t->status == OUTCOME_OK ? "printed no loss" : "did not end ok");
    return;
  }
  sw->check_ref = xmalloc(sizeof(double) * (size_t)r->n_losses);
  memcpy(sw->check_ref, r->losses, sizeof(double) * (size_t)r->n_losses);
  sw->n_check_ref = r->n_losses;
  sw->tctx.check_ref = sw->check_ref;
  sw->tctx.n_check_ref = sw->n_check_ref;
}

/* The database cannot be written: stop every running trial (their results could not be
 * stored either); the sweep ends resumable. */
static void stop_on_store_fault(sweep *sw, const char *why) {
  sweep_fail(sw, why);
  if (sw->fail.store_fault) return;
  sw->fail.store_fault = 1;
  for (int i = 0; i < sw->parallel; i++)
    if (sw->slots[i]) trial_stop(sw->slots[i], STOPPED_INTERRUPTED);
}

/* A trial the executor lost (a Slurm node failed, a preemption) runs again, with its own
 * role and step budget, and does not count against the budget, up to the budget's
 * max_requeue (budget.h). Past it the cluster is more broken than a node: later losses count
 * (so the sweep ends) and stay lost, for `resume`. Returns 1 when T was queued again. */
static int requeue_lost(sweep *sw, const trial_record *t) {
  proposal p;
  char *err = NULL;
  int first = 0;
  if (sw->stopping || sw->fail.failed) return 0;
  if (!budget_may_requeue(&sw->bud, &first)) {
    if (first)
      diag_warn(
          "%d trials were lost by the executor in this run; later losses stay lost "
          "(`flagtune resume` runs them again)",
          sw->bud.max_requeue);
    return 0;
  }
  if (strategy_render(sw->strat, t->config_json, &p, &err) != 0) {
    free(err);
    return 0;
  }
  budget_requeued(&sw->bud);
  p.steps = t->steps_budget;
  sweep_queue_push(&sw->queue, &p, t->role == ROLE_SEARCH ? ROLE_RERUN : t->role,
                   t->role == ROLE_BASELINE ? 0 : t->number);
  return 1;
}

/* FLAGTUNE_MEMLOG=FILE (a measuring aid, tests/bench/bench_memory.sh): after every finished
 * trial one line of where the process's memory is: the trials ended, the bytes the Lua state
 * holds (live and not yet collected), SQLite's, the C heap's in use (malloc's, all of it:
 * Lua's and SQLite's included), and the resident set. */
static void log_memory(sweep *sw) {
  static FILE *f;
  static int tried;
  if (!tried) {
    tried = 1;
    const char *path = getenv("FLAGTUNE_MEMLOG");
    if (path && *path) f = fopen(path, "w");
    if (f) fprintf(f, "trials lua_bytes sqlite_bytes heap_bytes rss_kib\n");
  }
  if (!f) return;
  struct mallinfo2 mi = mallinfo2();
  long pages = 0, rss = 0;
  FILE *st = fopen("/proc/self/statm", "r");
  if (st) {
    if (fscanf(st, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(st);
  }
  fprintf(f, "%d %zu %lld %zu %ld\n", sw->bud.done, lhost_memory(sw->host),
          (long long)store_memory_used(), mi.uordblks + mi.hblkhd,
          rss * (sysconf(_SC_PAGESIZE) / 1024));
  fflush(f);
}

/* Stops the sweep when R shows the rest would fail too (sweep_failfast.c), unless
 * --keep-going: nothing more starts, running trials end interrupted, and the sweep ends failed
 * with the reason (the advice is printed, not recorded). */
static void fail_fast(sweep *sw, const trial_result *r) {
  if (sw->keep_going || sw->fail.failed || sw->stopping) return;
  const char *advice = NULL;
  char *why = sweep_failfast_read(&sw->ff, r, sw->log_dir, &advice);
  if (!why) return;
  sweep_fail(sw, why);
  diag_note("flagtune: %s", advice);
  for (int i = 0; i < sw->parallel; i++)
    if (sw->slots[i]) trial_stop(sw->slots[i], STOPPED_INTERRUPTED);
  free(why);
}

static void on_trial_done(void *ud, const trial_result *r) {
  sweep *sw = ud;
  const trial_record *t = &r->record;
  keep_check_ref(sw, r);
  int again = t->status == OUTCOME_LOST && !r->store_err && requeue_lost(sw, t);
  if (t->status == OUTCOME_LOST && !again) budget_lost(&sw->bud);
  if (!budget_counts(t->status == OUTCOME_INTERRUPTED, again, r->store_err != NULL)) {
    budget_uncount(&sw->bud, t->role == ROLE_CONFIRM);
  } else {
    budget_end(&sw->bud);
    if (!r->spawn_error) cost_add(&sw->cost, r->wall_s, t->n_steps, t->steps_budget, r->step_ms);
  }
  if (!r->store_err) sw->counts[t->status]++;
  sw->slots[r->slot] = NULL;
  sw->n_running--;
  if (r->store_err) stop_on_store_fault(sw, r->store_err);
  track_best(sw, t);
  sweep_report_progress(sw, r);
  if (!r->store_err) fail_fast(sw, r);
  tell_strategy(sw, r);
  log_memory(sw);
  schedule(sw);
}

static int start_trial(sweep *sw, int slot, pending *q) {
  trial_where w = {.slot = slot,
                   .number = sw->next_number++,
                   .role = q->role,
                   .rerun_of = q->rerun_of,
                   .devices = sw->devices[slot]};
  char *err = NULL;
  int rc = trial_start(&sw->tctx, &w, &q->prop, on_trial_done, sw, &sw->slots[slot], &err);
  if (rc == FT_ESTORE) {
    budget_uncount(&sw->bud, q->role == ROLE_CONFIRM);
    stop_on_store_fault(sw, err ? err : "cannot record a trial");
    free(err);
    proposal_clear(&q->prop);
    return rc;
  }
  if (rc != 0) {
    sweep_fail(sw, err ? err : "cannot start a trial");
    free(err);
    proposal_clear(&q->prop);
    return rc;
  }
  trial_set_best(sw->slots[slot], sw->best.value);
  sw->n_running++;
  return 0;
}

/* ---- scheduling ---- */

static int free_slot(sweep *sw) {
  for (int i = 0; i < sw->parallel; i++)
    if (!sw->slots[i]) return i;
  return -1;
}

/* Whether the next trial, started now, can finish before the deadline: what the trials
 * finished so far say a trial of its step budget costs (its start and compile, then its
 * steps at their steady time: cost_predict) must fit in the time left. The first trial
 * always starts. */
static int fits_deadline(sweep *sw) {
  int steps = sw->queue.n > 0 && sw->queue.items[0].prop.steps > 0 ? sw->queue.items[0].prop.steps
                                                                   : sw->exp->budget_steps;
  if (sw->bud.deadline <= 0) return 1; /* no time budget: nothing to predict */
  double predicted = sw->cost.n > 0 ? cost_predict(&sw->cost, steps) : NAN;
  return budget_fits(&sw->bud, sweep_now_s(), predicted);
}

static int may_start(sweep *sw) {
  if (sw->stopping || sw->fail.failed || budget_deadline_hit(&sw->bud)) return 0;
  if (!budget_has_room(&sw->bud) && !sw->refill) return 0; /* minimize: its own budget */
  if (sw->check_waits && sw->n_running > 0) return 0;      /* the baseline's losses come first */
  return fits_deadline(sw);
}

void sweep_ask(sweep *sw, int n) {
  if (sw->strategy_exhausted) return;
  proposal *props = NULL;
  int got = 0;
  char *err = NULL;
  if (strategy_ask(sw->strat, n, &props, &got, &err) != 0) {
    sweep_fail(sw, err);
    free(err);
    return;
  }
  for (int i = 0; i < got; i++) sweep_queue_push(&sw->queue, &props[i], ROLE_SEARCH, 0);
  free(props);
  if (got == 0 && (strategy_done(sw->strat) || sw->n_running == 0)) sw->strategy_exhausted = 1;
}

/* The store's worker made trials durable (or failed): their lines are printed now. A failure
 * stops the sweep as any store failure does. */
static void on_durable(uv_poll_t *h, int status, int events) {
  sweep *sw = h->data;
  (void)status;
  (void)events;
  char *err = NULL;
  int rc = store_durable_reached(sw->db, &sw->durable_done, &err);
  sweep_view_release(sw, rc != 0);
  if (rc) {
    uv_poll_stop(h);
    stop_on_store_fault(sw, err);
  }
  free(err);
}

/* Group commit on for the sweep's trials when the store has it: a trial's line is printed
 * once the worker says it is durable (on_durable). */
static void durable_begin(sweep *sw) {
  int fd = -1;
  char *err = NULL;
  if (store_durable_async(sw->db, &fd, &err) != 0 || fd < 0) {
    free(err); /* no descriptor: every finish stays synchronous */
    return;
  }
  sw->durable_on = 1;
  sw->durable_done = 0;
  if (uv_poll_init(&sw->loop, &sw->durable_poll, fd) != 0) return; /* released at the end */
  sw->durable_poll.data = sw;
  sw->durable_poll_on = uv_poll_start(&sw->durable_poll, UV_READABLE, on_durable) == 0;
  if (!sw->durable_poll_on) uv_close((uv_handle_t *)&sw->durable_poll, NULL);
}

/* The end of the sweep's trials: every result durable (the worker drained, then stopped, so
 * that the notify hooks' fork and the process's end find one thread) and its line printed,
 * before the summary. */
static void durable_end(sweep *sw) {
  if (!sw->durable_on) return;
  sw->durable_on = 0;
  char *err = NULL;
  int rc = store_durable_stop(sw->db, &sw->durable_done, &err);
  sweep_view_release(sw, rc != 0);
  if (rc) stop_on_store_fault(sw, err);
  free(err);
  if (sw->durable_poll_on) uv_close((uv_handle_t *)&sw->durable_poll, NULL);
  sw->durable_poll_on = 0;
}

static void close_handles(sweep *sw) {
  durable_end(sw);
  sweep_drain_close(sw);
  lhost_signals_settled(0); /* closing the two puts the default action back (libuv) */
  if (!uv_is_closing((uv_handle_t *)&sw->sigint)) uv_close((uv_handle_t *)&sw->sigint, NULL);
  if (!uv_is_closing((uv_handle_t *)&sw->sigterm)) uv_close((uv_handle_t *)&sw->sigterm, NULL);
  if (!uv_is_closing((uv_handle_t *)&sw->sighup)) uv_close((uv_handle_t *)&sw->sighup, NULL);
  if (sw->bud.deadline > 0 && !uv_is_closing((uv_handle_t *)&sw->deadline_timer))
    uv_close((uv_handle_t *)&sw->deadline_timer, NULL);
  if (sw->tick_on && !uv_is_closing((uv_handle_t *)&sw->tick))
    uv_close((uv_handle_t *)&sw->tick, NULL);
}

/* Fills the queue for the next free slot: proposals while the search budget lasts, then
 * the confirmation trials. Returns 0 when nothing can be queued now. */
static int fill_queue(sweep *sw) {
  if (sw->queue.n > 0) return 1;
  if (sw->refill) { /* minimize: its next batch once the last one has ended */
    if (sw->n_running == 0 && !sw->fail.failed) sw->refill(sw);
    return sw->queue.n > 0;
  }
  int want = budget_search_left(&sw->bud);
  if (want > 0) {
    int free_n = sw->parallel - sw->n_running;
    sweep_ask(sw, want < free_n ? want : free_n);
    if (sw->queue.n > 0 || !sw->strategy_exhausted) return sw->queue.n > 0;
  }
  if (sw->confirm_planned || !budget_confirms(&sw->bud) || sw->n_running > 0) return 0;
  sweep_plan_confirmation(sw);
  /* trials given back: the search goes on (its budget grew, so this ends) */
  if (!sw->confirm_planned && !sw->fail.failed) return fill_queue(sw);
  return sw->queue.n > 0;
}

static void schedule(sweep *sw) {
  int slot;
  while (may_start(sw) && (slot = free_slot(sw)) >= 0) {
    if (!fill_queue(sw) || !fits_deadline(sw)) break;
    pending q = sweep_queue_pop(&sw->queue);
    budget_start(&sw->bud, q.role == ROLE_CONFIRM);
    if (start_trial(sw, slot, &q) != 0) break;
  }
  if (sw->n_running == 0) close_handles(sw);
}

/* The terminal went away (an SSH session closed): a night's sweep keeps running. The note
 * goes to the log; printing to the dead terminal fails and stops printing. */
static void on_hangup(uv_signal_t *h, int signum) {
  (void)h;
  (void)signum;
  diag_note("flagtune: SIGHUP (terminal closed): the sweep keeps running");
  sweep_quiet_if_unwritable();
}

static void on_signal(uv_signal_t *h, int signum) {
  sweep *sw = h->data;
  sw->stopping++;
  if (sw->stopping == 1)
    diag_note(
        "flagtune: %s: stopping; running trials are terminated and recorded as interrupted "
        "(again to kill at once)",
        signum == SIGINT ? "interrupt" : "terminate");
  for (int i = 0; i < sw->parallel; i++) {
    trial *t = sw->slots[i];
    if (!t) continue;
    if (sw->stopping == 1)
      trial_stop(t, STOPPED_INTERRUPTED);
    else
      trial_kill(t);
  }
  if (sw->n_running == 0) close_handles(sw);
}

/* ---- setup and teardown ---- */

void sweep_free(sweep *sw) {
  sweep_queue_free(&sw->queue);
  free(sw->slots);
  launch_devices_free(sw->devices, sw->parallel);
  free(sw->log_dir);
  sweep_failure_free(&sw->fail);
  cost_free(&sw->cost);
  free(sw->hardware);
  free(sw->check_ref);
  best_free(&sw->best);
  for (int i = 0; i < sw->n_defaults; i++) free(sw->defaults[i]);
  free(sw->defaults);
  sweep_view_free(sw);
  free(sw->db_path);
  failfast_free(&sw->ff);
  executor_free(sw->x);
  strategy_free(sw->strat);
  experiment_free(sw->exp);
  store_close(sw->db);
  lhost_free(sw->host);
  free(sw);
}

static void apply_opts(sweep *sw, const sweep_opts *o) {
  experiment *e = sw->exp;
  sw->parallel = o->parallel > 0 ? o->parallel : e->parallel;
  int trials = o->trials > 0 ? o->trials : e->budget_trials;
  double hours = o->hours >= 0 ? o->hours : e->budget_hours;
  int confirm = e->confirm_top > 0 ? e->confirm_repeats * (e->confirm_top + 1) : 0;
  budget_init(&sw->bud, trials, confirm, sw->parallel, hours, sweep_now_s());
  experiment_override_budget(e, trials, hours);
  sw->seed = o->has_seed ? o->seed : e->has_seed ? e->seed : (int64_t)time(NULL) % 1000000;
  sw->slots = xcalloc((size_t)sw->parallel, sizeof(trial *));
  sw->metric = experiment_metric(e);
  sw->check = experiment_check_metric(e);
  sw->check_waits = e->check_on;
  sw->patterns = (classify_patterns){.oom = (const char *const *)e->oom_patterns,
                                     .n_oom = e->n_oom_patterns,
                                     .invalid = (const char *const *)e->invalid_patterns,
                                     .n_invalid = e->n_invalid_patterns};
  best_init(&sw->best);
  sw->winner_ms = sw->winner_base_ms = NAN;
  sw->keep_going = o->keep_going;
  sw->notify = o->notify;
  sw->view = progress_detect();
}

/* The experiment's hardware string, or for "auto" the key of the GPUs one trial uses. */
static char *resolve_hardware(const experiment *e) {
  if (strcmp(e->hardware, "auto") != 0) return xstrdup(e->hardware);
  char *note = NULL;
  char *hw = hardware_fingerprint_for(getenv("CUDA_VISIBLE_DEVICES"), e->gpus_per_trial, &note);
  if (note) diag_note("flagtune: %s", note);
  free(note);
  return hw;
}

/* HIST followed by the finished trials of earlier sweeps of the same model and hardware
 * when the experiment asks for a warm start (a bounded number: store_warm_trials; the
 * strategy host passes configurations that no longer fit the space as the parameters they
 * share, or skips them). Reads the database only if it already exists. *warm holds the
 * store's records (free them with record_free). */
static void warm_history(sweep *sw, const char *db_path, trial_record **warm, int *n_warm) {
  store *db = NULL;
  *warm = NULL;
  *n_warm = 0;
  if (sw->exp->warm_start && store_open(db_path, STORE_READONLY, &db, NULL) == 0) {
    if (store_warm_trials(db, sw->exp->model, sw->hardware, sw->id, warm, n_warm, NULL) != 0)
      *n_warm = 0;
    store_close(db);
  }
}

/* The label tokens of parameters at their catalog default (lua/progress.lua): a trial's
 * line leaves them out. A failure costs only the shortening. */
static void load_default_tokens(sweep *sw) {
  char *err = NULL, *save = NULL;
  char *all = lhost_call_text(sw->host, "progress", "default_tokens", sw->exp->spec_ref, &err);
  for (char *tok = all ? strtok_r(all, "\n", &save) : NULL; tok;
       tok = strtok_r(NULL, "\n", &save)) {
    sw->defaults = xrealloc(sw->defaults, sizeof(char *) * (size_t)(sw->n_defaults + 1));
    sw->defaults[sw->n_defaults++] = xstrdup(tok);
  }
  free(all);
  if (err && diag_verbose) diag_warn("progress: %s", err);
  free(err);
}

/* Loads the experiment and creates the strategy (replaying HIST): everything that can be
 * the user's fault. */
int sweep_prepare(sweep *sw, const char *path, const char *text, const sweep_opts *o,
                  const sweep_history *hist, char **err) {
  int rc = lhost_new(&sw->host, err);
  if (rc == 0) rc = experiment_load_for_db(sw->host, path, text, o->db_path, &sw->exp, err);
  if (rc != 0) return rc;
  apply_opts(sw, o);
  load_default_tokens(sw);
  if (sw->bud.trials < 2)
    return diag_set(err, FT_EINPUT, "--trials must be at least 2: the baseline takes one");
  /* Under Slurm each step gets its GPUs from the allocation's gres, not from a local plan. */
  const char *kind = o->executor ? o->executor : sw->exp->executor;
  int local_gpus = kind && strcmp(kind, "slurm") == 0 ? 0 : sw->exp->gpus_per_trial;
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  int present = local_gpus > 0 && !(visible && *visible) ? hardware_gpu_count() : 0;
  rc = launch_plan_devices(local_gpus, sw->parallel, visible, present, &sw->devices, err);
  if (rc != 0) return rc;
  sw->hardware = resolve_hardware(sw->exp);
  trial_record *warm = NULL;
  int n_warm = 0;
  warm_history(sw, o->db_path, &warm, &n_warm);
  rc = strategy_open(sw->exp, &sw->strat, err);
  int n_history = 0;
  if (rc == 0 && hist) rc = hist->feed(hist->ud, sw->strat, &n_history, err); /* in parts */
  if (rc == 0) rc = strategy_add(sw->strat, warm, n_warm, err);
  /* A resumed strategy goes on where it stood: from its seed's start it would draw the
   * configurations already run first, and a large space's sampler would give up on them. */
  int64_t seed = hist ? resume_seed(sw->seed, n_history) : sw->seed;
  if (rc == 0) rc = strategy_start(sw->strat, seed, err);
  if (rc != 0) {
    strategy_free(sw->strat);
    sw->strat = NULL;
  }
  record_free(warm, n_warm);
  if (rc == 0 && n_warm > 0) {
    int shared = strategy_partial(sw->strat);
    diag_note(
        "flagtune: warm start: %d trial%s of earlier sweeps of %s on %s (%d by the "
        "parameters shared with this space)",
        n_warm, n_warm == 1 ? "" : "s", sw->exp->model, sw->hardware, shared);
  }
  return rc;
}

char *sweep_options_json(const sweep *sw, const sweep_opts *o) {
  cJSON *j = cJSON_CreateObject();
  if (o->parallel > 0) cJSON_AddNumberToObject(j, "parallel", o->parallel);
  if (o->trials > 0) cJSON_AddNumberToObject(j, "trials", o->trials);
  if (o->hours >= 0) cJSON_AddNumberToObject(j, "hours", o->hours);
  cJSON_AddNumberToObject(j, "seed", (double)sw->seed);
  cJSON_AddNumberToObject(j, "skip", sw->exp->metric_skip);
  cJSON_AddStringToObject(j, "reduce", stats_reduce_name(sw->exp->metric_reduce));
  /* Read by every view of the sweep: its values are costs, shown as the rate they came from. */
  if (sw->exp->metric_higher) cJSON_AddStringToObject(j, "better", "higher");
  char *s = json_print(j);
  cJSON_Delete(j);
  return s;
}

/* The time budget ran out: stop what runs (recorded interrupted, re-run by a resume). */
static void on_deadline(uv_timer_t *timer) {
  sweep *sw = timer->data;
  budget_deadline_reached(&sw->bud);
  diag_note("flagtune: time budget reached; stopping %d running trial%s", sw->n_running,
            sw->n_running == 1 ? "" : "s");
  for (int i = 0; i < sw->parallel; i++)
    if (sw->slots[i]) trial_stop(sw->slots[i], STOPPED_INTERRUPTED);
  if (sw->n_running == 0) close_handles(sw);
}

/* Whether the time budget (or the fear of overrunning it) left the trial budget unspent. */
static int cut_by_time(const sweep *sw) {
  return budget_cut_by_time(&sw->bud, sw->strategy_exhausted);
}

/* How the sweep ended, and why (NULL: no reason to record). Stopped by a signal, by a full
 * disk or by the time budget, it is `interrupted`: `resume` continues it to its budget. */
static const char *end_status(const sweep *sw, const char **why) {
  *why = sw->fail.reason;
  if (sw->fail.failed && sw->fail.store_fault && store_fault_resumable(sw->db))
    return "interrupted";
  if (sw->fail.failed) return "failed";
  if (sw->stopping) return "interrupted";
  if (cut_by_time(sw)) {
    *why = "time budget";
    return "interrupted";
  }
  if (sw->bud.lost_left > 0) {
    *why = "trials lost by the executor";
    return "interrupted";
  }
  return "done";
}

/* Every second: the running trials' new steps stored (one transaction each), the status
 * area redrawn with their elapsed time. */
static void on_tick(uv_timer_t *timer) {
  sweep *sw = timer->data;
  for (int i = 0; i < sw->parallel; i++)
    if (sw->slots[i]) trial_flush_steps(sw->slots[i]);
  sweep_view_status(sw);
}

/* Records how the sweep ended. A failure to say so is the sweep's failure too. */
static void sweep_store_end(sweep *sw) {
  const char *why;
  const char *status = end_status(sw, &why);
  char *err = NULL;
  if (store_sweep_set_status(sw->db, sw->id, status, why, 0, &err) != 0) {
    sweep_fail(sw, err);
    diag_warn("sweep %lld stays marked running in the database", (long long)sw->id);
  }
  free(err);
  if (strcmp(status, "interrupted") == 0 && why && strcmp(why, "time budget") == 0) {
    diag_note("flagtune: sweep %lld stopped by its time budget after %d of %d trials",
              (long long)sw->id, sw->bud.done, sw->bud.trials);
    if (!sw->confirm_planned && budget_confirms(&sw->bud))
      diag_note(
          "flagtune: confirmation skipped: the time budget ran out before it; the best is a "
          "single run (`flagtune resume %lld` runs the rest, confirmation included)",
          (long long)sw->id);
  }
  sweep_notify(sw, status, why);
}

/* Runs the loop until every trial has ended, then records how the sweep ended. */
int sweep_drive(sweep *sw, char **err) {
  uv_signal_init(&sw->loop, &sw->sigint);
  uv_signal_init(&sw->loop, &sw->sigterm);
  sw->sigint.data = sw->sigterm.data = sw;
  uv_signal_start(&sw->sigint, on_signal, SIGINT);
  uv_signal_start(&sw->sigterm, on_signal, SIGTERM);
  lhost_signals_settled(1); /* libuv's handlers stay until close_handles */
  uv_signal_init(&sw->loop, &sw->sighup);
  uv_signal_start(&sw->sighup, on_hangup, SIGHUP);
  sweep_drain_watch(sw); /* SIGUSR1, and the allocation's end as a deadline */
  if (sw->bud.deadline > 0) {
    uv_timer_init(&sw->loop, &sw->deadline_timer);
    sw->deadline_timer.data = sw;
    double left = budget_time_left(&sw->bud, sweep_now_s());
    uv_timer_start(&sw->deadline_timer, on_deadline, (uint64_t)(left * 1000), 0);
  }
  int rc = launch_make_dirs(sw->log_dir, err);
  if (rc != 0) sweep_fail(sw, *err);
  sweep_note_confirmation(sw->exp, &sw->bud, sw->confirm_planned);
  uv_timer_init(&sw->loop, &sw->tick);
  sw->tick.data = sw;
  sw->tick_on = 1;
  uv_timer_start(&sw->tick, on_tick, 1000, 1000);
  diag_before_print = progress_erase;
  durable_begin(sw);
  int sig = run_process_take_early_signal();
  if (sig) /* caught before the loop watched: stop now, nothing has started */
    on_signal(sig == SIGTERM ? &sw->sigterm : &sw->sigint, sig);
  schedule(sw);
  uv_run(&sw->loop, UV_RUN_DEFAULT);
  progress_erase();
  diag_before_print = NULL;
  /* The search is over: its garbage goes back to the allocator before the winner's read
   * (a 10,000-trial tpe{} sweep peaked there when that read loaded every trial, docs/COST.md). */
  lhost_collect(sw->host);
  if (!sw->fail.failed && !sw->stopping && sw->confirm_planned) sweep_choose_winner(sw);
  if (!sw->refill) sweep_store_end(sw);
  if (uv_loop_close(&sw->loop) != 0) diag_warn("event loop closed with handles still open");
  if (sw->fail.failed && sw->fail.store_fault)
    return diag_set(err, FT_ESTORE, "sweep %lld stopped: %s%s", (long long)sw->id, sw->fail.reason,
                    store_was_full(sw->db) ? "; free some space, then `flagtune resume` it" : "");
  if (sw->fail.failed)
    return diag_set(err, FT_ESYS, "sweep %lld failed: %s", (long long)sw->id, sw->fail.reason);
  if (sw->stopping)
    return diag_set(err, FT_EINTR,
                    "sweep %lld interrupted; continue it with `flagtune resume %lld`",
                    (long long)sw->id, (long long)sw->id);
  if (cut_by_time(sw))
    diag_note(
        "flagtune: time budget spent after %d of %d trials; `flagtune resume %lld` runs "
        "the rest",
        sw->bud.counted, sw->bud.trials, (long long)sw->id);
  return 0;
}
