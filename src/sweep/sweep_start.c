/* How a sweep starts: `check` and `run` validate everything before the first database write
 * (the experiment, the strategy and its first proposals, the command, a Slurm preflight),
 * `run` creates the sweep's row and records where it runs; every sweep that runs (run,
 * resume, minimize) gets its loop, its executor (local or Slurm, with the compute node's
 * hardware) and its log directory here. The scheduling is sweep.c's, called one way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "exec.h"
#include "hardware.h"
#include "json.h"
#include "launch.h"
#include "preflight.h"
#include "run_process.h"
#include "sample.h"
#include "slurm.h"
#include "sweep_state.h"

extern char **environ;

static int create_sweep(sweep *sw, const sweep_opts *o, char **err) {
  experiment *e = sw->exp;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  char *opts = sweep_options_json(sw, o);
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
                       .budget_trials = sw->bud.trials,
                       .budget_hours = o->hours >= 0 ? o->hours : e->budget_hours,
                       .budget_steps = e->budget_steps,
                       .parallel = sw->parallel,
                       .host = host,
                       .options_json = opts,
                       .software = software,
                       .jaxlib = jaxlib,
                       .space_digest = sw->strat ? strategy_space_digest(sw->strat) : NULL};
  int rc = store_sweep_create(sw->db, &n, &sw->id, err);
  free(software);
  free(jaxlib);
  free(opts);
  return rc;
}

/* The Slurm executor's report of a trial's step: stored with the trial (resume cancels it). */
static void on_slurm_step(void *ud, int number, int64_t job, int step, const char *node) {
  sweep *sw = ud;
  char *err = NULL;
  if (store_trial_set_slurm(sw->db, sw->id, number, job, step, node, &err) != 0)
    diag_warn("%s", err);
  free(err);
}

/* hardware = "auto" under Slurm: the key of the compute node the trials run on (nvidia-smi
 * in a step of the allocation), not of the node flagtune runs on; recorded with the sweep. */
static void compute_node_hardware(sweep *sw) {
  const experiment *e = sw->exp;
  int64_t job = slurm_executor_job(sw->x);
  if (strcmp(e->hardware, "auto") != 0 || job <= 0) return;
  int gpus = e->slurm_gpus_per_trial > 0 ? e->slurm_gpus_per_trial : e->gpus_per_trial;
  char gres[32] = "";
  if (gpus > 0) snprintf(gres, sizeof gres, " --gres=gpu:%d", gpus);
  char *prefix = xasprintf("srun --jobid=%lld --exact -n1 --quiet%s --", (long long)job, gres);
  char *note = NULL, *err = NULL;
  char *key = hardware_fingerprint_via(prefix, NULL, gpus, &note);
  if (strncmp(key, "host:", 5) != 0 && strcmp(key, sw->hardware) != 0) {
    if (store_sweep_set_hardware(sw->db, sw->id, key, &err) == 0) {
      diag_note("flagtune: hardware of the compute node: %s", key);
      free(sw->hardware);
      sw->hardware = key;
      key = NULL;
    } else {
      diag_warn("%s", err);
    }
  }
  free(key);
  free(note);
  free(err);
  free(prefix);
}

/* The executor: --executor, else slurm for a sweep that already ran under Slurm (a resume
 * finds its allocation again), else the experiment's. The literal path still names this
 * binary if it is rebuilt or deleted mid-sweep. */
static int make_executor(sweep *sw, const sweep_opts *o, char **err) {
  const experiment *e = sw->exp;
  int64_t job = 0;
  store_sweep_slurm_job(sw->db, sw->id, &job, NULL);
  const char *kind = o->executor ? o->executor : job > 0 ? "slurm" : e->executor;
  if (strcmp(kind, "slurm") != 0) {
    sw->x = exec_local_new(&sw->loop, "/proc/self/exe");
    return 0;
  }
  char *name = xasprintf("flagtune-sweep-%lld", (long long)sw->id);
  slurm_opts so = {.partition = e->slurm_partition,
                   .account = e->slurm_account,
                   .time = e->slurm_time,
                   .nodes = e->slurm_nodes,
                   .tasks_per_node = e->slurm_tasks_per_node,
                   .gpus_per_trial = e->slurm_gpus_per_trial,
                   .parallel = sw->parallel,
                   .job_per_trial = e->slurm_mode && strcmp(e->slurm_mode, "job") == 0,
                   .extra = e->slurm_extra,
                   .cpus_per_trial = e->slurm_cpus_per_trial,
                   .srun = e->slurm_srun,
                   .job = job,
                   .job_name = name,
                   .supervisor = "/proc/self/exe",
                   .on_step = on_slurm_step,
                   .ud = sw};
  const char *fs = slurm_network_fs(sw->db_path);
  if (fs)
    diag_warn(
        "the database %s is on %s: SQLite's locking is unreliable there; keep it on a local "
        "disk of the node flagtune runs on (--db)",
        sw->db_path, fs);
  int rc = slurm_executor_new(&sw->loop, &so, &sw->x, err);
  free(name);
  if (rc == 0) compute_node_hardware(sw);
  return rc;
}

/* Starts the loop and the executor and fixes where logs go: what run and resume share once
 * the sweep is claimed. */
