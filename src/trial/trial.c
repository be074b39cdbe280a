/* One running trial. Owns its phases, its output (step times, line signals, the stderr
 * excerpt), pruning against the best value it was handed, its store row (begin with the
 * pid the executor expects, the pid when the start gave another, profile, finish) and its
 * outcome. Decides nothing about syntax (experiment), flags (proposals arrive rendered),
 * process handling (the executor), outcome rules (classify) or SQL (store): it wires them
 * for one trial and reports up through its callback. */
#include "trial.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uv.h>

#include "cost.h"
#include "diag.h"
#include "launch.h"
#include "metric.h"
#include "sample.h"
#include "stats.h"

#define EXCERPT_LINES 20  /* last stderr lines kept for the error excerpt */
#define EXCERPT_WIDTH 400 /* bytes kept of each */
#define MAX_STEPS 1000000 /* step times kept per trial */

struct trial {
  trial_ctx c;
  trial_where w;
  trial_done_fn done;
  void *ud;
  int64_t id;     /* the store row */
  int pid_stored; /* the pid the row holds (0: none yet) */
  proposal prop;
  launch run; /* the measured run's argv, environment and log: built once, by trial_store_begin */
  int steps_budget;
  int profiling;      /* manual PGLE: the profile run is running */
  char *profile_path; /* where the profile run must leave its profile */
  double best_ms;
  exec_trial *exec;
  double *steps;
  int n_steps, cap_steps;
  stats_running kept; /* the reduction of the steps past the skip, for pruning */
  double *losses;     /* metric.check: the losses printed, in order */
  int n_losses, cap_losses;
  int n_bad_losses; /* NaN or infinite losses */
  int n_bad_values;
  trial_facts facts;
  char *signal_line; /* the first line that stopped it (an OOM, a refusal), kept whole */
  char *soft_line;   /* the first allocation failure it survived (LINE_OOM_SOFT) */
  int n_soft;        /* how many such lines */
  char *excerpt[EXCERPT_LINES];
  int excerpt_next;
  char *last_stdout;
  int n_stored;         /* steps of the measured run already stored (trial_flush_steps) */
  double started_s;     /* monotonic seconds when it started */
  double run_started_s; /* monotonic seconds when the measured run started */
  double first_step_ms; /* from then to its first step line (NaN: none yet) */
  double steady_s;      /* when its step line number prop.skip (or the first) arrived */
  int steady_n;         /* that line's number (0 the first) */
  double last_step_s;   /* when its last step line arrived */
  int leftovers;        /* processes its phases left behind, killed by the executor */
  char *log_error;      /* the first phase's log that failed (exec_result.log_error) */
};

/* ---- output ---- */

/* A printable copy of at most EXCERPT_WIDTH bytes of LINE. */
static char *printable(const char *line, size_t len) {
  char *copy = xstrndup(line, len > EXCERPT_WIDTH ? EXCERPT_WIDTH : len);
  for (char *p = copy; *p; p++)
    if ((unsigned char)*p < 0x20 && *p != '\t') *p = '?';
  return copy;
}

static void excerpt_add(trial *t, const char *line, size_t len) {
  free(t->excerpt[t->excerpt_next]);
  t->excerpt[t->excerpt_next] = printable(line, len);
  t->excerpt_next = (t->excerpt_next + 1) % EXCERPT_LINES;
}

static char *excerpt_text(trial *t) {
  size_t cap = 1, n = 0;
  for (int i = 0; i < EXCERPT_LINES; i++)
    if (t->excerpt[i]) cap += strlen(t->excerpt[i]) + 1;
  if (cap == 1) return t->last_stdout ? xstrdup(t->last_stdout) : NULL;
  char *out = xmalloc(cap);
  for (int k = 0; k < EXCERPT_LINES; k++) {
    const char *l = t->excerpt[(t->excerpt_next + k) % EXCERPT_LINES];
    if (!l) continue;
    size_t len = strlen(l);
    memcpy(out + n, l, len);
    n += len;
    out[n++] = '\n';
  }
  out[n ? n - 1 : 0] = '\0';
  return out;
}

