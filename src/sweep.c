/* The orchestrator. Owns one sweep's life on one libuv loop: the slots, the budget and
 * deadline, the queue of trials to run (baseline and re-runs first, then the strategy's
 * proposals), the per-trial state while output arrives, and the signal policy.
 * It decides nothing about syntax (experiment), quoting (trialcfg), process handling
 * (exec), outcome rules (classify) or SQL (store): it wires them together. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "classify.h"
#include "confirm.h"
#include "diag.h"
#include "exec.h"
#include "experiment.h"
#include "hardware.h"
#include "json.h"
#include "lhost.h"
#include "parse.h"
#include "stats.h"
#include "store.h"
#include "strategy.h"
#include "trialcfg.h"

extern char **environ;

#define EXCERPT_LINES 20   /* last stderr lines kept for the error excerpt */
#define EXCERPT_WIDTH 400  /* bytes kept of each */
#define MAX_STEPS 1000000  /* step times kept per trial */

typedef struct sweep sweep;

/* A trial waiting for a slot. */
typedef struct {
  proposal prop;
  const char *role;
  int rerun_of;
} pending;

/* A trial in a slot. */
typedef struct {
  sweep *sw;
  int slot;
  int number;
  int64_t trial_id;
  const char *role;
  proposal prop;
  int steps_budget;
  int skip;             /* warm-up steps left out of its value (more under auto PGLE) */
  int profiling;        /* manual PGLE: the profile phase is running */
  char *profile_path;   /* where the profile phase must leave its profile */
  exec_trial *exec;
  double *steps;
  int n_steps, cap_steps;
  int n_bad_values;
  trial_facts facts;
  char *excerpt[EXCERPT_LINES];
  int excerpt_next;
  char *last_stdout;
} running;

struct sweep {
  uv_loop_t loop;
  uv_signal_t sigint, sigterm;
  lhost *host;
  experiment *exp;
  strategy *strat;
  store *db;
  int64_t id;
  int64_t seed;
  int parallel;
  int budget_trials;  /* trials that count: everything but lost and interrupted */
  int counted;        /* trials started (or finished) that count against the budget */
  double deadline;    /* monotonic seconds; 0: none */
  int next_number;
  running **slots;
  int n_running;
  pending *queue;
  int n_queue, cap_queue;
  int stopping;       /* 1: first signal seen, 2: second */
  int strategy_exhausted;
  int failed;         /* a store or strategy error ended the sweep */
  char *fail_reason;
  char *log_dir;
  char **gpu_ids;     /* the devices the slots share out */
  int n_gpu_ids;
  metric_spec metric;
  classify_patterns patterns;
  double baseline_ms;
  double best_ms;
  int n_ok;
  int baseline_ok;
  int search_budget;    /* budget_trials less the confirmation trials */
  int confirm_planned;  /* the confirmation trials are queued */
  int deadline_hit;     /* the time budget ran out */
  uv_timer_t deadline_timer;
  double *durations;    /* of finished trials, for "can the next one finish in time?" */
  int n_durations;
  char *hardware;       /* resolved fingerprint */
};

static double now_s(void) { return (double)uv_hrtime() / 1e9; }

/* ---- the queue ---- */

static void queue_push(sweep *sw, proposal *p, const char *role, int rerun_of) {
  if (sw->n_queue == sw->cap_queue) {
    sw->cap_queue = sw->cap_queue ? sw->cap_queue * 2 : 8;
    sw->queue = xrealloc(sw->queue, sizeof(pending) * (size_t)sw->cap_queue);
  }
  pending *q = &sw->queue[sw->n_queue++];
  q->prop = *p;
  q->role = role;
  q->rerun_of = rerun_of;
  memset(p, 0, sizeof *p);
}

static pending queue_pop(sweep *sw) {
  pending first = sw->queue[0];
  memmove(sw->queue, sw->queue + 1, sizeof(pending) * (size_t)(sw->n_queue - 1));
  sw->n_queue--;
  return first;
}

static void fail(sweep *sw, const char *why) {
  if (sw->failed) return;
  sw->failed = 1;
  sw->fail_reason = xstrdup(why);
  diag_error(why);
}

/* ---- per-trial output ---- */

static void excerpt_add(running *r, const char *line, size_t len) {
  if (len > EXCERPT_WIDTH) len = EXCERPT_WIDTH;
  free(r->excerpt[r->excerpt_next]);
  char *copy = xstrndup(line, len);
  for (char *p = copy; *p; p++) /* keep the excerpt printable */
    if ((unsigned char)*p < 0x20 && *p != '\t') *p = '?';
  r->excerpt[r->excerpt_next] = copy;
  r->excerpt_next = (r->excerpt_next + 1) % EXCERPT_LINES;
}

static char *excerpt_text(running *r) {
  size_t cap = 1, n = 0;
  for (int i = 0; i < EXCERPT_LINES; i++)
    if (r->excerpt[i]) cap += strlen(r->excerpt[i]) + 1;
  if (cap == 1) return r->last_stdout ? xstrdup(r->last_stdout) : NULL;
  char *out = xmalloc(cap);
  for (int k = 0; k < EXCERPT_LINES; k++) {
    const char *l = r->excerpt[(r->excerpt_next + k) % EXCERPT_LINES];
    if (!l) continue;
    size_t len = strlen(l);
    memcpy(out + n, l, len);
    n += len;
    out[n++] = '\n';
  }
  out[n ? n - 1 : 0] = '\0';
  return out;
}

static void add_step(running *r, double ms) {
  if (r->n_steps >= MAX_STEPS) return;
  if (r->n_steps == r->cap_steps) {
    r->cap_steps = r->cap_steps ? r->cap_steps * 2 : 64;
    r->steps = xrealloc(r->steps, sizeof(double) * (size_t)r->cap_steps);
  }
  r->steps[r->n_steps++] = ms;
}

static void stop_for(running *r, stop_reason why) {
  if (r->facts.stopped != STOPPED_NONE) return;
  r->facts.stopped = why;
  exec_stop_trial(r->exec);
}

/* Stops a search trial whose reduced step time so far is clearly slower than the best:
 * after prune_min_steps steps past the warm-up, more than prune_margin above it. */
static void maybe_prune(running *r) {
  sweep *sw = r->sw;
  experiment *e = sw->exp;
  if (e->prune_margin <= 0 || isnan(sw->best_ms) || strcmp(r->role, "search") != 0) return;
  if (r->n_steps - r->skip < e->prune_min_steps) return;
  double v = stats_reduce(e->metric_reduce, r->steps, r->n_steps, r->skip);
  if (v > sw->best_ms * (1.0 + e->prune_margin)) stop_for(r, STOPPED_PRUNED);
}

