/* trial.c's decisions against a recording executor: what a trial builds (one argv and
 * environment for the measured run, the row storing the same), which phases it starts
 * (manual PGLE's profile run, then the measured run; none after a failed profile run), and
 * which outcome it records (ok with its value, oom on an OOM line, crash on a start that
 * failed). The store is a real database; the experiment is loaded through Lua. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "experiment.h"
#include "strategy.h"
#include "test.h"
#include "trial.h"

#define MAX_STARTS 4

/* A database in a fresh directory under /tmp, which also holds the trials' logs. */
typedef struct {
  char dir[64];
  char path[96];
} tmpdb;

static store *db_open(tmpdb *t) {
  snprintf(t->dir, sizeof t->dir, "/tmp/ft_trial_XXXXXX");
  if (!mkdtemp(t->dir)) perror("mkdtemp");
  snprintf(t->path, sizeof t->path, "%s/t.db", t->dir);
  store *s = NULL;
  CHECK_INT(store_open(t->path, 0, &s, NULL), 0);
  return s;
}

static void db_remove(tmpdb *t) {
  char *cmd = xasprintf("rm -rf '%s'", t->dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", t->dir);
  free(cmd);
}

/* The executor: each start is recorded (its argv joined by spaces, a few variables of its
 * environment) and nothing runs; the test delivers lines and the exit through the
 * callbacks it was handed. */
typedef struct {
  executor x;
  int starts, stops;
  char *cmd[MAX_STARTS];
  char *xla_flags[MAX_STARTS];
  char *profile_env[MAX_STARTS]; /* $FLAGTUNE_PGLE_PROFILE, NULL when unset */
  char *log_path[MAX_STARTS];
  exec_callbacks cb;
  void *ud;
} rec_exec;

static char *env_of(char *const *envp, const char *name) {
  size_t n = strlen(name);
  for (char *const *p = envp; p && *p; p++)
    if (strncmp(*p, name, n) == 0 && (*p)[n] == '=') return xstrdup(*p + n + 1);
  return NULL;
}

static int rec_start(executor *x, const exec_spec *spec, const exec_callbacks *cb, void *ud,
                     exec_trial **out, char **err) {
  (void)err;
  rec_exec *r = (rec_exec *)x;
  int i = r->starts++;
  if (i >= MAX_STARTS) return FT_EINPUT;
  char *cmd = xstrdup("");
  for (char *const *a = spec->argv; *a; a++) {
    char *next = xasprintf("%s%s%s", cmd, *cmd ? " " : "", *a);
    free(cmd);
    cmd = next;
  }
  r->cmd[i] = cmd;
  r->xla_flags[i] = env_of(spec->envp, "XLA_FLAGS");
  r->profile_env[i] = env_of(spec->envp, "FLAGTUNE_PGLE_PROFILE");
  r->log_path[i] = spec->log_path ? xstrdup(spec->log_path) : NULL;
  r->cb = *cb;
  r->ud = ud;
  *out = (exec_trial *)r;
  return 0;
}

static void rec_stop(exec_trial *t) {
  ((rec_exec *)t)->stops++;
}

static int rec_pid(const exec_trial *t) {
  (void)t;
  return 4242;
}

static const executor_ops REC_OPS = {
    .name = "recording", .start = rec_start, .stop = rec_stop, .kill = rec_stop, .pid = rec_pid};

static void rec_free(rec_exec *r) {
  for (int i = 0; i < MAX_STARTS; i++) {
    free(r->cmd[i]);
    free(r->xla_flags[i]);
    free(r->profile_env[i]);
    free(r->log_path[i]);
  }
}

/* What the done callback saw. */
typedef struct {
  int calls;
  outcome status;
  double value;
  int steps_budget;
  char *reason;
} got_t;

static void on_done(void *ud, const trial_result *r) {
  got_t *g = ud;
  g->calls++;
  g->status = r->record.status;
  g->value = r->record.value;
  g->steps_budget = r->record.steps_budget;
  free(g->reason);
  g->reason = r->reason ? xstrdup(r->reason) : NULL;
}

typedef struct {
  tmpdb db;
  store *s;
  lhost *h;
  experiment *e;
  strategy *st;
  int64_t sweep;
  metric_spec metric;
  classify_patterns patterns;
  rec_exec rx;
  trial_ctx ctx;
  got_t got;
} fixture;

#define EXP_PATH "/tmp/flagtune_test_trial_exp.lua"

/* Loads an experiment with EXTRA (Lua text inside the table) and a sweep row for it. */
static int setup(fixture *f, const char *extra) {
  memset(f, 0, sizeof *f);
  f->s = db_open(&f->db);
  char *err = NULL;
  CHECK_INT(lhost_new(&f->h, &err), 0);
  char *text = xasprintf(
      "return experiment {\n"
      "  command = { \"train\", \"--steps\", \"{steps}\" },\n"
      "  metric = { json = \"step_ms\", skip = 1 },\n"
      "  fixed_flags = { xla_gpu_enable_latency_hiding_scheduler = true },\n"
      "  flags = { xla_gpu_all_gather_combine_threshold_bytes = pow2(\"4GiB\", \"8GiB\") },\n"
      "  budget = { trials = 5, steps = 4 },\n"
      "%s"
      "}\n",
      extra);
  int rc = experiment_load(f->h, EXP_PATH, text, &f->e, &err);
  free(text);
  if (rc != 0) fprintf(stderr, "experiment_load: %s\n", err ? err : "?");
  CHECK_INT(rc, 0);
  if (rc == 0) rc = strategy_new(f->e, 1, NULL, 0, &f->st, &err);
  CHECK_INT(rc, 0);
  free(err);
  if (rc != 0) return rc;
  store_sweep_new sn = {.name = "t",
                        .model = "m",
                        .hardware = "h",
                        .strategy = "random",
                        .experiment_path = EXP_PATH,
                        .experiment_text = "x",
                        .experiment_hash = "x",
                        .budget_trials = 5,
                        .budget_steps = 4,
                        .parallel = 1,
                        .host = "b",
                        .options_json = "{}"};
  CHECK_INT(store_sweep_create(f->s, &sn, &f->sweep, NULL), 0);
  f->metric = experiment_metric(f->e);
  f->rx.x.ops = &REC_OPS;
  static char *const base_env[] = {"PATH=/usr/bin:/bin", "HOME=/tmp", NULL};
  f->ctx = (trial_ctx){.x = &f->rx.x,
                       .db = f->s,
                       .exp = f->e,
                       .metric = &f->metric,
                       .patterns = &f->patterns,
                       .sweep_id = f->sweep,
                       .log_dir = f->db.dir,
                       .base_env = base_env};
  f->got.value = NAN;
  return 0;
}

static void teardown(fixture *f) {
  rec_free(&f->rx);
  free(f->got.reason);
  strategy_free(f->st);
  experiment_free(f->e);
  CHECK_LHOST_END(f->h);
  store_close(f->s);
  db_remove(&f->db);
}

/* Starts trial 1 (role search) of CONFIG_JSON rendered by the strategy. */
static trial *start(fixture *f, const char *config_json) {
  proposal p = {0};
  char *err = NULL;
  CHECK_INT(strategy_render(f->st, config_json, &p, &err), 0);
  trial_where w = {.slot = 0, .number = 1, .role = ROLE_SEARCH};
  trial *t = NULL;
  int rc = trial_start(&f->ctx, &w, &p, on_done, &f->got, &t, &err);
  if (rc != 0) fprintf(stderr, "trial_start: %s\n", err ? err : "?");
  CHECK_INT(rc, 0);
  free(err);
  proposal_clear(&p);
  return t;
}

static void line(fixture *f, int stream, const char *text) {
  f->rx.cb.on_line(f->rx.ud, stream, text, strlen(text), 0);
}

static void exit_with(fixture *f, int code) {
  exec_result res = {.exit_status = code, .wall_s = 1.5};
  f->rx.cb.on_exit(f->rx.ud, &res);
}

/* The status and value stored for trial 1. */
static void stored(fixture *f, outcome *status, double *value) {
  trial_record *rows = NULL;
  int n = 0;
  CHECK_INT(store_trials_load(f->s, f->sweep, &rows, &n, NULL), 0);
  CHECK_INT(n, 1);
  *status = n == 1 ? rows[0].status : OUTCOME_LOST;
  *value = n == 1 ? rows[0].value : NAN;
  record_free(rows, n);
}

TEST(measured_run_is_built_once_and_ok_is_recorded) {
  fixture f;
  if (setup(&f, "") != 0) return;
  trial *t = start(&f, "{\"xla_gpu_all_gather_combine_threshold_bytes\":4294967296}");
  CHECK(t != NULL);
  /* One phase, one start: the argv with {steps} substituted, the flags in XLA_FLAGS. */
  CHECK_INT(f.rx.starts, 1);
  CHECK_STR(f.rx.cmd[0], "train --steps 4");
  CHECK(f.rx.xla_flags[0] && strstr(f.rx.xla_flags[0],
                                    "--xla_gpu_enable_latency_hiding_"
                                    "scheduler=true"));
  CHECK(f.rx.xla_flags[0] &&
        strstr(f.rx.xla_flags[0], "--xla_gpu_all_gather_combine_threshold_bytes=4294967296"));
  CHECK(f.rx.profile_env[0] == NULL);
  CHECK(f.rx.log_path[0] && strstr(f.rx.log_path[0], "trial-0001"));
  /* The first step is skipped (metric.skip = 1): the value is the median of the rest. */
  line(&f, EXEC_STDOUT, "{\"step_ms\": 90}");
  line(&f, EXEC_STDOUT, "{\"step_ms\": 10}");
  line(&f, EXEC_STDOUT, "{\"step_ms\": 12}");
  line(&f, EXEC_STDOUT, "{\"step_ms\": 11}");
  exit_with(&f, 0);
  CHECK_INT(f.got.calls, 1);
  CHECK_INT(f.got.status, OUTCOME_OK);
  CHECK_NEAR(f.got.value, 11.0, 1e-9);
  CHECK_INT(f.got.steps_budget, 4);
  outcome st;
  double v;
  stored(&f, &st, &v);
  CHECK_INT(st, OUTCOME_OK);
  CHECK_NEAR(v, 11.0, 1e-9);
  CHECK_INT(f.rx.starts, 1); /* nothing started again */
  teardown(&f);
}

TEST(oom_line_stops_the_run_and_oom_is_recorded) {
  fixture f;
  if (setup(&f, "") != 0) return;
  start(&f, "{}");
  line(&f, EXEC_STDOUT, "{\"step_ms\": 90}");
  line(&f, EXEC_STDERR, "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.0GiB.");
  CHECK_INT(f.rx.stops, 1); /* stopped at the line, not at the exit */
  exec_result res = {.term_signal = 15, .stopped = EXEC_STOP_REQUESTED, .wall_s = 1};
  f.rx.cb.on_exit(f.rx.ud, &res);
  CHECK_INT(f.got.calls, 1);
  CHECK_INT(f.got.status, OUTCOME_OOM);
  CHECK(f.got.reason && strstr(f.got.reason, "RESOURCE_EXHAUSTED"));
  outcome st;
  double v;
  stored(&f, &st, &v);
  CHECK_INT(st, OUTCOME_OOM);
  CHECK(isnan(v));
  CHECK_INT(f.rx.starts, 1); /* a failed trial is not started again */
  teardown(&f);
}

TEST(a_start_that_failed_is_recorded_crash) {
  fixture f;
  if (setup(&f, "") != 0) return;
  start(&f, "{}");
  exec_result res = {.exit_status = 127, .spawn_error = 1};
  snprintf(res.spawn_message, sizeof res.spawn_message, "train: No such file or directory");
  f.rx.cb.on_exit(f.rx.ud, &res);
  CHECK_INT(f.got.calls, 1);
  CHECK_INT(f.got.status, OUTCOME_CRASH);
  outcome st;
  double v;
  stored(&f, &st, &v);
  CHECK_INT(st, OUTCOME_CRASH);
  CHECK_INT(f.rx.starts, 1);
  teardown(&f);
}

static const char *const PGLE = "  pgle = { mode = \"manual\", route = \"jax\", steps = 2 },\n";

TEST(manual_pgle_runs_the_profile_then_the_measured_run) {
  fixture f;
  if (setup(&f, PGLE) != 0) return;
  start(&f, "{}");
  /* The profile run first: pgle.steps, the profile path in $FLAGTUNE_PGLE_PROFILE. */
  CHECK_INT(f.rx.starts, 1);
  CHECK_STR(f.rx.cmd[0], "train --steps 2");
  CHECK(f.rx.profile_env[0] != NULL);
  if (!f.rx.profile_env[0]) {
    teardown(&f);
    return;
  }
  FILE *fp = fopen(f.rx.profile_env[0], "w");
  CHECK(fp != NULL);
  if (fp) fputs("profile", fp), fclose(fp);
  line(&f, EXEC_STDOUT, "{\"step_ms\": 500}"); /* the profile run's steps do not count */
  exit_with(&f, 0);
  CHECK_INT(f.got.calls, 0);
  /* Then the measured run, with the launch built at the start: budget.steps. */
  CHECK_INT(f.rx.starts, 2);
  CHECK_STR(f.rx.cmd[1], "train --steps 4");
  line(&f, EXEC_STDOUT, "{\"step_ms\": 90}");
  line(&f, EXEC_STDOUT, "{\"step_ms\": 20}");
  line(&f, EXEC_STDOUT, "{\"step_ms\": 20}");
  exit_with(&f, 0);
  CHECK_INT(f.got.calls, 1);
  CHECK_INT(f.got.status, OUTCOME_OK);
  CHECK_NEAR(f.got.value, 20.0, 1e-9);
  CHECK_INT(f.rx.starts, 2);
  teardown(&f);
}

TEST(manual_pgle_without_a_profile_records_crash_and_starts_nothing_more) {
  fixture f;
  if (setup(&f, PGLE) != 0) return;
  start(&f, "{}");
  CHECK_INT(f.rx.starts, 1);
  exit_with(&f, 0); /* exited 0, left no profile */
  CHECK_INT(f.rx.starts, 1);
  CHECK_INT(f.got.calls, 1);
  CHECK_INT(f.got.status, OUTCOME_CRASH);
  CHECK(f.got.reason && strstr(f.got.reason, "left no profile"));
  outcome st;
  double v;
  stored(&f, &st, &v);
  CHECK_INT(st, OUTCOME_CRASH);
  teardown(&f);
}