static void add_step(trial *t, double ms) {
  if (t->n_steps >= MAX_STEPS) return;
  if (t->n_steps == t->cap_steps) {
    t->cap_steps = t->cap_steps ? t->cap_steps * 2 : 64;
    t->steps = xrealloc(t->steps, sizeof(double) * (size_t)t->cap_steps);
  }
  /* The wall time of its steps, for what a trial costs (src/sweep/cost.h): the printed step time
   * need not be wall time (a simulator, a metric of its own). */
  double now = (double)uv_hrtime() / 1e9;
  if (t->n_steps == 0 && !t->profiling) t->first_step_ms = (now - t->run_started_s) * 1e3;
  if (t->n_steps == 0 || t->n_steps == t->prop.skip) t->steady_s = now, t->steady_n = t->n_steps;
  t->last_step_s = now;
  if (t->n_steps >= t->prop.skip) stats_running_add(&t->kept, ms);
  t->steps[t->n_steps++] = ms;
}

void trial_stop(trial *t, stop_reason why) {
  if (t->facts.stopped == STOPPED_NONE) t->facts.stopped = why;
  executor_stop(t->c.x, t->exec);
}

void trial_kill(trial *t) {
  if (t->facts.stopped == STOPPED_NONE) t->facts.stopped = STOPPED_INTERRUPTED;
  executor_kill(t->c.x, t->exec);
}

void trial_set_best(trial *t, double best_ms) {
  t->best_ms = best_ms;
}

void trial_flush_steps(trial *t) {
  /* A profile run's steps are not the trial's; a failed write is left to the finish, which
   * stores every step again (and reports a database that cannot be written). */
  if (t->profiling || t->n_steps <= t->n_stored) return;
  if (store_trial_add_steps(t->c.db, t->id, t->n_stored, t->steps + t->n_stored,
                            t->n_steps - t->n_stored, NULL) == 0)
    t->n_stored = t->n_steps;
}

trial_view trial_get_view(const trial *t) {
  return (trial_view){.number = t->w.number,
                      .role = t->w.role,
                      .label = t->prop.label,
                      .config_json = t->prop.config_json,
                      .steps_budget = t->steps_budget,
                      .n_steps = t->profiling ? 0 : t->n_steps,
                      .profiling = t->profiling,
                      .elapsed_s = (double)uv_hrtime() / 1e9 - t->started_s};
}

/* Why a trial was pruned, in the user's unit: "pruned at step 6: median 91.00 ms > 1.2 x best
 * 57.00 ms" (a rate: "median 1.80/s < best 2.24/s / 1.2"). */
static char *prune_reason(const experiment *e, int step, double v, double best) {
  char a[48], b[48];
  metric_format(a, sizeof a, v, e->metric_higher);
  metric_format(b, sizeof b, best, e->metric_higher);
  const char *how = stats_reduce_name(e->metric_reduce);
  double m = 1.0 + e->prune_margin;
  if (e->metric_higher)
    return xasprintf("pruned at step %d: %s %s < best %s / %.3g (prune.margin)", step, how, a, b,
                     m);
  return xasprintf("pruned at step %d: %s %s > %.3g x best %s (prune.margin)", step, how, a, m, b);
}

/* Why a trial stopped at its strategy's in-trial rung: "pruned at step 5: median 91.00 ms >
 * 88.00 ms, the strategy's rung". */
static char *rung_reason(const experiment *e, int step, double v, double bar) {
  char a[48], b[48];
  metric_format(a, sizeof a, v, e->metric_higher);
  metric_format(b, sizeof b, bar, e->metric_higher);
  return xasprintf("pruned at step %d: %s %s %s %s, the strategy's rung", step,
                   stats_reduce_name(e->metric_reduce), a, e->metric_higher ? "<" : ">", b);
}

/* Stops a search trial at its proposal's rung (rung_steps step times, a value above
 * rung_value) or, after prune_min_steps steps past the warm-up, more than prune_margin above
 * the best so far. */
static void maybe_prune(trial *t) {
  const experiment *e = t->c.exp;
  if (t->w.role != ROLE_SEARCH || t->facts.stopped != STOPPED_NONE) return;
  int at_rung = t->prop.rung_steps > 0 && t->n_steps == t->prop.rung_steps && !t->profiling &&
                t->n_steps > t->prop.skip;
  int past_min =
      e->prune_margin > 0 && !isnan(t->best_ms) && t->n_steps - t->prop.skip >= e->prune_min_steps;
  if (!at_rung && !past_min) return;
  /* Kept up to date step by step: re-reducing every step per line was quadratic. */
  double v = stats_running_value(&t->kept);
  char *why = NULL; /* the reason show, the progress line and the report give */
  if (at_rung && v > t->prop.rung_value)
    why = rung_reason(e, t->n_steps, v, t->prop.rung_value);
  else if (past_min && v > t->best_ms * (1.0 + e->prune_margin))
    why = prune_reason(e, t->n_steps, v, t->best_ms);
  if (!why) return;
  free(t->signal_line);
  t->signal_line = why;
  trial_stop(t, STOPPED_PRUNED);
}

