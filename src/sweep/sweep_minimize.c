/* `flagtune minimize`, carried out: claims the sweep, rebuilds its experiment (in the
 * directory `run` ran in, as resume does), fixes the winner and its interval, then runs
 * minimize.c's plan through sweep.c's scheduler (its refill hook: a batch of fixed
 * proposals, role minimize, planned again from the database after each batch), gives the
 * sweep's status back and writes the report and the minimal set's snippet. Decides nothing
 * about which parameters to revert (minimize.c) and formats no SQL. */
#include "sweep_minimize.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confirm.h"
#include "diag.h"
#include "exec.h"
#include "json.h"
#include "launch.h"
#include "listing.h"
#include "minimize.h"
#include "sweep_state.h"

/* What the refill hook and the report share. */
typedef struct {
  const minimize_opts *o;
  minimize_input in;
  char *winner;   /* owned: the winner's config JSON */
  int budget_hit; /* --trials stopped it */
} mz;

static void mz_fail(sweep *sw, const char *why) {
  sweep_failure_set(&sw->fail, why, 1);
}

/* Minimize trials that ended (lost and interrupted ones run again and do not count). */
static int ended_minimize(const trial_record *t, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) k += t[i].role == ROLE_MINIMIZE && outcome_is_final(t[i].status);
  return k;
}

/* Queues the plan's next batch (nothing once every parameter is decided, or the budget is
 * spent: the loop then ends). */
static void refill(sweep *sw) {
  mz *m = sw->refill_ud;
  trial_record *t = NULL;
  int n = 0;
  char *err = NULL;
  minimize_plan p;
  if (store_trials_load_role(sw->db, sw->id, ROLE_MINIMIZE, &t, &n, &err) != 0 ||
      minimize_plan_make(t, n, &m->in, &p, &err) != 0) {
    mz_fail(sw, err ? err : "cannot plan the minimize trials");
    free(err);
    record_free(t, n);
    return;
  }
  int room = p.n_configs;
  if (m->o->trials > 0 && room > m->o->trials - ended_minimize(t, n))
    room = m->o->trials - ended_minimize(t, n);
  if (room < p.n_configs) m->budget_hit = 1;
  for (int i = 0; i < room && !sw->fail.failed; i++) {
    proposal prop;
    if (strategy_render_subset(sw->strat, p.configs[i], &prop, &err) != 0) {
      mz_fail(sw, err);
      break;
    }
    if (strcmp(prop.config_json, p.configs[i]) != 0) { /* it would never count as measured */
      char *why = xasprintf("minimize: %s rendered as %s", p.configs[i], prop.config_json);
      mz_fail(sw, why);
      free(why);
      proposal_clear(&prop);
      break;
    }
    sweep_queue_push(&sw->queue, &prop, ROLE_MINIMIZE, 0);
  }
  if (sw->queue.n > 0)
    diag_note("flagtune: minimize: %d trial%s: %s", sw->queue.n, sw->queue.n == 1 ? "" : "s",
              p.stage);
  budget_batch(&sw->bud, sw->next_number, sw->queue.n);
  free(err);
  minimize_plan_free(&p);
  record_free(t, n);
}

/* ---- the winner ---- */

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The winner (the recorded one, else the fastest ok full trial) and its speedup and
 * interval from the sweep's listing SHOWN. FT_EINPUT when there is nothing to minimize. */
static int read_winner(const cJSON *shown, const store_sweep *s, mz *m, char **err) {
  const cJSON *best = cJSON_GetObjectItemCaseSensitive(shown, "best");
  const char *config = listing_str(best, "config");
  if (!cJSON_IsObject(best) || !config)
    return diag_set(err, FT_EINPUT,
                    "sweep %lld has no winner to minimize: no trial ended ok (see `flagtune show "
                    "%lld`)",
                    (long long)s->id, (long long)s->id);
  if (strcmp(config, "{}") == 0)
    return diag_set(err, FT_EINPUT,
                    "sweep %lld has no winner to minimize: its fastest trial is the baseline",
                    (long long)s->id);
  if (isnan(num(shown, "baseline_ms")))
    return diag_set(err, FT_EINPUT,
                    "sweep %lld has no ok baseline: a speedup to keep cannot be measured",
                    (long long)s->id);
  m->winner = xstrdup(config);
  m->in.winner = m->winner;
  m->in.speedup = num(shown, "speedup");
  m->in.lo = num(shown, "speedup_lo");
  return 0;
}