static void on_line(void *ud, int stream, const char *line, size_t len, int truncated) {
  running *r = ud;
  (void)truncated;
  double ms;
  int p = parse_step(&r->sw->metric, line, len, &ms);
  if (p == PARSE_STEP) {
    add_step(r, ms);
    maybe_prune(r);
  } else if (p == PARSE_BAD) {
    r->n_bad_values++;
  }
  switch (classify_line(&r->sw->patterns, line, len)) {
    case LINE_OOM_FATAL:
      r->facts.saw_oom_fatal = 1;
      stop_for(r, STOPPED_OOM);
      break;
    case LINE_INVALID:
      r->facts.saw_invalid = 1;
      stop_for(r, STOPPED_INVALID);
      break;
    case LINE_OOM_SOFT: r->facts.saw_oom_soft = 1; break;
    case LINE_BAD_VALUE:
      diag_warn("trial %d: %.*s", r->number, (int)(len > 200 ? 200 : len), line);
      break;
    default: break;
  }
  if (stream == EXEC_STDERR) {
    excerpt_add(r, line, len);
  } else if (p != PARSE_STEP && len > 0) {
    free(r->last_stdout);
    r->last_stdout = xstrndup(line, len > EXCERPT_WIDTH ? EXCERPT_WIDTH : len);
  }
}

/* ---- finishing a trial ---- */

static void running_free(running *r) {
  proposal_clear(&r->prop);
  free(r->profile_path);
  free(r->steps);
  free(r->last_stdout);
  for (int i = 0; i < EXCERPT_LINES; i++) free(r->excerpt[i]);
  free(r);
}

static void schedule(sweep *sw);

static void report_progress(sweep *sw, running *r, outcome o, double value) {
  char val[64] = "";
  if (o == OUTCOME_OK) {
    if (sw->baseline_ms > 0 && r->number != 0)
      snprintf(val, sizeof val, "%9.2f ms %5.3fx", value, sw->baseline_ms / value);
    else
      snprintf(val, sizeof val, "%9.2f ms", value);
  }
  diag_note("[%4d/%d] %-11s %-26s %s", r->number, sw->budget_trials - 1, outcome_name(o), val,
            r->number == 0 ? "(baseline)" : r->prop.label);
}

static void tell_strategy(sweep *sw, running *r, outcome o, double value) {
  if (strcmp(r->role, "baseline") == 0 || strcmp(r->role, "confirm") == 0 ||
      o == OUTCOME_INTERRUPTED || sw->failed)
    return;
  trial_report rep = {r->prop.config_json, o, value, r->steps, r->n_steps, r->steps_budget,
                      r->number};
  char *err = NULL;
  if (strategy_tell(sw->strat, &rep, &err) != 0) fail(sw, err);
  free(err);
}

static void track_best(sweep *sw, running *r, outcome o, double value) {
  if (o != OUTCOME_OK) return;
  if (r->number == 0 || strcmp(r->role, "baseline") == 0) {
    sw->baseline_ms = value;
    sw->baseline_ok = 1;
    return;
  }
  if (strcmp(r->role, "confirm") == 0) return;
  sw->n_ok++;
  if (isnan(sw->best_ms) || value < sw->best_ms) sw->best_ms = value;
}

static void record_duration(sweep *sw, double seconds) {
  sw->durations = xrealloc(sw->durations, sizeof(double) * (size_t)(sw->n_durations + 1));
  sw->durations[sw->n_durations++] = seconds;
}

static int launch_phase(sweep *sw, running *r, int profile, char **err);

/* HEAD, a newline and TAIL (either may be NULL) as one new string; frees TAIL. */
static char *prepend(const char *head, char *tail) {
  char *out = xasprintf("%s%s%s", head, tail ? "\n" : "", tail ? tail : "");
  free(tail);
  return out;
}

/* The error excerpt stored with a finished trial: its last stderr lines, with the reason
 * first when flagtune knows one (a spawn failure, bad step values, its PGLE profile run). */
static char *trial_excerpt(running *r, const exec_result *res, outcome o, const char *why) {
  char *excerpt = res->spawn_error ? xstrdup(res->spawn_message) : excerpt_text(r);
  if (o == OUTCOME_NO_METRIC && r->n_bad_values > 0) {
    char head[96];
    snprintf(head, sizeof head, "%d step time(s) were NaN, negative or absurd", r->n_bad_values);
    excerpt = prepend(head, excerpt);
  }
  if (r->profiling) {
    char *head = xasprintf("PGLE profile run: %s", why ? why : outcome_name(o));
    excerpt = prepend(head, excerpt);
    free(head);
  }
  return excerpt;
}

/* Clears what one phase left in R (steps, facts, excerpt) before the next phase. */
static void reset_phase(running *r) {
  r->n_steps = 0;
  r->n_bad_values = 0;
  int min_steps = r->facts.min_steps;
  memset(&r->facts, 0, sizeof r->facts);
  r->facts.min_steps = min_steps;
  for (int i = 0; i < EXCERPT_LINES; i++) {
    free(r->excerpt[i]);
    r->excerpt[i] = NULL;
  }
  free(r->last_stdout);
  r->last_stdout = NULL;
}

/* The profile phase ended. On success (exit 0, a profile left behind) the measured run
 * starts in the same slot and 1 is returned; otherwise R's facts and *why say how the trial
 * failed and 0 is returned, for on_exit_trial to finish it. */
static int profile_done(running *r, const exec_result *res, char **why) {
  sweep *sw = r->sw;
  struct stat st;
  int exited_ok = !res->spawn_error && res->term_signal == 0 && res->exit_status == 0 &&
                  r->facts.stopped == STOPPED_NONE;
  int have_profile = stat(r->profile_path, &st) == 0 && st.st_size > 0;
  const char *status = exited_ok && have_profile ? "ok" : NULL;
  if (exited_ok && !have_profile) {
    *why = xasprintf("exited 0 but left no profile at %s (the command must write it to "
                     "$FLAGTUNE_PGLE_PROFILE)",
                     r->profile_path);
    r->facts.exit_code = 1; /* a failed trial: crash, with the reason as its excerpt */
    status = "crash";
  }
  if (!status) {
    r->facts.n_steps = r->facts.min_steps; /* its steps do not count: judge only how it ended */
    status = outcome_name(classify_trial(&r->facts));
  }
  store_trial_set_profile(sw->db, r->trial_id, r->profile_path, status, res->wall_s, NULL);
  if (strcmp(status, "ok") != 0 || sw->stopping || sw->deadline_hit) return 0;
  reset_phase(r);
  char *err = NULL;
  if (launch_phase(sw, r, 0, &err) == 0) return 1;
  *why = err;
  r->facts.exit_code = 1;
  return 0;
}