/* Reads metric.check's loss from LINE, if it holds one. */
static void read_loss(trial *t, const char *line, size_t len) {
  double loss;
  int p = parse_step(t->c.check, line, len, &loss);
  if (p == PARSE_BAD) t->n_bad_losses++;
  if (p != PARSE_STEP || t->n_losses >= MAX_STEPS) return;
  if (t->n_losses == t->cap_losses) {
    t->cap_losses = t->cap_losses ? t->cap_losses * 2 : 64;
    t->losses = xrealloc(t->losses, sizeof(double) * (size_t)t->cap_losses);
  }
  t->losses[t->n_losses++] = loss;
}

/* A line the trial printed without ending it, after a quiet moment (an OOM text followed by a
 * hang): only a fatal signal counts here; the line itself comes to on_line when it ends. */
static void on_partial(void *ud, int stream, const char *line, size_t len) {
  trial *t = ud;
  (void)stream;
  line_signal sig = classify_line(t->c.patterns, line, len);
  if (sig != LINE_OOM_FATAL && sig != LINE_INVALID) return;
  if (sig == LINE_OOM_FATAL) t->facts.saw_oom_fatal = 1;
  if (sig == LINE_INVALID) t->facts.saw_invalid = 1;
  if (!t->signal_line) t->signal_line = printable(line, len);
  if (t->facts.stopped == STOPPED_NONE)
    trial_stop(t, sig == LINE_OOM_FATAL ? STOPPED_OOM : STOPPED_INVALID);
}

static void on_line(void *ud, int stream, const char *line, size_t len, int truncated) {
  trial *t = ud;
  (void)truncated;
  double ms;
  if (t->c.check) read_loss(t, line, len);
  int p = parse_step(t->c.metric, line, len, &ms);
  /* A pruned trial's steps are those its verdict read: what it printed before the stop
   * landed is not kept. */
  if (p == PARSE_STEP && t->facts.stopped == STOPPED_PRUNED) p = PARSE_NONE;
  if (p == PARSE_STEP) {
    add_step(t, ms);
    maybe_prune(t);
  } else if (p == PARSE_BAD) {
    t->n_bad_values++;
  }
  line_signal sig = classify_line(t->c.patterns, line, len);
  switch (sig) {
    case LINE_OOM_FATAL:
      t->facts.saw_oom_fatal = 1;
      if (t->facts.stopped == STOPPED_NONE) trial_stop(t, STOPPED_OOM);
      break;
    case LINE_INVALID:
      t->facts.saw_invalid = 1;
      if (t->facts.stopped == STOPPED_NONE) trial_stop(t, STOPPED_INVALID);
      break;
    case LINE_OOM_SOFT:
      t->facts.saw_oom_soft = 1;
      if (!t->soft_line) t->soft_line = printable(line, len);
      t->n_soft++;
      break;
    default:
      break;
  }
  if ((sig == LINE_OOM_FATAL || sig == LINE_INVALID) && !t->signal_line)
    t->signal_line = printable(line, len);
  if (stream == EXEC_STDERR) {
    excerpt_add(t, line, len);
  } else if (p != PARSE_STEP && len > 0) {
    /* One buffer for the whole run: a flood of stdout lines costs a copy each, no malloc. */
    size_t n = strnlen(line, len > EXCERPT_WIDTH ? EXCERPT_WIDTH : len);
    if (!t->last_stdout) t->last_stdout = xmalloc(EXCERPT_WIDTH + 1);
    memcpy(t->last_stdout, line, n);
    t->last_stdout[n] = '\0';
  }
}

/* ---- phases ---- */

static void on_exit_trial(void *ud, const exec_result *res);

/* Starts one phase of T on the executor: the measured run, or (PROFILE) manual PGLE's
 * profile run. */