/* A sweep that recorded no winner (no confirmation ran) gets one now, pooled like
 * confirmation's, so every later minimize (and `best`) reads the same winner. */
static int fix_winner(sweep *sw, mz *m, char **err) {
  if (!isnan(m->in.lo)) return 0;
  trial_record *t = NULL;
  int n = 0;
  store_winner w;
  const char *configs[] = {"{}", m->winner}; /* all that confirm_config pools */
  int rc = store_trials_load_configs(sw->db, sw->id, configs, 2, &t, &n, err);
  if (rc == 0 &&
      confirm_config(t, n, m->winner, sw->exp->budget_steps, sw->exp->metric_skip, &w) == 0) {
    rc = store_sweep_set_winner(sw->db, sw->id, &w, err);
    if (rc == 0 && w.value > 0) {
      m->in.speedup = w.baseline / w.value;
      m->in.lo = w.lo;
    }
  }
  record_free(t, n);
  /* No interval (no step times): a revert must then keep the speedup itself. */
  if (isnan(m->in.lo)) m->in.lo = m->in.speedup;
  return rc;
}

/* ---- where it runs (as resume) ---- */

/* Trials a dead orchestrator left running are ended and marked lost (the sweep is ours
 * now); metric.check's reference is the stored baseline's losses. */
static int prepare(sweep *sw, const store_sweep *s, const minimize_opts *o, const cJSON *shown,
                   char **err) {
  trial_record *t = NULL;
  int n = 0;
  int rc = store_trials_running(sw->db, s->id, &t, &n, &sw->next_number, err);
  if (rc != 0) return rc;
  exec_orphan *orphans = xcalloc((size_t)n + 1, sizeof *orphans);
  int n_orphans = 0;
  for (int i = 0; i < n; i++)
    orphans[n_orphans++] = (exec_orphan){.number = t[i].number, .pid = t[i].pid};
  exec_reap(s->id, orphans, n_orphans);
  free(orphans);
  record_free(t, n);
  rc = store_trials_mark(sw->db, s->id, OUTCOME_RUNNING, OUTCOME_LOST, NULL, err);
  sweep_opts so = {.db_path = o->db_path,
                   .parallel = o->parallel > 0 ? o->parallel : s->parallel,
                   .hours = 0,
                   .seed = s->seed,
                   .has_seed = 1};
  int next = sw->next_number;
  if (rc == 0) rc = sweep_prepare(sw, s->experiment_path, s->experiment_text, &so, NULL, err);
  sw->next_number = next;
  if (rc == 0) launch_use_stored_command(sw->exp, s->command_json);
  best_restore(&sw->best, sw->best.baseline_ok, num(shown, "baseline_ms"), sw->best.n_ok);
  /* the progress lines' speedups */
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(shown, "baseline");
  if (rc == 0 && sw->check_waits) {
    sw->check_waits = 0;
    if (!isnan(num(base, "id")) && strcmp(listing_str(base, "status"), "ok") == 0)
      rc = store_trial_losses(sw->db, (int64_t)num(base, "id"), &sw->check_ref, &sw->n_check_ref,
                              err);
  }
  return rc;
}

/* ---- the report ---- */

/* The first ok trial (by number) of a configuration: the one whose flags and variables the
 * snippet exports. Read one row at a time, so a large sweep's rows are never all held. */
typedef struct {
  const char *config;
  cJSON *found;
} find_ok;

static int ok_of_config(cJSON *row, void *ud) {
  find_ok *f = ud;
  const char *c = listing_str(row, "config"), *st = listing_str(row, "status");
  if (!c || !st || strcmp(c, f->config) != 0 || strcmp(st, "ok") != 0) return 0;
  f->found = cJSON_Duplicate(row, 1);
  return 1; /* stops the walk */
}

static cJSON *trial_of(store *db, int64_t sweep_id, const char *config, char **err) {
  find_ok f = {.config = config};
  int rc = store_each_trial(db, sweep_id, ok_of_config, &f, err);
  if (rc != 0 && rc != 1) {
    cJSON_Delete(f.found);
    return NULL;
  }
  return f.found;
}