static void on_exit_trial(void *ud, const exec_result *res) {
  running *r = ud;
  sweep *sw = r->sw;
  char *why = NULL;
  r->facts.spawn_failed = res->spawn_error != 0;
  r->facts.exit_code = (long)res->exit_status;
  r->facts.term_signal = res->term_signal;
  r->facts.n_steps = r->n_steps;
  if (res->stopped == EXEC_STOP_TIMEOUT && r->facts.stopped == STOPPED_NONE)
    r->facts.stopped = STOPPED_TIMEOUT;
  if (r->profiling && profile_done(r, res, &why)) return;
  if (r->profiling) r->facts.n_steps = 0; /* the profile run's steps are not the trial's */
  outcome o = classify_trial(&r->facts);
  double value = NAN;
  if (o == OUTCOME_OK) value = stats_reduce(sw->exp->metric_reduce, r->steps, r->n_steps, r->skip);
  char *excerpt = trial_excerpt(r, res, o, why);
  free(why);
  store_trial_end end = {outcome_name(o), value, !res->spawn_error && !res->term_signal,
                         res->exit_status, res->term_signal, res->wall_s, excerpt};
  char *err = NULL;
  if (store_trial_finish(sw->db, r->trial_id, &end, r->steps, r->n_steps, &err) != 0)
    fail(sw, err);
  free(err);
  free(excerpt);
  if (o == OUTCOME_INTERRUPTED) sw->counted--;
  else if (!res->spawn_error) record_duration(sw, res->wall_s);
  track_best(sw, r, o, value);
  report_progress(sw, r, o, value);
  tell_strategy(sw, r, o, value);
  sw->slots[r->slot] = NULL;
  sw->n_running--;
  running_free(r);
  schedule(sw);
}

/* ---- starting a trial ---- */

static char *settings_env_json(const proposal *p) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; i < p->n_settings; i++)
    if (p->settings[i].target == TARGET_ENV)
      cJSON_AddStringToObject(o, p->settings[i].name, p->settings[i].value);
  char *s = json_print(o);
  cJSON_Delete(o);
  return s;
}

static char *argv_json(char **argv) {
  cJSON *a = cJSON_CreateArray();
  for (char **p = argv; *p; p++) cJSON_AddItemToArray(a, cJSON_CreateString(*p));
  char *s = json_print(a);
  cJSON_Delete(a);
  return s;
}

/* CUDA_VISIBLE_DEVICES for SLOT: its own gpus_per_trial devices. */
static char *slot_devices(sweep *sw, int slot) {
  int g = sw->exp->gpus_per_trial;
  size_t cap = 64;
  char *out = xmalloc(cap);
  size_t n = (size_t)snprintf(out, cap, "CUDA_VISIBLE_DEVICES=");
  for (int i = 0; i < g; i++) {
    const char *id = sw->gpu_ids[slot * g + i];
    size_t need = n + strlen(id) + 2;
    if (need > cap) out = xrealloc(out, cap = need * 2);
    n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "", id);
  }
  return out;
}

typedef struct {
  char **argv;
  trial_env env;
  char *extra[6];
  char *log_path;
} launch;

static void launch_free(launch *l) {
  trialcfg_free_strv(l->argv);
  trialcfg_env_free(&l->env);
  for (int i = 0; i < 6; i++) free(l->extra[i]);
  free(l->log_path);
}

#define PGLE_PATH_FLAG "xla_gpu_pgle_profile_file_or_directory_path"
#define LHS_FLAG "xla_gpu_enable_latency_hiding_scheduler"
#define ASYNC_OFF_FLAG "xla_gpu_disable_async_collectives"

/* The profile phase's settings (seed 002): the trial's own, with the latency hiding
 * scheduler off and every collective synchronous, so that no op's cost hides another's. */
static setting *profile_settings(const proposal *p, int *n) {
  setting *out = xcalloc((size_t)p->n_settings + 2, sizeof *out);
  int k = 0;
  for (int i = 0; i < p->n_settings; i++) {
    const char *name = p->settings[i].name;
    if (p->settings[i].target == TARGET_XLA &&
        (!strcmp(name, PGLE_PATH_FLAG) || !strcmp(name, LHS_FLAG) || !strcmp(name, ASYNC_OFF_FLAG)))
      continue;
    out[k++] = p->settings[i];
  }
  out[k++] = (setting){TARGET_XLA, LHS_FLAG, "false"};
  out[k++] = (setting){TARGET_XLA, ASYNC_OFF_FLAG,
                       "allreduce,allgather,reducescatter,collectivebroadcast,alltoall,"
                       "collectivepermute"};
  *n = k;
  return out;
}

/* The argv, environment and log of one phase of R: the measured run, or (PROFILE) manual
 * PGLE's profile run, which writes its profile to $FLAGTUNE_PGLE_PROFILE. */
static int build_launch(sweep *sw, running *r, launch *l, int profile, char **err) {
  experiment *e = sw->exp;
  memset(l, 0, sizeof *l);
  int steps = profile && e->pgle_steps > 0 ? e->pgle_steps : r->steps_budget;
  int rc = trialcfg_argv(profile ? e->pgle_command : e->command, steps, &l->argv, err);
  if (rc) return rc;
  int k = 0, n_settings = r->prop.n_settings;
  l->extra[k++] = xasprintf("FLAGTUNE_TRIAL=%d", r->number);
  l->extra[k++] = xasprintf("FLAGTUNE_SWEEP=%lld", (long long)sw->id);
  l->extra[k++] = xasprintf("FLAGTUNE_STEPS=%d", steps);
  if (e->gpus_per_trial > 0) l->extra[k++] = slot_devices(sw, r->slot);
  if (profile) l->extra[k++] = xasprintf("FLAGTUNE_PGLE_PROFILE=%s", r->profile_path);
  setting *settings = profile ? profile_settings(&r->prop, &n_settings) : r->prop.settings;
  rc = trialcfg_env(environ, settings, n_settings, l->extra, &l->env, err);
  if (profile) free(settings);
  if (rc) return rc;
  l->log_path = xasprintf("%s/trial-%04d%s.log", sw->log_dir, r->number, profile ? ".profile" : "");
  return 0;
}