/* Where and as what phase PROFILE of T runs. */
static launch_where where_of(const trial *t, int profile) {
  return (launch_where){.sweep_id = t->c.sweep_id,
                        .number = t->w.number,
                        .steps = t->steps_budget,
                        .devices = t->w.devices,
                        .log_dir = t->c.log_dir,
                        .profile_path = t->profile_path,
                        .profile = profile};
}

/* The measured run starts with the launch trial_store_begin built (and stored); manual PGLE's
 * profile run, the one other phase, builds its own here. */
static int launch_phase(trial *t, int profile, char **err) {
  launch prof = {0};
  if (!profile) t->run_started_s = (double)uv_hrtime() / 1e9; /* before its process starts */
  launch_where lw = where_of(t, profile);
  int rc = profile ? launch_build(t->c.exp, &t->prop, &lw, t->c.base_env, &prof, err) : 0;
  const launch *l = profile ? &prof : &t->run;
  if (rc == 0) {
    exec_spec spec = {.argv = l->argv,
                      .envp = l->env.envp,
                      .cwd = t->c.exp->workdir,
                      .timeout_s = t->c.exp->timeout_s,
                      .grace_s = t->c.exp->grace_s,
                      .log_path = l->log_path};
    exec_callbacks cb = {.on_line = on_line, .on_partial = on_partial, .on_exit = on_exit_trial};
    rc = executor_start(t->c.x, &spec, &cb, t, &t->exec, err);
  }
  launch_free(&prof);
  t->profiling = profile;
  /* The pid on disk for resume's exec_reap: usually the begin row's already (trial_store_begin);
   * a transaction of its own when the start gave another (or the row had none). */
  int pid = rc == 0 ? executor_pid(t->c.x, t->exec) : 0;
  if (pid > 0 && pid != t->pid_stored && store_trial_set_pid(t->c.db, t->id, pid, NULL) == 0)
    t->pid_stored = pid;
  return rc;
}

/* Clears what one phase left (steps, facts, excerpt) before the next phase. */
static void reset_phase(trial *t) {
  t->n_steps = 0;
  t->n_stored = 0;
  t->n_losses = 0;
  t->n_bad_losses = 0;
  stats_running_free(&t->kept);
  t->n_bad_values = 0;
  int min_steps = t->facts.min_steps;
  memset(&t->facts, 0, sizeof t->facts);
  t->facts.min_steps = min_steps;
  for (int i = 0; i < EXCERPT_LINES; i++) {
    free(t->excerpt[i]);
    t->excerpt[i] = NULL;
  }
  free(t->last_stdout);
  t->last_stdout = NULL;
  free(t->signal_line);
  t->signal_line = NULL;
  free(t->soft_line);
  t->soft_line = NULL;
  t->n_soft = 0;
}

/* The profile run ended. On success (exit 0, a profile left behind) the measured run starts
 * and 1 is returned; otherwise T's facts and *why say how the trial failed and 0 is
 * returned, for on_exit_trial to finish it. A stopped profile run (interrupted, out of time)
 * never starts the measured run. */
static int profile_done(trial *t, const exec_result *res, char **why) {
  struct stat st;
  int exited_ok = !res->spawn_error && res->term_signal == 0 && res->exit_status == 0 &&
                  t->facts.stopped == STOPPED_NONE;
  int have_profile = stat(t->profile_path, &st) == 0 && st.st_size > 0;
  outcome status = OUTCOME_OK;
  if (exited_ok && !have_profile) {
    *why = xasprintf(
        "exited 0 but left no profile at %s (the command must write it to "
        "$FLAGTUNE_PGLE_PROFILE)",
        t->profile_path);
    t->facts.exit_code = 1; /* a failed trial: crash, with the reason as its excerpt */
    status = OUTCOME_CRASH;
  } else if (!exited_ok) {
    t->facts.n_steps = t->facts.min_steps; /* its steps do not count: judge how it ended */
    status = classify_trial(&t->facts);
  }
  store_trial_set_profile(t->c.db, t->id, t->profile_path, status, res->wall_s, NULL);
  if (status != OUTCOME_OK) return 0;
  reset_phase(t);
  char *err = NULL;
  if (launch_phase(t, 0, &err) == 0) return 1;
  *why = err;
  t->facts.exit_code = 1;
  return 0;
}

