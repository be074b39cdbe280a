/* Unit tests for the Slurm executor (slurm.c) against fake Slurm commands
 * (tests/slurm/fake/: srun, salloc, scancel, squeue as small shell scripts that log their
 * arguments), so that what flagtune asks of Slurm and how it reads srun's messages are
 * checked everywhere, root or not. tests/e2e/test_slurm.sh runs the same executor against a
 * real Slurm. Each case runs on its own loop and ends with CHECK_LOOP_END. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "slurm.h"
#include "slurm_cmd.h"
#include "test.h"

typedef struct {
  uv_loop_t loop;
  executor *x;
  exec_trial *t;
  int exits, steps_told;
  exec_result res;
  char lines[2048];
  int64_t job;
  int step, number;
  char node[64];
} ctx;

static char dir[256], path_env[600], dir_env[300];

/* A fresh FAKE_DIR and PATH with the fakes first (for slurm_run, which uses environ). */
static void fake_setup(void) {
  snprintf(dir, sizeof dir, "%s", "/tmp/ft-slurm-unit.XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  setenv("FAKE_DIR", dir, 1);
  snprintf(path_env, sizeof path_env, "PATH=%s/tests/slurm/fake:/usr/bin:/bin", SOURCE_DIR);
  setenv("PATH", path_env + 5, 1);
  snprintf(dir_env, sizeof dir_env, "FAKE_DIR=%s", dir);
  unsetenv("SLURM_JOB_ID");
}

static char *fake_log(void) {
  char p[320];
  snprintf(p, sizeof p, "%s/log", dir);
  FILE *f = fopen(p, "rb");
  static char buf[8192];
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  buf[n] = '\0';
  if (f) fclose(f);
  return buf;
}

static void fake_teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK_INT(system(cmd), 0);
}

static void on_line(void *ud, int stream, const char *line, size_t len, int truncated) {
  ctx *c = ud;
  (void)truncated;
  size_t at = strlen(c->lines);
  snprintf(c->lines + at, sizeof c->lines - at, "%d:%.*s\n", stream, (int)len, line);
}

static void on_exit_cb(void *ud, const exec_result *r) {
  ctx *c = ud;
  c->exits++;
  c->res = *r;
}

static void on_step(void *ud, int number, int64_t job, int step, const char *node) {
  ctx *c = ud;
  c->steps_told++;
  c->number = number;
  c->job = job;
  c->step = step;
  snprintf(c->node, sizeof c->node, "%s", node);
}

static void start_executor(ctx *c, int job_per_trial) {
  memset(c, 0, sizeof *c);
  uv_loop_init(&c->loop);
  slurm_opts o = {.partition = "gpu",
                  .gpus_per_trial = 1,
                  .parallel = 2,
                  .job_per_trial = job_per_trial,
                  .on_step = on_step,
                  .ud = c};
  char *err = NULL;
  CHECK_INT(slurm_executor_new(&c->loop, &o, &c->x, &err), 0);
  free(err);
}

/* Runs ARGV as trial 5 with MODE (FAKE_SRUN_MODE) until it ends. */
static void run(ctx *c, char *const *argv, const char *mode, double timeout_s) {
  char mode_env[64];
  snprintf(mode_env, sizeof mode_env, "FAKE_SRUN_MODE=%s", mode ? mode : "");
  char *envp[] = {path_env,         dir_env, mode_env, "FLAGTUNE_TRIAL=5", "CUDA_VISIBLE_DEVICES=7",
                  "SLURM_NTASKS=9", NULL};
  exec_spec spec = {.argv = argv, .envp = envp, .timeout_s = timeout_s, .grace_s = 0.2};
  exec_callbacks cb = {.on_line = on_line, .on_exit = on_exit_cb};
  char *err = NULL;
  CHECK_INT(executor_start(c->x, &spec, &cb, c, &c->t, &err), 0);
  free(err);
  uv_run(&c->loop, UV_RUN_DEFAULT);
  CHECK_INT(c->exits, 1);
}

static void end(ctx *c) {
  executor_free(c->x);
  CHECK_LOOP_END(&c->loop);
}

/* A step in the allocation: srun's command line, the environment that reaches the step, the
 * step's ids reported, srun's own progress lines kept out, the allocation released. */
