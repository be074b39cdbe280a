/* Resume: an interrupted sweep carried on to its budget from wherever it is called. Claims the
 * sweep, enters the directory `run` ran in, rebuilds the strategy from one walk over the stored
 * trials (each given to resume.c's plan, to the live view and, in batches with what the
 * strategy keeps of it, to the strategy's history), then ends what a dead orchestrator left
 * (through the executor) and queues the re-runs; sweep.c then schedules as for a new sweep.
 * Must not hold every trial: a 60,000-trial sweep resumes in a few MiB. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "exec.h"
#include "json.h"
#include "launch.h"
#include "preflight.h"
#include "resume.h"
#include "slurm.h"
#include "sweep_state.h"

/* Replays the sweep's stored command-line overrides under the ones given now. */
static void merge_options(const store_sweep *stored, const sweep_opts *o, sweep_opts *out) {
  *out = *o;
  cJSON *j = stored->options_json ? cJSON_Parse(stored->options_json) : NULL;
  const cJSON *v;
  if (out->parallel <= 0 && (v = cJSON_GetObjectItem(j, "parallel"))) out->parallel = v->valueint;
  if (out->trials <= 0 && (v = cJSON_GetObjectItem(j, "trials"))) out->trials = v->valueint;
  if (out->hours < 0 && (v = cJSON_GetObjectItem(j, "hours"))) out->hours = v->valuedouble;
  out->seed = stored->seed;
  out->has_seed = 1;
  cJSON_Delete(j);
}

/* Carries out PLAN: the re-runs queued (rendered by the rebuilt strategy), the counts. */
static int apply_plan(sweep *sw, const resume_plan *plan, char **err) {
  for (int i = 0; i < plan->n_reruns; i++) {
    const resume_rerun *r = &plan->reruns[i];
    proposal p;
    int rc = strategy_render(sw->strat, r->config_json, &p, err);
    if (rc != 0) return rc;
    p.steps = r->steps_budget;
    sweep_queue_push(&sw->queue, &p, r->role, r->rerun_of);
  }
  if (sw->check_waits && plan->baseline_ended) {
    sw->check_waits = 0;
    int rc = plan->baseline_id ? store_trial_losses(sw->db, plan->baseline_id, &sw->check_ref,
                                                    &sw->n_check_ref, err)
                               : 0;
    if (rc != 0) return rc;
    if (sw->n_check_ref == 0)
      diag_note("flagtune: metric.check: the baseline left no loss, so no trial can be checked");
  }
  budget_resume(&sw->bud, plan->counted, plan->confirm_counted);
  sw->next_number = plan->next_number;
  best_restore(&sw->best, plan->baseline_ok, plan->baseline_ms, plan->n_ok);
  sw->resumed = 1;
  return 0;
}

/* What the walk over the stored trials gathers (scan_trial): the plan, and what the live
 * view showed before the interruption (the outcome counts, the best search trial so far,
 * which running trials are pruned against, and the ok baseline trials, whose steps are
 * read afterwards). Holds no trial: a 60,000-trial sweep costs a few numbers. */
typedef struct {
  resume_plan plan;
  int counts[OUTCOME_COUNT];
  best_tracker best; /* the search trials' best, offered in trial order */
  int offered;
  int64_t *bases; /* the ok baseline trials, in trial order */
  int n_bases, cap_bases;
  int ended; /* the walk went over every row and the plan is complete (scan_end) */
} resume_scan;

static void scan_init(resume_scan *r) {
  memset(r, 0, sizeof *r);
  resume_plan_init(&r->plan);
  best_init(&r->best);
}

static int scan_trial(void *ud, const trial_record *t, char **err) {
  (void)err;
  resume_scan *r = ud;
  resume_plan_add(&r->plan, t);
  if (t->status != OUTCOME_RUNNING) r->counts[t->status]++;
  if (t->status != OUTCOME_OK) return 0;
  if (t->number == 0 || t->role == ROLE_BASELINE) {
    if (r->n_bases == r->cap_bases)
      r->bases =
          xrealloc(r->bases, sizeof *r->bases * (size_t)(r->cap_bases = r->cap_bases * 2 + 4));
    r->bases[r->n_bases++] = t->id;
  } else if (t->role != ROLE_CONFIRM) {
    best_offer(&r->best, t->value, t->number);
    r->offered = 1;
  }
  return 0;
}

/* Whether CONFIG is one of the finished configurations store_rerun_done found. */
typedef struct {
  char **v;
  int n;
} done_list;

static int rerun_done(void *ud, const char *config) {
  const done_list *d = ud;
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->v[i], config) == 0) return 1;
  return 0;
}