/* The line of S that most likely says why a process failed (a new string), or NULL: the last
 * that names an error ("Error", "error", "Fatal", "failed", "Exception": a Python exception's
 * last line, "Fatal Python error: ...", a CHECK failure), else the last non-empty line. */
static char *failure_line(const char *s, int errors_only) {
  static const char *const words[] = {"rror", "Fatal", "failed", "Exception", "Killed"};
  const char *best = NULL, *last = NULL;
  size_t best_len = 0, last_len = 0;
  for (const char *line = s; *line;) {
    size_t len = strcspn(line, "\n");
    if (len > 0) {
      last = line, last_len = len;
      for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *hit = strstr(line, words[i]);
        if (hit && hit < line + len) best = line, best_len = len;
      }
    }
    line += len + (line[len] == '\n');
  }
  if (best) return xstrndup(best, best_len);
  return last && !errors_only ? xstrndup(last, last_len) : NULL;
}

/* HEAD, a newline and TAIL (either may be NULL) as one new string; frees TAIL. */
static char *prepend(const char *head, char *tail) {
  char *out = xasprintf("%s%s%s", head, tail ? "\n" : "", tail ? tail : "");
  free(tail);
  return out;
}

/* What the executor said besides the outcome: leftovers it killed, a log it could not write.
 * Kept across phases for the record; the log warning is also said at once. */
static void note_exec_extras(trial *t, const exec_result *res) {
  t->leftovers += res->leftovers;
  if (!res->log_error[0] || t->log_error) return;
  t->log_error = xstrdup(res->log_error);
  diag_warn("trial %d: %s", t->w.number, res->log_error);
}

/* The error excerpt stored with a finished trial: its last stderr lines, with the reason
 * first when flagtune knows one (a spawn failure, bad step values, its PGLE profile run),
 * and before all of it what the trial's record must say even when it ended ok: the
 * processes it left behind and a log it could not write. */
static char *trial_excerpt(trial *t, const exec_result *res, outcome o, const char *why) {
  char *excerpt = res->spawn_error ? xstrdup(res->spawn_message) : excerpt_text(t);
  /* Why it failed, the excerpt's first line: the line that decided the outcome (XLA prints
   * its whole flag table after "Flag parsing failed."), what flagtune saw, else the last line
   * the trial printed. */
  char *reason = NULL;
  if (t->profiling)
    reason = xasprintf("PGLE profile run: %s", why ? why : outcome_name(o));
  else if (o == OUTCOME_NO_METRIC && t->n_bad_values > 0)
    reason = xasprintf(
        "%d step time(s) were NaN, negative or absurd (a step time is from 1 ns to a day)",
        t->n_bad_values);
  else if (t->signal_line)
    reason = xstrdup(t->signal_line);
  else if (o == OUTCOME_OOM && t->facts.stopped == STOPPED_TIMEOUT && t->soft_line)
    reason = xasprintf(
        "timed out before its first step while allocations kept failing (%d time%s; the "
        "first: %s)",
        t->n_soft, t->n_soft == 1 ? "" : "s", t->soft_line);
  else if (o != OUTCOME_OK && excerpt && !res->spawn_error)
    reason = failure_line(excerpt, o == OUTCOME_NO_METRIC); /* "warming up" is no reason */
  if (!reason && o == OUTCOME_NO_METRIC) { /* a silent command, or a metric matching nothing */
    /* The last stdout line the metric did not read is usually a step line it should have:
     * quoted, it shows the key or the format at once (a step_time_ms under json = "step").
     * Without stderr lines the excerpt is that line already (excerpt_text). */
    int stderr_lines = 0;
    for (int i = 0; i < EXCERPT_LINES; i++) stderr_lines += t->excerpt[i] != NULL;
    const char *last = stderr_lines ? t->last_stdout : NULL;
    char *keys = t->c.exp->metric == METRIC_JSON && t->n_steps == 0
                     ? sample_json_keys(t->last_stdout)
                     : NULL;
    if (keys) /* a wrong json key: the keys there are, not the whole line */
      reason = xasprintf(
          "the metric read %d step time%s: no JSON line on stdout has the key '%s'; the last holds "
          "the keys %s (`flagtune check EXPERIMENT --sample LOG` shows what the metric reads)",
          t->n_steps, t->n_steps == 1 ? "" : "s", t->c.exp->metric_field, keys);
    else
      reason = xasprintf(
          "the metric read %d step time%s (the first %d skipped) and the command printed no error: "
          "check `metric` against the lines in the log%s%s%s",
          t->n_steps, t->n_steps == 1 ? "" : "s", t->prop.skip,
          last ? " (the last line on stdout it did not read: " : "", last ? last : "",
          last ? ")" : "");
    free(keys);
  }
  if (t->log_error) excerpt = prepend(t->log_error, excerpt);
  if (t->leftovers > 0) {
    char head[96];
    snprintf(head, sizeof head, "flagtune: killed %d leftover process%s after the command ended",
             t->leftovers, t->leftovers == 1 ? "" : "es");
    excerpt = prepend(head, excerpt);
  }
  if (reason && (!excerpt || strncmp(excerpt, reason, strlen(reason)) != 0 ||
                 (excerpt[strlen(reason)] != '\n' && excerpt[strlen(reason)] != '\0')))
    excerpt = prepend(reason, excerpt);
  free(reason);
  return excerpt;
}