static char *param_line(const minimize_param *p, int done) {
  const char *what = p->dropped   ? "reverted"
                     : p->matters ? "kept (matters)"
                     : p->tried   ? "kept"
                                  : "undecided";
  if (done && !p->tried && !p->matters) what = "kept";
  char alone[48] = "not measured";
  if (!isnan(p->alone))
    snprintf(alone, sizeof alone, "%.3fx", p->alone);
  else if (p->alone_failed >= 0) /* measured: it failed (an OOM without it is why it matters) */
    snprintf(alone, sizeof alone, "ended %s", outcome_name((outcome)p->alone_failed));
  return xasprintf("  %-15s %s=%s  (the winner without it: %s)", what, p->name, p->value, alone);
}

/* Writes the report as the snippet's comments, then the minimal set's flags and variables. */
static int write_report(store *db, const store_sweep *s, const cJSON *shown, const mz *m,
                        const minimize_plan *p, const minimize_opts *o, char **err) {
  cJSON *rep = trial_of(db, s->id, p->minimal, err);
  if (!rep && *err) return FT_ESTORE;
  if (!rep) return diag_set(err, FT_ESYS, "minimize: no ok trial of %s to export", p->minimal);
  int n_c = 0, kept = 0;
  char **c = xcalloc((size_t)p->n_params + 4, sizeof(char *));
  char lo[32] = "";
  if (!isnan(num(shown, "speedup_lo")))
    snprintf(lo, sizeof lo, " (95%% CI %.3f-%.3f)", num(shown, "speedup_lo"),
             num(shown, "speedup_hi"));
  c[n_c++] = xasprintf("flagtune minimize: sweep %lld \"%s\", model %s on %s", (long long)s->id,
                       s->name, s->model, s->hardware);
  c[n_c++] = xasprintf("winner: %.3fx over the baseline%s, %d searched parameter%s", m->in.speedup,
                       lo, p->n_params, p->n_params == 1 ? "" : "s");
  for (int i = 0; i < p->n_params; i++) {
    c[n_c++] = param_line(&p->params[i], 1);
    kept += !p->params[i].dropped;
  }
  c[n_c++] = xasprintf(
      "minimal set: %d of %d parameter%s, %.3fx (a revert is kept at or "
      "above %.3fx), trial %.0f",
      kept, p->n_params, p->n_params == 1 ? "" : "s", p->minimal_speedup, m->in.lo,
      num(rep, "number"));
  listing_export x;
  listing_export_init(&x, rep, (const char *const *)c, n_c);
  int rc = trialcfg_export(o->out, o->format, &x.info, err);
  listing_export_clear(&x);
  cJSON_Delete(rep);
  for (int k = 0; k < n_c; k++) free(c[k]);
  free(c);
  return rc;
}

/* How far an unfinished minimize got, on the terminal. */
static void note_progress(const minimize_plan *p) {
  for (int i = 0; i < p->n_params; i++) {
    char *line = param_line(&p->params[i], 0);
    diag_note("%s", line);
    free(line);
  }
}

/* Plans once more from the stored trials and reports. */
static int finish(sweep *sw, const store_sweep *s, const mz *m, const minimize_opts *o,
                  int *complete, char **err) {
  trial_record *t = NULL;
  int n = 0;
  minimize_plan p;
  cJSON *shown = NULL;
  int rc = store_trials_load_role(sw->db, s->id, ROLE_MINIMIZE, &t, &n, err);
  if (rc == 0) rc = minimize_plan_make(t, n, &m->in, &p, err);
  record_free(t, n);
  if (rc != 0) return rc;
  *complete = p.done;
  if (p.done) {
    rc = store_show_sweep_brief(sw->db, s->id, 0, &shown, err);
    if (rc == 0) rc = write_report(sw->db, s, shown, m, &p, o, err);
  } else {
    note_progress(&p);
  }
  cJSON_Delete(shown);
  minimize_plan_free(&p);
  return rc;
}

/* The sweep's status as it was before the claim (a sweep left 'running' by a dead process
 * is interrupted: `resume` continues it). */