/* Completes the plan once the walk has given it every row. */
static int scan_end(store *db, int64_t sweep_id, resume_scan *r, char **err) {
  done_list d = {0};
  /* which unfinished configurations a finished trial holds: a read only when there are any */
  int rc = r->plan.n_pending > 0 ? store_rerun_done(db, sweep_id, &d.v, &d.n, err) : 0;
  resume_plan_end(&r->plan, rerun_done, &d);
  for (int i = 0; i < d.n; i++) free(d.v[i]);
  free(d.v);
  r->ended = rc == 0;
  return rc;
}

static void scan_free(resume_scan *r) {
  resume_plan_free(&r->plan);
  best_free(&r->best);
  free(r->bases);
}

/* The plan and the view from a walk that feeds no strategy (no step read): for a resume that
 * failed before the strategy's walk ended, which still ends what a dead orchestrator left. */
static int scan(store *db, int64_t sweep_id, resume_scan *r, char **err) {
  scan_free(r);
  scan_init(r);
  int rc = store_trials_each(db, sweep_id, STORE_STEPS_NONE, scan_trial, r, err);
  return rc == 0 ? scan_end(db, sweep_id, r, err) : rc;
}

/* The view as it stood (resume_scan): counts, the best, the baseline's steps (the last ok
 * baseline trial with more steps than metric.skip). The first trials of this run that all
 * fail alike still stop it (a script deleted meanwhile). */
static int restore_view(sweep *sw, const resume_scan *r, char **err) {
  int skip = sw->exp->metric_skip;
  for (int i = 0; i < OUTCOME_COUNT; i++) sw->counts[i] += r->counts[i];
  if (r->offered) best_offer(&sw->best, r->best.value, r->best.number);
  int rc = 0;
  for (int i = r->n_bases - 1; i >= 0 && rc == 0; i--) {
    double *steps = NULL;
    int n = 0;
    rc = store_trial_steps(sw->db, r->bases[i], &steps, &n, err);
    int found = rc == 0 && n > skip;
    if (found) best_baseline_steps(&sw->best, steps + skip, n - skip);
    free(steps);
    if (found) break;
  }
  return rc;
}

/* The walk (sweep_prepare's feed): the trials read one at a time, each given to the scan
 * and, with what the strategy's module's `history` keeps of their steps, to its history in
 * batches (copies: the store's row lives only during the call). A trial recorded running is
 * given as running: resume marks it lost only after the walk. A strategy that keeps only the
 * seen set gets the stored configuration texts alone when the sweep's stored space digest is
 * its space's (keyed): each text is then the key its seen set holds, and nothing is decoded. */
enum { FEED_BATCH = 512 };

typedef struct {
  sweep *sw;
  resume_scan *scan;
  const char *space_digest; /* the sweep's stored one, NULL before schema 19 */
  strategy *strat;
  int by_key; /* the history goes as the stored keys (keyed) */
  trial_record batch[FEED_BATCH];
  char *keys[FEED_BATCH];
  int n;
} feeder;

static void batch_clear(feeder *f) {
  for (int i = 0; i < f->n; i++) {
    free((char *)f->batch[i].config_json);
    free((double *)f->batch[i].steps);
  }
  f->n = 0;
}

static int flush(feeder *f, char **err) {
  int rc = strategy_add(f->strat, f->batch, f->n, err);
  batch_clear(f);
  return rc;
}

static void keys_clear(feeder *f) {
  for (int i = 0; i < f->n; i++) free(f->keys[i]);
  f->n = 0;
}

static int flush_keys(feeder *f, char **err) {
  int rc = strategy_add_keys(f->strat, (const char *const *)f->keys, f->n, err);
  keys_clear(f);
  return rc;
}

static int feed_key(feeder *f, const trial_record *t, char **err) {
  f->keys[f->n++] = xstrdup(t->config_json ? t->config_json : "{}");
  return f->n == FEED_BATCH ? flush_keys(f, err) : 0;
}

/* Whether the sweep's STORED space digest is that of the space STRAT made (neither NULL). */
static int same_digest(const char *stored, const strategy *strat) {
  const char *now = strategy_space_digest(strat);
  return stored && now && strcmp(stored, now) == 0;
}

/* Whether the stored texts are the keys STRAT's seen set holds: it keeps only the seen set,
 * and the sweep was created with the digest of the space STRAT made from its stored text. */
static int keyed(const feeder *f, const strategy *strat) {
  return strategy_history_of(strat) == STRATEGY_HISTORY_SEEN && same_digest(f->space_digest, strat);
}