/* metric.check: why T's losses say it computed something else than the baseline, or NULL
 * when they agree (or there is nothing to compare with). Caller frees. */
static char *wrong_reason(const trial *t) {
  const experiment *e = t->c.exp;
  if (!t->c.check || !t->c.check_ref || t->c.n_check_ref == 0) return NULL;
  if (t->n_bad_losses > 0)
    return xasprintf("wrong: %d loss value(s) were NaN or infinite (metric.check)",
                     t->n_bad_losses);
  if (t->n_losses == 0)
    return xasprintf("wrong: printed no loss to compare with the baseline's (metric.check)");
  int n = t->n_losses < t->c.n_check_ref ? t->n_losses : t->c.n_check_ref;
  for (int i = 0; i < n; i++) {
    double ref = t->c.check_ref[i], got = t->losses[i];
    double allowed = fmax(e->check_tolerance * fabs(ref), e->check_abs);
    if (fabs(got - ref) > allowed)
      return xasprintf(
          "wrong: loss %.6g at its %d%s loss line, baseline %.6g: off by %.3g "
          "(allowed %.3g: metric.check tolerance %g, abs %g)",
          got, i + 1,
          i == 0   ? "st"
          : i == 1 ? "nd"
          : i == 2 ? "rd"
                   : "th",
          ref, fabs(got - ref), allowed, e->check_tolerance, e->check_abs);
  }
  return NULL;
}

static void trial_free(trial *t) {
  launch_free(&t->run);
  free(t->losses);
  stats_running_free(&t->kept);
  proposal_clear(&t->prop);
  free(t->signal_line);
  free(t->soft_line);
  free(t->profile_path);
  free(t->steps);
  free(t->last_stdout);
  free(t->log_error);
  for (int i = 0; i < EXCERPT_LINES; i++) free(t->excerpt[i]);
  free(t);
}