TEST(step_in_allocation) {
  fake_setup();
  ctx c;
  start_executor(&c, 0);
  CHECK_INT(slurm_executor_job(c.x), 42);
  char *argv[] = {"sh", "-c",
                  "echo hello; echo CVD=${CUDA_VISIBLE_DEVICES-unset} N=${SLURM_NTASKS-unset}",
                  NULL};
  run(&c, argv, NULL, 0);
  CHECK_INT(c.res.exit_status, 0);
  CHECK_INT(c.res.lost, 0);
  CHECK_STR(c.lines, "1:hello\n1:CVD=unset N=unset\n");
  CHECK_INT(c.steps_told, 1);
  CHECK_INT(c.number, 5);
  CHECK_INT(c.job, 42);
  CHECK_INT(c.step, 0);
  CHECK_STR(c.node, "fakenode");
  end(&c);
  const char *log = fake_log();
  CHECK(strstr(log,
               "salloc --no-shell --job-name=flagtune --nodes=1 --ntasks=2 --gres=gpu:2 "
               "--partition=gpu") != NULL);
  CHECK(strstr(log, "srun --verbose --jobid=42 --exact --nodes=1 --ntasks=1 --gres=gpu:1 ") !=
        NULL);
  CHECK(strstr(log, "scancel 42\n") != NULL);
  fake_teardown();
}

/* One job per trial: no allocation, the site options on each srun. */
TEST(job_per_trial) {
  fake_setup();
  ctx c;
  start_executor(&c, 1);
  CHECK_INT(slurm_executor_job(c.x), 0);
  char *argv[] = {"true", NULL};
  run(&c, argv, NULL, 0);
  CHECK_INT(c.res.exit_status, 0);
  end(&c);
  const char *log = fake_log();
  CHECK(strstr(log, "salloc") == NULL);
  CHECK(strstr(log, "--jobid") == NULL);
  CHECK(strstr(log, "--partition=gpu --") != NULL);
  CHECK(strstr(log, "scancel") == NULL);
  fake_teardown();
}

/* The timeout is flagtune's: TERM to the step's tasks, then the cancel. */
TEST(timeout_cancels_step) {
  fake_setup();
  ctx c;
  start_executor(&c, 0);
  char *argv[] = {"sleep", "30", NULL};
  run(&c, argv, NULL, 0.3);
  CHECK_INT(c.res.stopped, EXEC_STOP_TIMEOUT);
  CHECK_INT(c.res.term_signal, SIGTERM);
  CHECK(c.res.wall_s < 5);
  end(&c);
  CHECK(strstr(fake_log(), "scancel --signal=TERM 42.0") != NULL);
  fake_teardown();
}

/* A trial Slurm loses before its program printed anything runs again, unseen. */
TEST(node_failure_before_output_retried) {
  fake_setup();
  ctx c;
  start_executor(&c, 0);
  char *argv[] = {"echo", "hello", NULL};
  run(&c, argv, "nodefail-once", 0);
  CHECK_INT(c.res.exit_status, 0);
  CHECK_INT(c.res.lost, 0);
  CHECK(strstr(c.lines, "1:hello\n") != NULL);
  CHECK_INT(c.step, 1); /* the second attempt's step */
  end(&c);
  fake_teardown();
}

/* After output, a node failure is reported as lost and never reads as a clean exit. */
TEST(node_failure_after_output_lost) {
  fake_setup();
  ctx c;
  start_executor(&c, 0);
  char *argv[] = {"echo", "hello", NULL};
  run(&c, argv, "nodefail-after", 0);
  CHECK_INT(c.res.lost, 1);
  CHECK(c.res.term_signal != 0 || c.res.exit_status != 0);
  CHECK(strstr(c.lines, "DUE TO NODE FAILURE") != NULL); /* in the excerpt */
  end(&c);
  fake_teardown();
}

/* srun's exit 2 with slurmstepd's execve() error: the command was not found on the node. */
TEST(missing_binary) {
  fake_setup();
  ctx c;
  start_executor(&c, 0);
  char *argv[] = {"/no/such/program", NULL};
  run(&c, argv, "missing", 0);
  CHECK_INT(c.res.spawn_error, UV_ENOENT);
  CHECK_INT(c.res.exit_status, 127);
  CHECK_STR(c.res.spawn_message, "command not found: /no/such/program (execve() on node fakenode)");
  end(&c);
  fake_teardown();
}