static int feed_trial(feeder *f, const trial_record *t, char **err) {
  trial_record *c = &f->batch[f->n++];
  *c = *t;
  c->config_json = xstrdup(t->config_json ? t->config_json : "{}");
  double *steps = NULL;
  if (t->steps && t->n_steps > 0) {
    steps = xmalloc(sizeof(double) * (size_t)t->n_steps);
    memcpy(steps, t->steps, sizeof(double) * (size_t)t->n_steps);
  }
  c->steps = steps;
  return f->n == FEED_BATCH ? flush(f, err) : 0;
}

/* How the history reaches STRAT, for -v (the fast path is taken, or why not). */
static const char *feed_how(const feeder *f, const strategy *strat, int by_key) {
  if (by_key) return "the stored keys, not decoded (space digest matches)";
  if (strategy_history_of(strat) != STRATEGY_HISTORY_SEEN)
    return "decoded (the strategy keeps more than the seen set)";
  if (!f->space_digest) return "decoded (no space digest stored)";
  return "decoded (the space digest differs from the stored one)";
}

static int walk_trial(void *ud, const trial_record *t, char **err) {
  feeder *f = ud;
  scan_trial(f->scan, t, err);
  if (!resume_plan_history(t)) return 0;
  return f->by_key ? feed_key(f, t, err) : feed_trial(f, t, err);
}

/* One walk over the sweep's rows, the step read the strategy's level needs (none for the
 * keys); then the plan completed. *N: the trials of the history. */
static int feed(void *ud, strategy *strat, int *n, char **err) {
  feeder *f = ud;
  f->strat = strat;
  f->by_key = keyed(f, strat);
  strategy_history h = strategy_history_of(strat);
  store_steps_read read = f->by_key                       ? STORE_STEPS_NONE
                          : h == STRATEGY_HISTORY_STEPS   ? STORE_STEPS_ALL
                          : h == STRATEGY_HISTORY_RESULTS ? STORE_STEPS_COUNT
                                                          : STORE_STEPS_NONE;
  int rc = store_trials_each(f->sw->db, f->sw->id, read, walk_trial, f, err);
  if (rc == 0 && f->n > 0) rc = f->by_key ? flush_keys(f, err) : flush(f, err);
  if (f->by_key)
    keys_clear(f);
  else
    batch_clear(f);
  if (rc == 0) rc = scan_end(f->sw->db, f->sw->id, f->scan, err);
  *n = f->scan->plan.n_history;
  if (rc == 0 && diag_verbose)
    diag_note("flagtune: history of %d trials: %s", *n, feed_how(f, strat, f->by_key));
  return rc;
}

/* Ends what a dead orchestrator left running (PLAN's orphans, through the executor), then
 * records those trials lost: the plan holds their re-runs. */
static int end_orphans(sweep *sw, int64_t sweep_id, resume_plan *plan, char **err) {
  exec_reap(sweep_id, plan->orphans, plan->n_orphans);
  /* Steps a dead orchestrator left on a Slurm cluster, by the ids stored with each trial. */
  for (int i = 0; i < plan->n_orphans; i++)
    store_trial_slurm(sw->db, sweep_id, plan->orphans[i].number, &plan->orphans[i].slurm_job,
                      &plan->orphans[i].slurm_step, NULL);
  slurm_reap(sweep_id, plan->orphans, plan->n_orphans);
  return store_trials_mark(sw->db, sweep_id, OUTCOME_RUNNING, OUTCOME_LOST, NULL, err);
}

/* A sweep whose stored space digest is not the one of the space made now gets its trials
 * written in another canonical form from here on: its digest, true of no space now, is
 * forgotten, so that no later resume takes the mixed texts as keys. */
static int forget_other_digest(sweep *sw, const store_sweep *s, char **err) {
  if (!s->space_digest || same_digest(s->space_digest, sw->strat)) return 0;
  return store_sweep_forget_space_digest(sw->db, s->id, err);
}

/* Rebuilds the sweep from its rows once this process owns it. The rows change only after
 * the walk (the orphans' trials marked lost): a resume killed before leaves them as they
 * were, for the next one. */