static void on_exit_trial(void *ud, const exec_result *res) {
  trial *t = ud;
  char *why = NULL;
  t->exec = NULL;
  note_exec_extras(t, res);
  t->facts.spawn_failed = res->spawn_error != 0;
  t->facts.exit_code = (long)res->exit_status;
  t->facts.term_signal = res->term_signal;
  t->facts.n_steps = t->n_steps;
  if (res->stopped == EXEC_STOP_TIMEOUT && t->facts.stopped == STOPPED_NONE)
    t->facts.stopped = STOPPED_TIMEOUT;
  if (t->profiling && profile_done(t, res, &why)) return;
  if (t->profiling) t->facts.n_steps = 0; /* the profile run's steps are not the trial's */
  outcome o = classify_trial(&t->facts);
  /* The executor lost it (a Slurm node failed, a preemption): not the configuration's fault. */
  if (res->lost && t->facts.stopped == STOPPED_NONE) o = OUTCOME_LOST;
  double value = NAN;
  char *wrong = o == OUTCOME_OK ? wrong_reason(t) : NULL;
  if (wrong) o = OUTCOME_WRONG;
  if (o == OUTCOME_OK)
    value = stats_reduce(t->c.exp->metric_reduce, t->steps, t->n_steps, t->prop.skip);
  double step_ms =
      t->profiling ? NAN : cost_step_ms(t->steady_n, t->steady_s, t->n_steps - 1, t->last_step_s);
  char *excerpt = trial_excerpt(t, res, o, why);
  if (wrong) excerpt = prepend(wrong, excerpt);
  free(wrong);
  free(why);
  store_trial_end end = {.status = o,
                         .value = value,
                         .has_exit = !res->spawn_error && !res->term_signal,
                         .exit_code = res->exit_status,
                         .term_signal = res->term_signal,
                         .duration_s = res->wall_s,
                         .error = excerpt,
                         .losses = t->losses,
                         .n_losses = t->n_losses,
                         .first_step_ms = t->n_steps > 0 ? t->first_step_ms : NAN,
                         .step_ms = step_ms};
  char *err = NULL;
  store_trial_finish(t->c.db, t->id, &end, t->steps, t->n_steps, &err);
  char *reason = NULL;
  if (o != OUTCOME_OK && excerpt) reason = xstrndup(excerpt, strcspn(excerpt, "\n"));
  free(excerpt);
  trial_result r = {.slot = t->w.slot,
                    .label = t->prop.label,
                    .record = {.id = t->id,
                               .number = t->w.number,
                               .role = t->w.role,
                               .status = o,
                               .config_json = t->prop.config_json,
                               .value = value,
                               .steps_budget = t->steps_budget,
                               .steps = t->steps,
                               .n_steps = t->n_steps},
                    .losses = t->losses,
                    .n_losses = t->n_losses,
                    .wall_s = res->wall_s,
                    .step_ms = step_ms,
                    .spawn_error = res->spawn_error != 0,
                    .store_err = err,
                    .ticket = err ? 0 : store_durable_ticket(t->c.db),
                    .reason = reason};
  t->done(t->ud, &r);
  free(reason);
  free(err);
  trial_free(t);
}

/* ---- start ---- */

/* Builds the measured run's launch (t->run, which launch_phase starts) and stores the row:
 * the measured run is what the row records, whichever phase runs first. */
static int trial_store_begin(trial *t, char **err) {
  launch_where lw = where_of(t, 0);
  int rc = launch_build(t->c.exp, &t->prop, &lw, t->c.base_env, &t->run, err);
  if (rc != 0) return rc;
  const launch *l = &t->run;
  char *env_json = launch_env_json(&t->prop);
  char *cmd_json = launch_argv_json(l->argv);
  store_trial_new row = {.sweep_id = t->c.sweep_id,
                         .number = t->w.number,
                         .role = t->w.role,
                         .config_json = t->prop.config_json,
                         .label = t->prop.label,
                         .xla_flags = l->env.xla_flags,
                         .tpu_args = l->env.tpu_args,
                         .env_json = env_json,
                         .command_json = cmd_json,
                         .steps_budget = t->steps_budget,
                         .slot = t->w.slot,
                         .log_path = l->log_path,
                         .rerun_of = t->w.rerun_of,
                         /* Asked last: nothing may start between this and launch_phase. */
                         .pid = executor_next_pid(t->c.x)};
  rc = store_trial_begin(t->c.db, &row, &t->id, err);
  if (rc == 0) t->pid_stored = row.pid;
  free(env_json);
  free(cmd_json);
  return rc;
}

int trial_start(const trial_ctx *c, const trial_where *w, proposal *p, trial_done_fn done, void *ud,
                trial **out, char **err) {
  trial *t = xcalloc(1, sizeof *t);
  t->c = *c;
  t->w = *w;
  t->done = done;
  t->ud = ud;
  t->prop = *p;
  memset(p, 0, sizeof *p);
  t->best_ms = NAN;
  t->first_step_ms = NAN;
  t->started_s = (double)uv_hrtime() / 1e9;
  const experiment *e = c->exp;
  stats_running_init(&t->kept, e->metric_reduce);
  t->steps_budget = t->prop.steps > 0 ? t->prop.steps : e->budget_steps;
  t->facts.min_steps = e->min_steps + (t->prop.skip - e->metric_skip);
  if (t->prop.profile_suffix)
    t->profile_path = xasprintf("%s/trial-%04d%s", c->log_dir, w->number, t->prop.profile_suffix);
  int rc = trial_store_begin(t, err);
  if (rc == 0) rc = launch_phase(t, t->prop.profile_suffix != NULL, err);
  if (rc != 0) {
    trial_free(t);
    return rc;
  }
  *out = t;
  return 0;
}