static void give_back(sweep *sw, const store_sweep *s) {
  char *err = NULL;
  const char *status = strcmp(s->status, "running") == 0 ? "interrupted" : s->status;
  if (store_sweep_set_status(sw->db, s->id, status, s->error, 0, &err) != 0) diag_warn("%s", err);
  free(err);
}

static int run_all(sweep *sw, const store_sweep *s, mz *m, const minimize_opts *o,
                   const char *db_path, char **err) {
  int64_t id = 0;
  sweep_opts so = {.db_path = db_path, .force = o->force};
  int rc = sweep_begin(sw, db_path, &so, &id, err);
  if (rc != 0) return rc;
  sw->refill = refill;
  sw->refill_ud = m;
  if (o->hours > 0) budget_set_hours(&sw->bud, o->hours, sweep_now_s());
  char *name = json_terminal_text(s->name, NULL);
  diag_note(
      "flagtune: minimizing sweep %lld \"%s\": winner %s, %.3fx, reverts kept at or above "
      "%.3fx, %d measurement%s each",
      (long long)s->id, name, m->winner, m->in.speedup, m->in.lo, m->in.repeats,
      m->in.repeats == 1 ? "" : "s");
  free(name);
  rc = sweep_drive(sw, err);
  give_back(sw, s);
  if (rc == FT_EINTR) {
    free(*err);
    *err = NULL;
    return diag_set(err, FT_EINTR,
                    "minimize of sweep %lld interrupted; the trials that ended are kept: "
                    "`flagtune minimize %lld` continues",
                    (long long)s->id, (long long)s->id);
  }
  return rc;
}

int sweep_minimize(const char *ref, const minimize_opts *o, int *complete, char **err) {
  sweep *sw = xcalloc(1, sizeof *sw);
  store_sweep s = {0};
  mz m = {.o = o};
  cJSON *shown = NULL;
  *complete = 0;
  m.in.repeats = o->repeats > 0 ? o->repeats : MINIMIZE_REPEATS;
  char *cwd = launch_cwd();
  int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char *db_path = launch_absolute(o->db_path, cwd);
  minimize_opts here = *o;
  here.db_path = db_path;
  sweep_pin_log_dir(cwd);
  int rc = store_open(db_path, STORE_MUST_EXIST, &sw->db, err), claimed = 0;
  if (rc == 0) rc = store_sweep_get(sw->db, ref, &s, err);
  /* The sweep's row, its best and its baseline; no trial table (a 100,000-trial sweep's). */
  if (rc == 0) rc = store_show_sweep_brief(sw->db, s.id, 0, &shown, err);
  if (rc == 0) rc = read_winner(shown, &s, &m, err);
  if (rc == 0) rc = store_sweep_claim(sw->db, s.id, o->force, err);
  claimed = rc == 0;
  if (rc == 0) rc = sweep_enter_workdir(&s, err);
  if (rc == 0) {
    sw->id = s.id;
    rc = prepare(sw, &s, &here, shown, err);
  }
  if (rc == 0) rc = fix_winner(sw, &m, err);
  if (rc == 0)
    rc = run_all(sw, &s, &m, &here, db_path, err);
  else if (claimed)
    give_back(sw, &s);
  int done_rc = 0;
  char *done_err = NULL;
  if (claimed && sw->exp && (rc == 0 || rc == FT_EINTR))
    done_rc = finish(sw, &s, &m, &here, complete, &done_err);
  if (rc == 0 && done_rc != 0) {
    rc = done_rc;
    *err = done_err;
    done_err = NULL;
  }
  free(done_err);
  if (rc == 0 && !*complete && m.budget_hit)
    diag_note(
        "flagtune: minimize: --trials %d spent before every parameter was decided; "
        "`flagtune minimize %lld --trials N` with a larger N continues",
        o->trials, (long long)s.id);
  cJSON_Delete(shown);
  free(m.winner);
  store_sweep_clear(&s);
  sweep_free(sw);
  if (home >= 0 && fchdir(home) != 0) diag_warn("cannot return to %s", cwd ? cwd : ".");
  if (home >= 0) close(home);
  free(db_path);
  free(cwd);
  return rc;
}