static int resume_prepare(sweep *sw, store_sweep *s, const sweep_opts *o, char **err) {
  resume_scan r;
  scan_init(&r);
  sweep_opts merged;
  merge_options(s, o, &merged);
  feeder *f = xcalloc(1, sizeof *f);
  f->sw = sw;
  f->scan = &r;
  f->space_digest = s->space_digest;
  sweep_history hist = {.feed = feed, .ud = f};
  int rc = sweep_prepare(sw, s->experiment_path, s->experiment_text, &merged, &hist, err);
  free(f);
  /* A resume that failed before the walk's end still ends what a dead orchestrator left. */
  if (!r.ended) scan(sw->db, s->id, &r, NULL);
  if (r.ended) {
    int ended = end_orphans(sw, s->id, &r.plan, rc == 0 ? err : NULL);
    if (rc == 0) rc = ended;
  }
  if (rc == 0) rc = forget_other_digest(sw, s, err);
  if (rc == 0) rc = apply_plan(sw, &r.plan, err);
  if (rc == 0) launch_use_stored_command(sw->exp, s->command_json);
  if (rc == 0) rc = restore_view(sw, &r, err);
  if (rc == 0) { /* the command can still start (a script deleted since is found now) */
    char *cwd = launch_cwd();
    const char *kind = o->executor ? o->executor : sw->exp->executor;
    rc = preflight_check(sw->exp, cwd, kind && strcmp(kind, "slurm") == 0, NULL, err);
    free(cwd);
  }
  if (rc == 0 && o->trials > 0 && o->trials != s->budget_trials) {
    char *opts = sweep_options_json(sw, &merged);
    rc = store_sweep_set_budget(sw->db, s->id, sw->bud.trials, opts, err);
    free(opts);
  }
  scan_free(&r);
  return rc;
}

/* A done sweep is resumed only to raise its budget (`resume --trials N`). */
static int resumable(const store_sweep *s, const sweep_opts *o, char **err) {
  if (strcmp(s->status, "done") == 0 && !(o->trials > s->budget_trials))
    return diag_set(err, FT_EINPUT,
                    "sweep %lld is already done (use `flagtune show %lld`, or `flagtune resume "
                    "%lld --trials N` with N above its %d trials to extend it)",
                    (long long)s->id, (long long)s->id, (long long)s->id, s->budget_trials);
  return 0;
}

/* Moves into the directory `run` ran in (the experiment's relative paths, the command and
 * the trials' working directory resolve as they did then). */
int sweep_enter_workdir(const store_sweep *s, char **err) {
  if (!s->workdir || chdir(s->workdir) == 0) return 0;
  return diag_set(err, FT_EINPUT, "sweep %lld ran in %s, which cannot be entered now: %s",
                  (long long)s->id, s->workdir, strerror(errno));
}

/* The log directory override, made absolute before resume changes directory. */
void sweep_pin_log_dir(const char *cwd) {
  const char *dir = getenv("FLAGTUNE_LOG_DIR");
  if (!dir || !*dir || dir[0] == '/' || !cwd) return;
  char *abs = launch_absolute(dir, cwd);
  setenv("FLAGTUNE_LOG_DIR", abs, 1);
  free(abs);
}

int sweep_resume(const char *ref, const sweep_opts *o, int64_t *sweep_id, int *unhealthy,
                 char **err) {
  sweep *sw = xcalloc(1, sizeof *sw);
  store_sweep s = {0};
  *unhealthy = 0;
  *sweep_id = 0;
  char *cwd = launch_cwd();
  int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char *db_path = launch_absolute(o->db_path, cwd);
  sweep_opts here = *o; /* with the database's absolute path: it is read again after chdir */
  here.db_path = db_path;
  sweep_pin_log_dir(cwd);
  int rc = store_open(db_path, 0, &sw->db, err);
  if (rc == 0) rc = store_sweep_get(sw->db, ref, &s, err);
  if (rc == 0) rc = resumable(&s, &here, err);
  if (rc == 0) rc = store_sweep_claim(sw->db, s.id, here.force, err);
  if (rc == 0) rc = sweep_enter_workdir(&s, err);
  if (rc == 0) {
    sw->id = s.id;
    rc = resume_prepare(sw, &s, &here, err);
  }
  if (rc == 0) rc = sweep_begin(sw, db_path, &here, sweep_id, err);
  if (rc == 0) {
    char *name = json_terminal_text(s.name, NULL);
    diag_note("flagtune: resuming sweep %lld \"%s\": %d of %d trials done, %d to re-run",
              (long long)sw->id, name, sw->bud.counted, sw->bud.trials, sw->queue.n);
    free(name);
    rc = sweep_drive(sw, err);
  }
  *unhealthy = !sw->best.baseline_ok || sw->best.n_ok == 0;
  store_sweep_clear(&s);
  sweep_free(sw);
  /* Back where the command started: the caller's relative paths (the summary's --db) hold. */
  if (home >= 0 && fchdir(home) != 0) diag_warn("cannot return to %s", cwd ? cwd : ".");
  if (home >= 0) close(home);
  free(db_path);
  free(cwd);
  return rc;
}