int sweep_begin(sweep *sw, const char *db_path, const sweep_opts *o, int64_t *sweep_id,
                char **err) {
  *sweep_id = sw->id;
  sw->db_path = xstrdup(db_path);
  if (uv_loop_init(&sw->loop) != 0) return diag_set(err, FT_ESYS, "uv_loop_init");
  int rc = make_executor(sw, o, err);
  if (rc != 0) { /* no allocation: nothing ran; `resume` tries again */
    store_sweep_set_status(sw->db, sw->id, "failed", err ? *err : NULL, 0, NULL);
    uv_loop_close(&sw->loop);
    return rc;
  }
  sw->log_dir = launch_log_dir(db_path, getenv("FLAGTUNE_LOG_DIR"), sw->id, sw->resumed);
  sw->tctx = (trial_ctx){.x = sw->x,
                         .db = sw->db,
                         .exp = sw->exp,
                         .metric = &sw->metric,
                         .patterns = &sw->patterns,
                         .sweep_id = sw->id,
                         .log_dir = sw->log_dir,
                         .base_env = environ,
                         .check = sw->exp->check_on ? &sw->check : NULL,
                         .check_ref = sw->check_ref,
                         .n_check_ref = sw->n_check_ref};
  if (o->on_started && launch_make_dirs(sw->log_dir, NULL) == 0)
    o->on_started(sw->id, sw->log_dir, o->ud);
  sw->view = progress_detect(); /* --detach has just moved stderr to its log */
  return 0;
}

/* Everything up to the first database write: experiment, strategy, baseline, first ask. */
static int validate(sweep *sw, const char *path, const sweep_opts *o, int strict, char **err) {
  int rc = sweep_prepare(sw, path, NULL, o, NULL, err);
  if (rc == 0) { /* the command can start: found now, it costs no trial */
    char *cwd = launch_cwd();
    const char *kind = o->executor ? o->executor : sw->exp->executor;
    int slurm = kind && strcmp(kind, "slurm") == 0;
    rc = preflight_check(sw->exp, cwd, slurm, NULL, err);
    free(cwd);
    const experiment *e = sw->exp;
    slurm_opts so = {
        .partition = e->slurm_partition,
        .time = e->slurm_time,
        .nodes = e->slurm_nodes,
        .gpus_per_trial = e->slurm_gpus_per_trial, /* what each step asks: --gres=gpu:N */
        .job_per_trial = e->slurm_mode && strcmp(e->slurm_mode, "job") == 0};
    if (rc == 0 && slurm)
      rc = slurm_preflight(&so, e->path, e->executor_line > 0 ? e->executor_line : 1, strict, err);
  }
  if (rc == 0) {
    proposal base;
    rc = strategy_render(sw->strat, "{}", &base, err);
    if (rc == 0) sweep_queue_push(&sw->queue, &base, ROLE_BASELINE, 0);
  }
  if (rc == 0) sweep_ask(sw, sw->parallel); /* a strategy that fails at once writes nothing */
  if (rc == 0 && sw->fail.failed) rc = diag_set(err, FT_EINPUT, "%s", sw->fail.reason);
  if (rc != 0 && rc != FT_ESYS && rc != FT_ESTORE) rc = FT_EINPUT;
  sw->strategy_exhausted = 0;
  return rc;
}

int sweep_check(const char *path, const sweep_opts *o, char **summary, char **err) {
  lhost_check_only(); /* the strategy's code runs, but changes nothing */
  sweep *sw = xcalloc(1, sizeof *sw);
  int rc = validate(sw, path, o, 0, err);
  if (rc == 0) {
    experiment *e = sw->exp;
    char hours[48] = "";
    if (e->budget_hours > 0) snprintf(hours, sizeof hours, ", at most %.4g h", e->budget_hours);
    *summary = xasprintf(
        "%s: ok: %d searched parameter%s, %.6g configurations, strategy %s, "
        "%d trials (baseline + %d)%s, parallel %d",
        path, e->n_params, e->n_params == 1 ? "" : "s", e->space_size, e->strategy_desc,
        sw->bud.trials, sw->bud.trials - 1, hours, sw->parallel);
    if (o->sample) rc = sample_append(e, o->sample, summary, err); /* check --sample */
  }
  sweep_free(sw);
  return rc;
}

/* ---- where a sweep runs ---- */

/* Records the directory `run` runs in and the command as it resolves there, so that a
 * resume from anywhere runs the same trials. */
static int sweep_store_place(sweep *sw, char **err) {
  char *cwd = launch_cwd();
  char *cmd_json = launch_command_json(sw->exp, cwd);
  int rc = store_sweep_set_place(sw->db, sw->id, cwd, cmd_json, err);
  free(cmd_json);
  free(cwd);
  return rc;
}

int sweep_run(const char *path, const sweep_opts *o, int64_t *sweep_id, int *unhealthy,
              char **err) {
  sweep *sw = xcalloc(1, sizeof *sw);
  *sweep_id = 0;
  *unhealthy = 0;
  int rc = validate(sw, path, o, 1, err);
  if (rc == 0 &&
      run_process_early_signal()) /* stopped while the experiment loaded: nothing to keep */
    rc = diag_set(err, FT_EINTR, "interrupted before the sweep began; nothing was written");
  if (rc != 0) {
    sweep_free(sw);
    return rc;
  }
  rc = store_open(o->db_path, 0, &sw->db, err);
  if (rc == 0) rc = create_sweep(sw, o, err);
  if (rc == 0) rc = sweep_store_place(sw, err);
  if (rc == 0) rc = sweep_begin(sw, o->db_path, o, sweep_id, err);
  if (rc == 0) {
    char *name = json_terminal_text(o->name ? o->name : sw->exp->name, NULL);
    diag_note("flagtune: sweep %lld \"%s\": %d trials (baseline + %d), parallel %d, seed %lld",
              (long long)sw->id, name, sw->bud.trials, sw->bud.trials - 1, sw->parallel,
              (long long)sw->seed);
    free(name);
    rc = sweep_drive(sw, err);
  }
  *unhealthy = !sw->best.baseline_ok || sw->best.n_ok == 0;
  sweep_free(sw);
  return rc;
}
