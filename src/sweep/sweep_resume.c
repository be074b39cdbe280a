/* Resume: an interrupted sweep carried on to its budget from wherever it is called. Claims the
 * sweep, enters the directory `run` ran in, reads the stored trials into resume.c's plan,
 * ends what a dead orchestrator left (through the executor), rebuilds the strategy from the
 * history and queues the re-runs; sweep.c then schedules as for a new sweep. */
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

/* What the live view showed before the interruption: the outcome counts, the best search
 * trial so far (also what running trials are pruned against) and the baseline's steps. The
 * first trials of this run that all fail alike still stop it (a script deleted meanwhile). */
static void restore_view(sweep *sw, const trial_record *t, int n) {
  int skip = sw->exp->metric_skip;
  for (int i = 0; i < n; i++) {
    if (t[i].status != OUTCOME_RUNNING) sw->counts[t[i].status]++;
    if (t[i].status != OUTCOME_OK) continue;
    int base = t[i].number == 0 || t[i].role == ROLE_BASELINE;
    if (base && t[i].n_steps > skip)
      best_baseline_steps(&sw->best, t[i].steps + skip, t[i].n_steps - skip);
    else if (!base && t[i].role != ROLE_CONFIRM)
      best_offer(&sw->best, t[i].value, t[i].number);
  }
}

/* Rebuilds the sweep from its rows once this process owns it. */
static int resume_prepare(sweep *sw, store_sweep *s, const sweep_opts *o, char **err) {
  trial_record *t = NULL;
  int n = 0;
  int rc = store_trials_load(sw->db, s->id, &t, &n, err);
  if (rc != 0) return rc;
  resume_plan plan;
  resume_plan_make(t, n, &plan);
  exec_reap(s->id, plan.orphans, plan.n_orphans);
  /* Steps a dead orchestrator left on a Slurm cluster, by the ids stored with each trial. */
  for (int i = 0; i < plan.n_orphans; i++)
    store_trial_slurm(sw->db, s->id, plan.orphans[i].number, &plan.orphans[i].slurm_job,
                      &plan.orphans[i].slurm_step, NULL);
  slurm_reap(s->id, plan.orphans, plan.n_orphans);
  rc = store_trials_mark(sw->db, s->id, OUTCOME_RUNNING, OUTCOME_LOST, NULL, err);
  sweep_opts merged;
  merge_options(s, o, &merged);
  if (rc == 0)
    rc = sweep_prepare(sw, s->experiment_path, s->experiment_text, &merged, plan.history,
                       plan.n_history, err);
  if (rc == 0) rc = apply_plan(sw, &plan, err);
  if (rc == 0) launch_use_stored_command(sw->exp, s->command_json);
  if (rc == 0) restore_view(sw, t, n);
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
  resume_plan_free(&plan);
  record_free(t, n);
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