static int record_trial(sweep *sw, running *r, launch *l, int rerun_of, char **err) {
  char *env_json = settings_env_json(&r->prop);
  char *cmd_json = argv_json(l->argv);
  store_trial_new t = {sw->id, r->number, r->role, r->prop.config_json,
                       r->prop.label, l->env.xla_flags, l->env.tpu_args, env_json,
                       cmd_json, r->steps_budget, r->slot, l->log_path, rerun_of};
  int rc = store_trial_begin(sw->db, &t, &r->trial_id, err);
  free(env_json);
  free(cmd_json);
  return rc;
}

/* JAX's reading of a boolean environment variable. */
static int env_true(const char *v) {
  static const char *const yes[] = {"1", "y", "yes", "t", "true", "on"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
    if (strcasecmp(v, yes[i]) == 0) return 1;
  return 0;
}

/* The steps this trial leaves out: the experiment's skip, plus, under auto PGLE, the
 * profiled runs and the recompile step (JAX_PGLE_PROFILING_RUNS + 1 when the trial sets it,
 * else the experiment's pgle_extra_skip). */
static int trial_skip(const experiment *e, const proposal *p) {
  if (e->pgle_extra_skip <= 0) return e->metric_skip;
  int pgle = 0, runs = -1;
  for (int i = 0; i < p->n_settings; i++) {
    const setting *st = &p->settings[i];
    if (st->target != TARGET_ENV) continue;
    if (strcmp(st->name, "JAX_ENABLE_PGLE") == 0) pgle = env_true(st->value);
    if (strcmp(st->name, "JAX_PGLE_PROFILING_RUNS") == 0) runs = atoi(st->value);
  }
  if (!pgle) return e->metric_skip;
  return e->metric_skip + (runs >= 0 ? runs + 1 : e->pgle_extra_skip);
}

/* Starts one phase of R on the loop. */
static int launch_phase(sweep *sw, running *r, int profile, char **err) {
  launch l;
  int rc = build_launch(sw, r, &l, profile, err);
  if (rc == 0) {
    exec_spec spec = {.argv = l.argv,
                      .envp = l.env.envp,
                      .cwd = sw->exp->workdir,
                      .timeout_s = sw->exp->timeout_s,
                      .grace_s = sw->exp->grace_s,
                      .log_path = l.log_path,
                      /* The literal path still names this binary if it is rebuilt or
                       * deleted mid-sweep. */
                      .supervisor = "/proc/self/exe"};
    exec_callbacks cb = {on_line, on_exit_trial};
    rc = exec_start(&sw->loop, &spec, &cb, r, &r->exec, err);
  }
  launch_free(&l);
  r->profiling = profile;
  if (rc == 0 && exec_pid(r->exec) > 0)
    store_trial_set_pid(sw->db, r->trial_id, exec_pid(r->exec), NULL);
  return rc;
}

/* Manual PGLE: the measured run reads the profile the profile phase leaves. */
static void add_profile_flag(sweep *sw, running *r) {
  proposal *p = &r->prop;
  r->profile_path = xasprintf("%s/trial-%04d.pgle.pbtxt", sw->log_dir, r->number);
  p->settings = xrealloc(p->settings, sizeof(setting) * (size_t)(p->n_settings + 1));
  p->settings[p->n_settings++] =
      (setting){TARGET_XLA, xstrdup(PGLE_PATH_FLAG), xstrdup(r->profile_path)};
}

static int start_trial(sweep *sw, int slot, pending *q) {
  running *r = xcalloc(1, sizeof *r);
  r->sw = sw;
  r->slot = slot;
  r->number = sw->next_number++;
  r->role = q->role;
  r->prop = q->prop;
  r->steps_budget = r->prop.steps > 0 ? r->prop.steps : sw->exp->budget_steps;
  r->skip = trial_skip(sw->exp, &r->prop);
  r->facts.min_steps = sw->exp->min_steps + (r->skip - sw->exp->metric_skip);
  if (sw->exp->pgle_manual) add_profile_flag(sw, r);
  launch l;
  char *err = NULL;
  int rc = build_launch(sw, r, &l, 0, &err); /* the measured run is what the row records */
  if (rc == 0) rc = record_trial(sw, r, &l, q->rerun_of, &err);
  launch_free(&l);
  if (rc == 0) rc = launch_phase(sw, r, sw->exp->pgle_manual, &err);
  if (rc != 0) {
    fail(sw, err ? err : "cannot start a trial");
    free(err);
    running_free(r);
    return rc;
  }
  sw->slots[slot] = r;
  sw->n_running++;
  return 0;
}

/* ---- scheduling ---- */

static int free_slot(sweep *sw) {
  for (int i = 0; i < sw->parallel; i++)
    if (!sw->slots[i]) return i;
  return -1;
}

/* Whether a trial started now can finish before the deadline: the median duration of the
 * trials finished so far must fit in the time left (the first trial always starts). */
static int fits_deadline(sweep *sw) {
  if (sw->deadline <= 0) return 1;
  double left = sw->deadline - now_s();
  if (left <= 0) return 0;
  if (sw->n_durations == 0) return 1;
  return stats_median(sw->durations, sw->n_durations) < left;
}

static int may_start(sweep *sw) {
  if (sw->stopping || sw->failed || sw->deadline_hit) return 0;
  if (sw->counted >= sw->budget_trials) return 0;
  return fits_deadline(sw);
}

/* Asks the strategy for up to N proposals and queues them. */
static void refill_queue(sweep *sw, int n) {
  if (sw->strategy_exhausted) return;
  proposal *props = NULL;
  int got = 0;
  char *err = NULL;
  if (strategy_ask(sw->strat, n, &props, &got, &err) != 0) {
    fail(sw, err);
    free(err);
    return;
  }
  for (int i = 0; i < got; i++) queue_push(sw, &props[i], "search", 0);
  free(props);
  if (got == 0 && (strategy_done(sw->strat) || sw->n_running == 0)) sw->strategy_exhausted = 1;
}

static void close_handles(sweep *sw) {
  if (!uv_is_closing((uv_handle_t *)&sw->sigint)) uv_close((uv_handle_t *)&sw->sigint, NULL);
  if (!uv_is_closing((uv_handle_t *)&sw->sigterm)) uv_close((uv_handle_t *)&sw->sigterm, NULL);
  if (sw->deadline > 0 && !uv_is_closing((uv_handle_t *)&sw->deadline_timer))
    uv_close((uv_handle_t *)&sw->deadline_timer, NULL);
}

/* Queues the confirmation trials once the search budget is spent and every search trial
 * has ended (the top candidates are known only then). */
static void plan_confirmation(sweep *sw) {
  store_trial *t = NULL;
  const char **configs = NULL;
  int n = 0, n_configs = 0;
  char *err = NULL;
  sw->confirm_planned = 1;
  if (store_trials_load(sw->db, sw->id, &t, &n, &err) != 0) {
    fail(sw, err);
    free(err);
    return;
  }
  confirm_plan(t, n, sw->exp->budget_steps, sw->exp->confirm_top, sw->exp->confirm_repeats,
               &configs, &n_configs);
  for (int i = 0; i < n_configs && !sw->failed; i++) {
    proposal p;
    if (strategy_render(sw->strat, configs[i], &p, &err) != 0) {
      fail(sw, err);
      break;
    }
    queue_push(sw, &p, "confirm", 0);
  }
  if (n_configs > 0)
    diag_note("flagtune: confirming: %d re-measurement%s of the baseline and the top %d", n_configs,
              n_configs == 1 ? "" : "s", sw->exp->confirm_top);
  free(err);
  free(configs);
  store_trials_free(t, n);
}

/* Fills the queue for the next free slot: proposals while the search budget lasts, then
 * the confirmation trials. Returns 0 when nothing can be queued now. */
static int fill_queue(sweep *sw) {
  if (sw->n_queue > 0) return 1;
  if (sw->counted < sw->search_budget) {
    int want = sw->search_budget - sw->counted;
    int free_n = sw->parallel - sw->n_running;
    refill_queue(sw, want < free_n ? want : free_n);
    if (sw->n_queue > 0 || !sw->strategy_exhausted) return sw->n_queue > 0;
  }
  if (sw->confirm_planned || sw->search_budget >= sw->budget_trials || sw->n_running > 0) return 0;
  plan_confirmation(sw);
  return sw->n_queue > 0;
}

static void schedule(sweep *sw) {
  int slot;
  while (may_start(sw) && (slot = free_slot(sw)) >= 0) {
    if (!fill_queue(sw)) break;
    pending q = queue_pop(sw);
    sw->counted++;
    if (start_trial(sw, slot, &q) != 0) break;
  }
  if (sw->n_running == 0) close_handles(sw);
}

static void on_signal(uv_signal_t *h, int signum) {
  sweep *sw = h->data;
  sw->stopping++;
  if (sw->stopping == 1)
    diag_note("flagtune: %s: stopping; running trials are terminated and recorded as interrupted "
              "(again to kill at once)",
              signum == SIGINT ? "interrupt" : "terminate");
  for (int i = 0; i < sw->parallel; i++) {
    running *r = sw->slots[i];
    if (!r) continue;
    if (r->facts.stopped == STOPPED_NONE) r->facts.stopped = STOPPED_INTERRUPTED;
    if (sw->stopping == 1) exec_stop_trial(r->exec);
    else exec_kill_trial(r->exec);
  }
  if (sw->n_running == 0) close_handles(sw);
}

/* ---- setup and teardown ---- */

static void sweep_free(sweep *sw) {
  for (int i = 0; i < sw->n_queue; i++) proposal_clear(&sw->queue[i].prop);
  free(sw->queue);
  free(sw->slots);
  for (int i = 0; i < sw->n_gpu_ids; i++) free(sw->gpu_ids[i]);
  free(sw->gpu_ids);
  free(sw->log_dir);
  free(sw->fail_reason);
  free(sw->durations);
  free(sw->hardware);
  strategy_free(sw->strat);
  experiment_free(sw->exp);
  store_close(sw->db);
  lhost_free(sw->host);
  free(sw);
}

/* Splits CUDA_VISIBLE_DEVICES (or 0..n-1) into the ids slots share out. */
static int plan_gpus(sweep *sw, char **err) {
  int need = sw->exp->gpus_per_trial * sw->parallel;
  if (need == 0) return 0;
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  sw->gpu_ids = xcalloc((size_t)need, sizeof(char *));
  if (visible && *visible) {
    char *copy = xstrdup(visible), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && sw->n_gpu_ids < need;
         tok = strtok_r(NULL, ",", &save))
      sw->gpu_ids[sw->n_gpu_ids++] = xstrdup(tok);
    free(copy);
    if (sw->n_gpu_ids < need)
      return diag_set(err, FT_EINPUT,
                      "parallel = %d with gpus_per_trial = %d needs %d GPUs, but "
                      "CUDA_VISIBLE_DEVICES lists %d",
                      sw->parallel, sw->exp->gpus_per_trial, need, sw->n_gpu_ids);
    return 0;
  }
  for (int i = 0; i < need; i++) sw->gpu_ids[sw->n_gpu_ids++] = xasprintf("%d", i);
  return 0;
}