static void name_step(int step, const char *name) {
  char p[320];
  snprintf(p, sizeof p, "%s/step-%d.name", dir, step);
  FILE *f = fopen(p, "w");
  CHECK(f != NULL);
  fprintf(f, "%s\n", name);
  fclose(f);
}

/* Orphans by their stored ids, each only while squeue names the step this sweep's trial:
 * after a requeue step ids start again, and J.S may be another sweep's. Trials that never
 * were Slurm steps, and steps that ended, are left alone. */
TEST(reap_by_stored_ids) {
  fake_setup();
  exec_orphan o[] = {{.number = 1, .slurm_job = 42, .slurm_step = 3},
                     {.number = 2},
                     {.number = 3, .slurm_job = 42, .slurm_step = -1},
                     {.number = 4, .slurm_job = 42, .slurm_step = 5},
                     {.number = 6, .slurm_job = 42, .slurm_step = 6},
                     {.number = 7, .slurm_job = 42, .slurm_step = 8}};
  name_step(3, "flagtune-sweep-7-trial-1");
  name_step(5, "flagtune-sweep-9-trial-4"); /* another sweep's, after a requeue */
  name_step(6, "flagtune-sweep-7-trial-2"); /* this sweep's, another trial */
  CHECK_INT(slurm_reap(7, o, 6), 1);
  const char *log = fake_log();
  CHECK(strstr(log, "scancel 42.3\n") != NULL);
  CHECK(strstr(log, "scancel 42.5") == NULL);
  CHECK(strstr(log, "scancel 42.6") == NULL);
  CHECK(strstr(log, "scancel 42.8") == NULL); /* ended: squeue knows no such step */
  fake_teardown();
}

/* A requeued batch job (same id, step ids from 0 again) names its steps after its restart
 * count: an orphan's J.S is cancelled only while its name carries the job's current count. */
TEST(reap_checks_restart_count) {
  fake_setup();
  exec_orphan o[] = {{.number = 1, .slurm_job = 42, .slurm_step = 0},
                     {.number = 2, .slurm_job = 42, .slurm_step = 1},
                     {.number = 3, .slurm_job = 42, .slurm_step = 2}};
  name_step(0, "flagtune-sweep-7-trial-1");           /* the first run's name */
  name_step(1, "flagtune-sweep-7-trial-2-restart-1"); /* this run's: the orphan's own */
  name_step(2, "flagtune-sweep-7-trial-3-restart-2"); /* a later run's */
  setenv("FAKE_RESTART_COUNT", "1", 1);
  CHECK_INT(slurm_reap(7, o, 3), 1);
  const char *log = fake_log();
  CHECK(strstr(log, "squeue -h -j 42 -O RestartCnt\n") != NULL);
  CHECK(strstr(log, "scancel 42.0") == NULL);
  CHECK(strstr(log, "scancel 42.1\n") != NULL);
  CHECK(strstr(log, "scancel 42.2") == NULL);
  /* Inside job 42 itself the count is $SLURM_RESTART_COUNT, not squeue's. */
  setenv("SLURM_JOB_ID", "42", 1);
  setenv("SLURM_RESTART_COUNT", "2", 1);
  CHECK_INT(slurm_reap(7, o, 3), 1);
  CHECK(strstr(fake_log(), "scancel 42.2\n") != NULL);
  unsetenv("SLURM_RESTART_COUNT");
  unsetenv("FAKE_RESTART_COUNT");
  fake_teardown();
}

/* squeue's %L, the time a job has left: the drain's deadline (sweep_drain.c). */
TEST(time_left_read) {
  fake_setup();
  setenv("FAKE_TIME_LEFT", "1-02:03:04", 1);
  CHECK_NEAR(slurm_time_left(42), 93784, 1e-9);
  setenv("FAKE_TIME_LEFT", "2:00:00", 1);
  CHECK_NEAR(slurm_time_left(42), 7200, 1e-9);
  setenv("FAKE_TIME_LEFT", "59:58", 1);
  CHECK_NEAR(slurm_time_left(42), 3598, 1e-9);
  setenv("FAKE_TIME_LEFT", "UNLIMITED", 1);
  CHECK_NEAR(slurm_time_left(42), -1, 1e-9);
  CHECK(strstr(fake_log(), "squeue -h -j 42 -o %L\n") != NULL);
  unsetenv("FAKE_TIME_LEFT");
  fake_teardown();
}

