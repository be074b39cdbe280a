/* The drain before a Slurm job's end (docs/SLURM.md, "A night on a cluster"): SIGUSR1
 * (`#SBATCH --signal=B:USR1@N`) stops the sweep from starting trials while the running ones
 * finish; under the Slurm executor the allocation's time left (squeue %L) is a deadline, so
 * no trial starts that the sweep's own measured durations say cannot finish before it, and
 * a trial still running at it is stopped and re-run later (interrupted, never a
 * configuration's failure). A drained sweep ends interrupted (exit 130) and, with
 * slurm { chain = true } inside a batch job, submits its continuation (the same script,
 * afterany). Uses the sweep's own deadline and stop; owns only the SIGUSR1 handle and the
 * note of why the sweep ended. One sweep per process. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "slurm.h"
#include "slurm_cmd.h"
#include "sweep_state.h"

/* Running trials are stopped this long before the allocation's end: their TERM, the grace
 * and srun's own end fit before Slurm's SIGTERM to the job. */
#define DRAIN_MARGIN_S 30.0

static uv_signal_t usr1;
static int watching;     /* usr1 is open */
static int usr1_seen;    /* SIGUSR1 came: drain */
static double alloc_end; /* the deadline the allocation's end set (0: none) */

static void on_usr1(uv_signal_t *h, int signum) {
  sweep *sw = h->data;
  (void)signum;
  if (usr1_seen++) return;
  diag_note(
      "flagtune: SIGUSR1: draining: no new trial starts, %d running trial%s finish%s; the "
      "sweep then stops resumable",
      sw->n_running, sw->n_running == 1 ? "" : "s", sw->n_running == 1 ? "es" : "");
  budget_deadline_reached(&sw->bud); /* may_start: nothing more starts */
  /* Nothing runs whose end would end the loop: the ordinary stop ends it at once. */
  if (sw->n_running == 0) uv_kill(uv_os_getpid(), SIGTERM);
}

void sweep_drain_watch(sweep *sw) {
  usr1_seen = 0;
  alloc_end = 0;
  uv_signal_init(&sw->loop, &usr1);
  usr1.data = sw;
  uv_signal_start(&usr1, on_usr1, SIGUSR1);
  watching = 1;
  int64_t job = slurm_executor_job(sw->x);
  if (job <= 0) return;
  double left = slurm_time_left(job);
  /* No time limit, not known, or a year (what squeue shows for a partition's INFINITE). */
  if (left <= 0 || left >= 365 * 86400.0) return;
  double end = sweep_now_s() + left - DRAIN_MARGIN_S;
  if (!budget_end_by(&sw->bud, end)) return; /* the time budget ends first */
  alloc_end = end;
  diag_note(
      "flagtune: slurm: allocation %lld ends in %.0f s: the sweep's deadline is %.0f s before "
      "it (no trial starts that cannot finish by then; one still running there is stopped "
      "and run again later)",
      (long long)job, left, DRAIN_MARGIN_S);
}

/* The continuation of a drained batch job: its own script again, once it has ended. */
static void chain(sweep *sw) {
  const char *self = getenv("SLURM_JOB_ID");
  if (!self || atoll(self) <= 0) {
    diag_warn("slurm.chain: flagtune is not running in a batch job; nothing submitted");
    return;
  }
  char *argv[] = {"scontrol", "-o", "show", "job", (char *)self, NULL};
  char *info = slurm_ask(argv, "this job", 60);
  char *cmd = info ? strstr(info, " Command=") : NULL;
  char *dir = info ? strstr(info, " WorkDir=") : NULL;
  if (!cmd || !dir) {
    diag_warn("slurm.chain: scontrol does not name this job's script; nothing submitted");
    free(info);
    return;
  }
  cmd += 9;
  dir += 9;
  cmd[strcspn(cmd, " ")] = '\0';
  dir[strcspn(dir, " ")] = '\0';
  char *dep = xasprintf("--dependency=afterany:%s", self);
  char *chdir_opt = xasprintf("--chdir=%s", dir);
  char *sb[] = {"sbatch", dep, chdir_opt, cmd, NULL};
  char *out = NULL;
  int rc = slurm_run(sb, &out);
  const char *got = out ? strstr(out, "Submitted batch job ") : NULL;
  if (rc == 0 && got)
    diag_note(
        "flagtune: slurm.chain: submitted job %lld (%s, after job %s ends) to continue "
        "sweep %lld",
        atoll(got + 20), cmd, self, (long long)sw->id);
  else
    diag_warn("slurm.chain: sbatch %s failed (exit %d): %s", cmd, rc,
              out && *out ? out : "no output");
  free(out);
  free(dep);
  free(chdir_opt);
  free(info);
}

void sweep_drain_close(sweep *sw) {
  if (!watching) return;
  watching = 0;
  uv_close((uv_handle_t *)&usr1, NULL);
  signal(SIGUSR1, SIG_IGN); /* from here to the exit a late one changes nothing */
  int left = budget_has_room(&sw->bud) && !sw->strategy_exhausted;
  int by_alloc = alloc_end > 0 && sw->bud.deadline == alloc_end && left;
  if (sw->fail.failed || !(usr1_seen || by_alloc)) return;
  if (!sw->stopping) sw->stopping = 1; /* interrupted, exit 130: resumable */
  diag_note(
      "flagtune: drained %s after %d of %d trials; `flagtune run` of the same "
      "experiment (or `flagtune resume %lld`) continues it",
      usr1_seen ? "on SIGUSR1" : "before the allocation's time limit", sw->bud.counted,
      sw->bud.trials, (long long)sw->id);
  if (left && sw->exp->slurm_chain) chain(sw);
}