static int make_dirs(const char *path, char **err) {
  char *copy = xstrdup(path);
  for (char *p = copy + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(copy, 0777) != 0 && errno != EEXIST) break;
    *p = '/';
  }
  int rc = 0;
  if (mkdir(copy, 0777) != 0 && errno != EEXIST)
    rc = diag_set(err, FT_ESYS, "cannot create log directory %s: %s", copy, strerror(errno));
  free(copy);
  return rc;
}

static char *log_dir_for(const char *db_path, int64_t id) {
  const char *slash = strrchr(db_path, '/');
  if (!slash) return xasprintf("flagtune-logs/sweep-%lld", (long long)id);
  return xasprintf("%.*s/flagtune-logs/sweep-%lld", (int)(slash - db_path), db_path,
                   (long long)id);
}

static void apply_opts(sweep *sw, const sweep_opts *o) {
  experiment *e = sw->exp;
  sw->parallel = o->parallel > 0 ? o->parallel : e->parallel;
  sw->budget_trials = o->trials > 0 ? o->trials : e->budget_trials;
  double hours = o->hours >= 0 ? o->hours : e->budget_hours;
  sw->deadline = hours > 0 ? now_s() + hours * 3600.0 : 0;
  experiment_override_budget(e, sw->budget_trials, hours);
  sw->seed = o->has_seed ? o->seed : e->has_seed ? e->seed : (int64_t)time(NULL) % 1000000;
  sw->slots = xcalloc((size_t)sw->parallel, sizeof(running *));
  sw->metric = experiment_metric(e);
  sw->patterns.oom = (const char *const *)e->oom_patterns;
  sw->patterns.n_oom = e->n_oom_patterns;
  sw->patterns.invalid = (const char *const *)e->invalid_patterns;
  sw->patterns.n_invalid = e->n_invalid_patterns;
  sw->best_ms = NAN;
  sw->baseline_ms = NAN;
  /* Confirmation takes its trials from the budget, and only when the search keeps at least
   * twice as many: a small budget is better spent searching. */
  int confirm = e->confirm_top > 0 ? e->confirm_repeats * (e->confirm_top + 1) : 0;
  sw->search_budget = sw->budget_trials;
  if (confirm > 0 && sw->budget_trials - 1 - confirm >= 2 * confirm)
    sw->search_budget = sw->budget_trials - confirm;
}