/* Slurm's time formats, as --time and sinfo's %l write them (src/common/parse_time.c's
 * time_str2secs): a bare number is minutes, MM:SS below three fields. */
TEST(time_formats_read) {
  CHECK_INT(slurm_time_seconds("30"), 1800);
  CHECK_INT(slurm_time_seconds("0"), 0);
  CHECK_INT(slurm_time_seconds("30:15"), 1815);
  CHECK_INT(slurm_time_seconds("10:00:00"), 36000);
  CHECK_INT(slurm_time_seconds("2-12"), 2 * 86400 + 12 * 3600);
  CHECK_INT(slurm_time_seconds("2-12:30"), 2 * 86400 + 12 * 3600 + 30 * 60);
  CHECK_INT(slurm_time_seconds("1-00:00:01"), 86401);
  CHECK_INT(slurm_time_seconds("infinite"), -1);
  CHECK_INT(slurm_time_seconds("UNLIMITED"), -1);
  CHECK_INT(slurm_time_seconds("Infinite"), -1);
  CHECK_INT(slurm_time_seconds("-1"), -1);
  const char *bad[] = {"",   "1h",  "10:00:00:00", "1-2:3:4:5", "-5",          "1--2", "1-",
                       "1:", ":30", "1-2-3",       " 30",       "99999999999", NULL};
  for (int i = 0; bad[i]; i++) {
    long got = slurm_time_seconds(bad[i]);
    if (got != -2) fprintf(stderr, "'%s' read as %ld\n", bad[i], got);
    CHECK_INT(got, -2);
  }
  CHECK_INT(slurm_time_seconds(NULL), -2);
}

/* Inside a requeued batch job every step's name carries the restart count. */
TEST(step_name_has_restart_count) {
  fake_setup();
  setenv("SLURM_JOB_ID", "42", 1);
  setenv("SLURM_RESTART_COUNT", "3", 1);
  ctx c;
  start_executor(&c, 0);
  char *argv[] = {"true", NULL};
  run(&c, argv, NULL, 0);
  CHECK_INT(c.res.exit_status, 0);
  end(&c);
  CHECK(strstr(fake_log(), "--job-name=flagtune-trial-5-restart-3 ") != NULL);
  unsetenv("SLURM_RESTART_COUNT");
  fake_teardown();
}

/* resume: an allocation that still runs is reused, one that ended is replaced. */
TEST(allocation_reused_or_replaced) {
  fake_setup();
  uv_loop_t loop;
  uv_loop_init(&loop);
  slurm_opts o = {.gpus_per_trial = 1, .parallel = 1, .job = 41};
  executor *x = NULL;
  CHECK_INT(slurm_executor_new(&loop, &o, &x, NULL), 0);
  CHECK_INT(slurm_executor_job(x), 41);
  executor_free(x);
  CHECK(strstr(fake_log(), "salloc") == NULL);
  CHECK(strstr(fake_log(), "scancel 41\n") != NULL);
  setenv("FAKE_JOB_STATE", "", 1);
  CHECK_INT(slurm_executor_new(&loop, &o, &x, NULL), 0);
  CHECK_INT(slurm_executor_job(x), 42);
  executor_free(x);
  unsetenv("FAKE_JOB_STATE");
  CHECK_LOOP_END(&loop);
  fake_teardown();
}

/* A controller that does not answer (squeue exits 1, "Unable to contact slurm controller") is
 * asked again, never read as the allocation's end: the stored allocation is reused once it
 * answers, and no new one is asked for. */
TEST(controller_outage_is_waited_for) {
  fake_setup();
  uv_loop_t loop;
  uv_loop_init(&loop);
  setenv("FAKE_SQUEUE_FAIL", "2", 1);
  slurm_opts o = {.gpus_per_trial = 1, .parallel = 1, .job = 41, .controller_wait_s = 10};
  executor *x = NULL;
  CHECK_INT(slurm_executor_new(&loop, &o, &x, NULL), 0);
  CHECK_INT(slurm_executor_job(x), 41);
  executor_free(x);
  const char *log = fake_log();
  CHECK(strstr(log, "salloc") == NULL);
  CHECK_STR(log,
            "squeue -h -j 41 -o %T\nsqueue -h -j 41 -o %T\nsqueue -h -j 41 -o %T\n"
            "scancel 41\n");
  /* A controller still silent after the wait: an error, and still no new allocation. */
  fake_teardown();
  fake_setup();
  setenv("FAKE_SQUEUE_FAIL", "100", 1);
  o.controller_wait_s = 1;
  char *err = NULL;
  CHECK_INT(slurm_executor_new(&loop, &o, &x, &err), FT_ESYS);
  CHECK(err && strstr(err, "did not answer about allocation 41") != NULL);
  free(err);
  CHECK(strstr(fake_log(), "salloc") == NULL);
  CHECK(strstr(fake_log(), "scancel") == NULL);
  unsetenv("FAKE_SQUEUE_FAIL");
  CHECK_LOOP_END(&loop);
  fake_teardown();
}