static char *resolve_hardware(const experiment *e) {
  if (strcmp(e->hardware, "auto") != 0) return xstrdup(e->hardware);
  char *note = NULL;
  char *hw = hardware_fingerprint(&note);
  if (note) diag_note("flagtune: %s", note);
  free(note);
  return hw;
}

/* HIST followed by the finished trials of earlier sweeps of the same model and hardware
 * when the experiment asks for a warm start (the strategy host passes configurations that
 * no longer fit the space as the parameters they share, or skips them). Reads the
 * database only if it already exists. */
static trial_report *warm_history(sweep *sw, const char *db_path, const trial_report *hist,
                                  int n_hist, int *n_warm) {
  store_trial *t = NULL;
  store *db = NULL;
  int n = 0;
  *n_warm = 0;
  if (sw->exp->warm_start && store_open(db_path, STORE_READONLY, &db, NULL) == 0) {
    if (store_warm_trials(db, sw->exp->model, sw->hardware, sw->id, &t, &n, NULL) != 0) n = 0;
    store_close(db);
  }
  trial_report *all = xcalloc((size_t)(n_hist + n) + 1, sizeof *all);
  if (n_hist) memcpy(all, hist, sizeof *all * (size_t)n_hist);
  for (int i = 0; i < n; i++)
    all[n_hist + i] = (trial_report){xstrdup(t[i].config_json), outcome_from_name(t[i].status),
                                     t[i].value, NULL, 0, t[i].steps_budget, -1};
  store_trials_free(t, n);
  *n_warm = n;
  return all;
}

static void free_warm_history(trial_report *all, int n_hist, int n_warm) {
  for (int i = 0; i < n_warm; i++) free((char *)all[n_hist + i].config_json);
  free(all);
}

/* Loads the experiment and creates the strategy: everything that can be the user's fault. */
/* Hands the flag names of the database's imported jaxlib lists (if any) to the experiment
 * checks. Reads the database only if it already exists. */
static void allow_imported_flags(lhost *h, const char *db_path) {
  store *db = NULL;
  cJSON *rows = NULL;
  if (store_open(db_path, STORE_READONLY, &db, NULL) != 0) return;
  if (store_flags_names(db, &rows, NULL) == 0) {
    int n = cJSON_GetArraySize(rows), k = 0;
    const char **names = xcalloc((size_t)n + 1, sizeof(char *));
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
      if (cJSON_IsString(name)) names[k++] = name->valuestring;
    }
    experiment_allow_flags(h, names, k);
    free(names);
  }
  cJSON_Delete(rows);
  store_close(db);
}

static int prepare(sweep *sw, const char *path, const char *text, const sweep_opts *o,
                   const trial_report *hist, int n_hist, char **err) {
  int rc = lhost_new(&sw->host, err);
  if (rc == 0) allow_imported_flags(sw->host, o->db_path);
  if (rc == 0) rc = experiment_load(sw->host, path, text, &sw->exp, err);
  if (rc != 0) return rc;
  apply_opts(sw, o);
  if (sw->budget_trials < 2)
    return diag_set(err, FT_EINPUT, "--trials must be at least 2: the baseline takes one");
  rc = plan_gpus(sw, err);
  if (rc != 0) return rc;
  sw->hardware = resolve_hardware(sw->exp);
  int n_warm = 0;
  trial_report *all = warm_history(sw, o->db_path, hist, n_hist, &n_warm);
  rc = strategy_new(sw->exp, sw->seed, all, n_hist + n_warm, &sw->strat, err);
  free_warm_history(all, n_hist, n_warm);
  if (rc == 0 && n_warm > 0) {
    int shared = strategy_partial(sw->strat);
    diag_note("flagtune: warm start: %d trial%s of earlier sweeps of %s on %s (%d by the "
              "parameters shared with this space)",
              n_warm, n_warm == 1 ? "" : "s", sw->exp->model, sw->hardware, shared);
  }
  return rc;
}

static char *options_json(const sweep *sw, const sweep_opts *o) {
  cJSON *j = cJSON_CreateObject();
  if (o->parallel > 0) cJSON_AddNumberToObject(j, "parallel", o->parallel);
  if (o->trials > 0) cJSON_AddNumberToObject(j, "trials", o->trials);
  if (o->hours >= 0) cJSON_AddNumberToObject(j, "hours", o->hours);
  cJSON_AddNumberToObject(j, "seed", (double)sw->seed);
  cJSON_AddNumberToObject(j, "skip", sw->exp->metric_skip);
  cJSON_AddStringToObject(j, "reduce", stats_reduce_name(sw->exp->metric_reduce));
  char *s = json_print(j);
  cJSON_Delete(j);
  return s;
}

static int create_sweep(sweep *sw, const sweep_opts *o, char **err) {
  experiment *e = sw->exp;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  char *opts = options_json(sw, o);
  char *jaxlib = NULL;
  char *software = e->software_probe_off ? NULL : hardware_software(e->software_probe, &jaxlib);
  store_sweep_new n = {.name = o->name ? o->name : e->name,
                       .model = e->model,
                       .hardware = sw->hardware,
                       .experiment_path = e->path,
                       .experiment_text = e->text,
                       .experiment_hash = e->hash,
                       .strategy = e->strategy_desc,
                       .seed = sw->seed,
                       .budget_trials = sw->budget_trials,
                       .budget_hours = o->hours >= 0 ? o->hours : e->budget_hours,
                       .budget_steps = e->budget_steps,
                       .parallel = sw->parallel,
                       .host = host,
                       .options_json = opts,
                       .software = software,
                       .jaxlib = jaxlib};
  int rc = store_sweep_create(sw->db, &n, &sw->id, err);
  free(software);
  free(jaxlib);
  free(opts);
  return rc;
}