/* An allocation that Slurm still knows but that no longer runs (SUSPENDED, COMPLETING) is
 * cancelled before a new one is asked for; one Slurm forgot is not. */
TEST(old_allocation_cancelled_first) {
  fake_setup();
  uv_loop_t loop;
  uv_loop_init(&loop);
  setenv("FAKE_JOB_STATE", "SUSPENDED", 1);
  slurm_opts o = {.gpus_per_trial = 1, .parallel = 1, .job = 41};
  executor *x = NULL;
  CHECK_INT(slurm_executor_new(&loop, &o, &x, NULL), 0);
  CHECK_INT(slurm_executor_job(x), 42);
  executor_free(x);
  const char *log = fake_log();
  const char *c41 = strstr(log, "scancel 41\n"), *s = strstr(log, "salloc ");
  CHECK(c41 && s && c41 < s);
  unsetenv("FAKE_JOB_STATE");
  CHECK_LOOP_END(&loop);
  fake_teardown();
}

/* A step killed by a signal flagtune did not send, while its allocation was CANCELLED or
 * PREEMPTED, is lost (re-run), not a crash; with the allocation RUNNING it stays a crash. */
TEST(killed_step_checks_the_allocation) {
  fake_setup();
  ctx c;
  start_executor(&c, 0);
  char *argv[] = {"echo", "hello", NULL};
  run(&c, argv, "killed", 0);
  CHECK_INT(c.res.lost, 0);
  CHECK_INT(c.res.exit_status, 137);
  end(&c);
  CHECK(strstr(fake_log(), "squeue -h -j 42 -o %T\n") != NULL);
  fake_teardown();
  const char *states[] = {"PREEMPTED", "CANCELLED"};
  for (int i = 0; i < 2; i++) {
    fake_setup();
    setenv("FAKE_JOB_STATE", states[i], 1);
    start_executor(&c, 0);
    run(&c, argv, "killed", 0);
    CHECK_INT(c.res.lost, 1);
    CHECK(strstr(c.lines, "1:hello\n") != NULL);
    end(&c);
    unsetenv("FAKE_JOB_STATE");
    fake_teardown();
  }
}

/* cpus_per_trial and srun = { ... }: every step asks for its CPU share and carries the srun
 * options; the allocation asks for the same share per task and, for multi-node trials, the
 * layout per node. */
TEST(cpus_and_srun_options) {
  fake_setup();
  uv_loop_t loop;
  uv_loop_init(&loop);
  char *srun_opts[] = {"--gpu-bind=closest", "--mpi=none", NULL};
  ctx c;
  memset(&c, 0, sizeof c);
  uv_loop_init(&c.loop);
  slurm_opts o = {.nodes = 2,
                  .tasks_per_node = 4,
                  .gpus_per_trial = 4,
                  .cpus_per_trial = 16,
                  .parallel = 2,
                  .srun = srun_opts,
                  .on_step = on_step,
                  .ud = &c};
  CHECK_INT(slurm_executor_new(&c.loop, &o, &c.x, NULL), 0);
  char *argv[] = {"true", NULL};
  run(&c, argv, NULL, 0);
  end(&c);
  const char *log = fake_log();
  CHECK(strstr(log,
               "salloc --no-shell --job-name=flagtune --nodes=4 --ntasks=16 "
               "--ntasks-per-node=4 --cpus-per-task=4 --gres=gpu:4\n") != NULL);
  CHECK(strstr(log,
               "srun --verbose --jobid=42 --exact --nodes=2 --ntasks=8 --ntasks-per-node=4 "
               "--gres=gpu:4 --cpus-per-task=4 --job-name=flagtune-trial-5 "
               "--kill-on-bad-exit=1 --gpu-bind=closest --mpi=none -- true\n") != NULL);
  fake_teardown();
  uv_loop_close(&loop);
}