/* The time budget ran out: stop what runs (recorded interrupted, re-run by a resume). */
static void on_deadline(uv_timer_t *t) {
  sweep *sw = t->data;
  sw->deadline_hit = 1;
  diag_note("flagtune: time budget reached; stopping %d running trial%s", sw->n_running,
            sw->n_running == 1 ? "" : "s");
  for (int i = 0; i < sw->parallel; i++) {
    running *r = sw->slots[i];
    if (r && r->facts.stopped == STOPPED_NONE) {
      r->facts.stopped = STOPPED_INTERRUPTED;
      exec_stop_trial(r->exec);
    }
  }
  if (sw->n_running == 0) close_handles(sw);
}

/* Records the pooled winner of the confirmation phase. */
static void choose_winner(sweep *sw) {
  store_trial *t = NULL;
  int n = 0;
  char *err = NULL;
  store_winner w;
  if (store_trials_load(sw->db, sw->id, &t, &n, &err) == 0 &&
      confirm_winner(t, n, sw->exp->budget_steps, sw->exp->metric_skip, &w) == 0 &&
      store_sweep_set_winner(sw->db, sw->id, &w, &err) == 0)
    diag_note("flagtune: confirmed winner: %.2f ms over %d trials vs baseline %.2f ms", w.value,
              w.n_trials, w.baseline);
  if (err) diag_warn("%s", err);
  free(err);
  store_trials_free(t, n);
}

/* Runs the loop until every trial has ended, then records how the sweep ended. */
static int drive(sweep *sw, char **err) {
  uv_signal_init(&sw->loop, &sw->sigint);
  uv_signal_init(&sw->loop, &sw->sigterm);
  sw->sigint.data = sw->sigterm.data = sw;
  uv_signal_start(&sw->sigint, on_signal, SIGINT);
  uv_signal_start(&sw->sigterm, on_signal, SIGTERM);
  if (sw->deadline > 0) {
    uv_timer_init(&sw->loop, &sw->deadline_timer);
    sw->deadline_timer.data = sw;
    double left = sw->deadline - now_s();
    uv_timer_start(&sw->deadline_timer, on_deadline, left > 0 ? (uint64_t)(left * 1000) : 0, 0);
  }
  int rc = make_dirs(sw->log_dir, err);
  if (rc != 0) fail(sw, *err);
  schedule(sw);
  uv_run(&sw->loop, UV_RUN_DEFAULT);
  if (!sw->failed && !sw->stopping && sw->confirm_planned) choose_winner(sw);
  const char *status = sw->failed ? "failed" : sw->stopping ? "interrupted" : "done";
  store_sweep_set_status(sw->db, sw->id, status, sw->fail_reason, 0, NULL);
  if (uv_loop_close(&sw->loop) != 0) diag_warn("event loop closed with handles still open");
  if (sw->failed) return diag_set(err, FT_ESYS, "sweep %lld failed: %s", (long long)sw->id,
                                  sw->fail_reason);
  if (sw->stopping)
    return diag_set(err, FT_EINTR, "sweep %lld interrupted; continue it with `flagtune resume %lld`",
                    (long long)sw->id, (long long)sw->id);
  return 0;
}

static int begin(sweep *sw, int64_t *sweep_id, char **err) {
  *sweep_id = sw->id;
  int rc = store_sweep_set_status(sw->db, sw->id, "running", NULL, (int)getpid(), err);
  if (rc == 0) rc = uv_loop_init(&sw->loop) == 0 ? 0 : diag_set(err, FT_ESYS, "uv_loop_init");
  return rc;
}

static void set_log_dir(sweep *sw, const char *db_path) {
  const char *over = getenv("FLAGTUNE_LOG_DIR");
  free(sw->log_dir);
  if (over && *over)
    sw->log_dir = xasprintf("%s/sweep-%lld", over, (long long)sw->id);
  else
    sw->log_dir = log_dir_for(db_path, sw->id);
}

/* Everything up to the first database write: experiment, strategy, baseline, first ask. */
static int validate(sweep *sw, const char *path, const sweep_opts *o, char **err) {
  int rc = prepare(sw, path, NULL, o, NULL, 0, err);
  if (rc == 0) {
    proposal base;
    rc = strategy_render(sw->strat, "{}", &base, err);
    if (rc == 0) queue_push(sw, &base, "baseline", 0);
  }
  if (rc == 0) refill_queue(sw, sw->parallel); /* a strategy that fails at once writes nothing */
  if (rc == 0 && sw->failed) rc = diag_set(err, FT_EINPUT, "%s", sw->fail_reason);
  if (rc != 0 && rc != FT_ESYS && rc != FT_ESTORE) rc = FT_EINPUT;
  sw->strategy_exhausted = 0;
  return rc;
}

int sweep_check(const char *path, const sweep_opts *o, char **summary, char **err) {
  sweep *sw = xcalloc(1, sizeof *sw);
  int rc = validate(sw, path, o, err);
  if (rc == 0) {
    experiment *e = sw->exp;
    *summary = xasprintf("%s: ok: %d searched parameter%s, %.6g configurations, strategy %s, "
                         "%d trials (baseline + %d), parallel %d",
                         path, e->n_params, e->n_params == 1 ? "" : "s", e->space_size,
                         e->strategy_desc, sw->budget_trials, sw->budget_trials - 1, sw->parallel);
  }
  sweep_free(sw);
  return rc;
}

int sweep_run(const char *path, const sweep_opts *o, int64_t *sweep_id, int *unhealthy,
              char **err) {
  sweep *sw = xcalloc(1, sizeof *sw);
  *sweep_id = 0;
  *unhealthy = 0;
  int rc = validate(sw, path, o, err);
  if (rc != 0) {
    sweep_free(sw);
    return rc;
  }
  rc = store_open(o->db_path, 0, &sw->db, err);
  if (rc == 0) rc = create_sweep(sw, o, err);
  if (rc == 0) rc = begin(sw, sweep_id, err);
  if (rc == 0) {
    set_log_dir(sw, o->db_path);
    diag_note("flagtune: sweep %lld \"%s\": %d trials (baseline + %d), parallel %d, seed %lld",
              (long long)sw->id, o->name ? o->name : sw->exp->name, sw->budget_trials,
              sw->budget_trials - 1, sw->parallel, (long long)sw->seed);
    rc = drive(sw, err);
  }
  *unhealthy = !sw->baseline_ok || sw->n_ok == 0;
  sweep_free(sw);
  return rc;
}

/* ---- resume ---- */

static int is_rerunnable(const char *status) {
  return strcmp(status, "lost") == 0 || strcmp(status, "interrupted") == 0 ||
         strcmp(status, "running") == 0;
}

/* True when some finished trial already holds CONFIG (so a lost copy needs no re-run). */
static int config_done(store_trial *t, int n, const char *config) {
  for (int i = 0; i < n; i++)
    if (!is_rerunnable(t[i].status) && strcmp(t[i].config_json, config) == 0) return 1;
  return 0;
}

static trial_report *history_of(store_trial *t, int n, int *n_hist) {
  trial_report *h = xcalloc((size_t)n + 1, sizeof *h);
  int k = 0;
  for (int i = 0; i < n; i++) {
    /* Lost and interrupted trials are history too (marked seen, so the strategy does not
     * propose them again while their re-run waits in the queue); strategies model only the
     * statuses they know. */
    if (strcmp(t[i].role, "baseline") == 0) continue;
    h[k++] = (trial_report){t[i].config_json, outcome_from_name(t[i].status), t[i].value,
                            t[i].steps, t[i].n_steps, t[i].steps_budget, t[i].number};
  }
  *n_hist = k;
  return h;
}

/* Queues the baseline (if it never finished) and one re-run per lost config. */
static int queue_reruns(sweep *sw, store_trial *t, int n, char **err) {
  for (int i = 0; i < n; i++) {
    if (!is_rerunnable(t[i].status) || config_done(t, n, t[i].config_json)) continue;
    int seen = 0;
    for (int k = 0; k < sw->n_queue; k++)
      if (strcmp(sw->queue[k].prop.config_json, t[i].config_json) == 0) seen = 1;
    if (seen) continue;
    proposal p;
    int rc = strategy_render(sw->strat, t[i].config_json, &p, err);
    if (rc != 0) return rc;
    p.steps = t[i].steps_budget; /* a re-run keeps its rung's step budget */
    int base = strcmp(t[i].role, "baseline") == 0;
    queue_push(sw, &p, base ? "baseline" : "rerun", base ? 0 : t[i].number);
  }
  return 0;
}

static void count_finished(sweep *sw, store_trial *t, int n) {
  for (int i = 0; i < n; i++) {
    if (t[i].number >= sw->next_number) sw->next_number = t[i].number + 1;
    if (is_rerunnable(t[i].status)) continue;
    sw->counted++;
    if (strcmp(t[i].status, "ok") != 0) continue;
    if (strcmp(t[i].role, "baseline") == 0) {
      sw->baseline_ok = 1;
      sw->baseline_ms = t[i].value;
    } else {
      sw->n_ok++;
    }
  }
}

static int orchestrator_alive(const store_sweep *s) {
  return s->pid > 0 && s->pid != (int)getpid() && kill(s->pid, 0) == 0;
}

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

/* True when process PID carries FLAGTUNE_SWEEP=ID and FLAGTUNE_TRIAL=NUMBER in its
 * environment: proof that it is that trial, not an unrelated process that reused the pid. */
static int is_our_trial(int pid, int64_t id, int number) {
  char path[64], want_sweep[64], want_trial[64];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  snprintf(want_sweep, sizeof want_sweep, "FLAGTUNE_SWEEP=%lld", (long long)id);
  snprintf(want_trial, sizeof want_trial, "FLAGTUNE_TRIAL=%d", number);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char buf[8192];
  size_t n;
  int seen_sweep = 0, seen_trial = 0, at = 0;
  char var[128];
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    for (size_t i = 0; i < n; i++) {
      if (buf[i] != '\0') {
        if (at < (int)sizeof var - 1) var[at++] = buf[i];
        continue;
      }
      var[at] = '\0';
      seen_sweep |= strcmp(var, want_sweep) == 0;
      seen_trial |= strcmp(var, want_trial) == 0;
      at = 0;
    }
  }
  fclose(f);
  return seen_sweep && seen_trial;
}

/* Kills what a dead orchestrator left running: each running trial's process group. */
static void reap_orphans(int64_t id, store_trial *t, int n) {
  for (int i = 0; i < n; i++) {
    if (strcmp(t[i].status, "running") != 0 || t[i].pid <= 0) continue;
    if (!is_our_trial(t[i].pid, id, t[i].number)) continue;
    diag_note("flagtune: killing trial %d (process group %d) left running by the previous run",
              t[i].number, t[i].pid);
    kill(-t[i].pid, SIGKILL);
  }
}

static int resume_prepare(sweep *sw, store_sweep *s, const sweep_opts *o, char **err) {
  int rc = 0;
  if (strcmp(s->status, "done") == 0)
    return diag_set(err, FT_EINPUT, "sweep %lld is already done (use `flagtune show %lld`)",
                    (long long)s->id, (long long)s->id);
  if (strcmp(s->status, "running") == 0 && orchestrator_alive(s))
    return diag_set(err, FT_EINPUT, "sweep %lld is still running (orchestrator pid %d)",
                    (long long)s->id, s->pid);
  store_trial *t = NULL;
  int n = 0, n_hist = 0;
  rc = store_trials_load(sw->db, s->id, &t, &n, err);
  if (rc != 0) return rc;
  reap_orphans(s->id, t, n);
  rc = store_trials_mark(sw->db, s->id, "running", "lost", NULL, err);
  if (rc != 0) {
    store_trials_free(t, n);
    return rc;
  }
  trial_report *hist = history_of(t, n, &n_hist);
  sweep_opts merged;
  merge_options(s, o, &merged);
  rc = prepare(sw, s->experiment_path, s->experiment_text, &merged, hist, n_hist, err);
  if (rc == 0) rc = queue_reruns(sw, t, n, err);
  if (rc == 0) count_finished(sw, t, n);
  free(hist);
  store_trials_free(t, n);
  return rc;
}

int sweep_resume(const char *ref, const sweep_opts *o, int64_t *sweep_id, int *unhealthy,
                 char **err) {
  sweep *sw = xcalloc(1, sizeof *sw);
  store_sweep s = {0};
  *unhealthy = 0;
  int rc = store_open(o->db_path, 0, &sw->db, err);
  if (rc == 0) rc = store_sweep_get(sw->db, ref, &s, err);
  if (rc == 0) {
    sw->id = s.id;
    rc = resume_prepare(sw, &s, o, err);
  }
  if (rc == 0) rc = begin(sw, sweep_id, err);
  if (rc == 0) {
    set_log_dir(sw, o->db_path);
    diag_note("flagtune: resuming sweep %lld \"%s\": %d of %d trials done, %d to re-run",
              (long long)sw->id, s.name, sw->counted, sw->budget_trials, sw->n_queue);
    rc = drive(sw, err);
  }
  *unhealthy = !sw->baseline_ok || sw->n_ok == 0;
  store_sweep_clear(&s);
  sweep_free(sw);
  return rc;
}