/* Without cpus_per_trial a step gets the --cpus-per-task the allocation was given in extra
 * (steps do not inherit it), else that of the allocation flagtune runs in, else Slurm's. */
TEST(default_cpu_share) {
  char *extra_eq[] = {"--qos=high", "--cpus-per-task=6", NULL};
  char *extra_c[] = {"-c", "3", NULL};
  char *extra_c2[] = {"-c5", NULL};
  slurm_opts o = {.tasks_per_node = 2, .cpus_per_trial = 8};
  CHECK_INT(slurm_cpus_per_task(&o), 4);
  o.cpus_per_trial = 0;
  unsetenv("SLURM_JOB_ID");
  CHECK_INT(slurm_cpus_per_task(&o), 0);
  o.extra = extra_eq;
  CHECK_INT(slurm_cpus_per_task(&o), 6);
  o.extra = extra_c;
  CHECK_INT(slurm_cpus_per_task(&o), 3);
  o.extra = extra_c2;
  CHECK_INT(slurm_cpus_per_task(&o), 5);
  o.extra = NULL;
  setenv("SLURM_CPUS_PER_TASK", "7", 1);
  CHECK_INT(slurm_cpus_per_task(&o), 0); /* not inside an allocation */
  setenv("SLURM_JOB_ID", "77", 1);
  CHECK_INT(slurm_cpus_per_task(&o), 7);
  unsetenv("SLURM_JOB_ID");
  unsetenv("SLURM_CPUS_PER_TASK");
}

/* Multi-process trials running at once get distinct JAX_COORDINATOR_PORTs (JAX takes the
 * coordinator's node from the step's SLURM_STEP_NODELIST and the port from this variable);
 * a port the experiment sets is kept; a one-process trial gets none. */
TEST(coordinator_port_per_step) {
  fake_setup();
  ctx c;
  memset(&c, 0, sizeof c);
  uv_loop_init(&c.loop);
  slurm_opts o = {.tasks_per_node = 2, .gpus_per_trial = 1, .parallel = 3};
  CHECK_INT(slurm_executor_new(&c.loop, &o, &c.x, NULL), 0);
  char *argv[] = {"sh", "-c", "echo P=${JAX_COORDINATOR_PORT-unset}; sleep 0.3", NULL};
  char *env_a[] = {path_env, dir_env, "FLAGTUNE_TRIAL=1", NULL};
  char *env_c[] = {path_env, dir_env, "FLAGTUNE_TRIAL=3", "JAX_COORDINATOR_PORT=1234", NULL};
  char *const *envs[] = {env_a, env_a, env_c};
  exec_callbacks cb = {.on_line = on_line, .on_exit = on_exit_cb};
  for (int i = 0; i < 3; i++) {
    exec_spec spec = {.argv = argv, .envp = envs[i], .grace_s = 0.2};
    exec_trial *t = NULL;
    CHECK_INT(executor_start(c.x, &spec, &cb, &c, &t, NULL), 0);
  }
  uv_run(&c.loop, UV_RUN_DEFAULT);
  CHECK_INT(c.exits, 3);
  /* job 42: the ports next to JAX's own default for it (61440 + 42 % 4096) */
  CHECK(strstr(c.lines, "1:P=61483\n") != NULL);
  CHECK(strstr(c.lines, "1:P=61484\n") != NULL);
  CHECK(strstr(c.lines, "1:P=1234\n") != NULL);
  /* the ports are given back: the next trial takes the first again */
  c.lines[0] = '\0';
  exec_spec spec = {.argv = argv, .envp = env_a, .grace_s = 0.2};
  exec_trial *t = NULL;
  CHECK_INT(executor_start(c.x, &spec, &cb, &c, &t, NULL), 0);
  uv_run(&c.loop, UV_RUN_DEFAULT);
  CHECK_STR(c.lines, "1:P=61483\n");
  end(&c);
  fake_teardown();
  /* one process per trial: JAX needs no coordinator */
  fake_setup();
  start_executor(&c, 0);
  run(&c, argv, NULL, 0);
  CHECK_STR(c.lines, "1:P=unset\n");
  end(&c);
  fake_teardown();
}
