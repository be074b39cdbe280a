/* What the supervisor (supervise.c) and its fork server (supervise_server.c) share; not for
 * any other module: everything else goes through supervise.h. */
#ifndef FLAGTUNE_SUPERVISE_IMPL_H
#define FLAGTUNE_SUPERVISE_IMPL_H

#include <signal.h>
#include <sys/types.h>

typedef struct {
  pid_t parent;   /* whose death ends the trial */
  pid_t boss;     /* whose SIGTERM/SIGINT/SIGUSR2 are stop requests: the orchestrator (the
                   * parent, except under the fork server, whose children it sends to) */
  double grace_s; /* SIGTERM to SIGKILL, for a stop and for leftovers */
  int report_fd;  /* where the report lines go (supervise.h); -1: nowhere */
  int cgroup;     /* 0: do not try a cgroup (--no-cgroup) */
  char **cmd;     /* NULL-terminated */
  int again;      /* a served spare that serves the next request too: the trial's end is its
                   * "end" line (also when the command could not start), the process does not
                   * end as the command did, and a cgroup found empty is kept for the next */
  int reusable;   /* set by supervise_run with AGAIN: nothing of the trial is left (no child) */
  int back_fd;    /* with AGAIN: where 'b' goes once the trial is over and before its "end" is
                   * written (the fork server's link, which then counts us waiting); -1: none */
} sup_args;

/* The trial's own cgroup v2, when one could be made. */
#define SUP_PATH_MAX 1100 /* a cgroup directory: mount point (511) + our cgroup (511) + name */

typedef struct {
  char dir[SUP_PATH_MAX]; /* empty: none */
  int dir_fd;             /* DIR itself, for clone3(CLONE_INTO_CGROUP) */
  int procs_fd;           /* DIR/cgroup.procs, opened before fork so that the child can join */
  int drained;            /* sup_cgroup_drain found it empty (so it stays so: nothing left in it
                           * can fork); sup_cgroup_end then removes it without counting again */
} sup_cgroup;

/* Prints the supervisor's usage line to stderr; returns 2. */
int sup_usage(void);

/* Parses `__supervise` arguments (supervise.h) into A. -1: not valid. */
int sup_parse_args(int argc, char **argv, sup_args *a);

/* Makes the trial's cgroup, a child of our own, when cgroup v2 is there and writable (and
 * WANTED); otherwise leaves CG empty and says nothing (containers often allow none). */
void sup_cgroup_begin(sup_cgroup *cg, int wanted);

/* Looks up, once per process, where trial cgroups go (sup_cgroup_begin does when needed), and
 * removes the stale trial cgroups there then; the fork server calls it first, so that what it
 * forks inherits the answer and none of its spares repeats the scan. */
void sup_cgroup_prime(void);
/* Removes the stale trial cgroups (empty, of a process that no longer exists) again: the fork
 * server calls it when one of its supervisors died of a signal, which may have left its own. */
void sup_cgroup_sweep(void);

/* Kills what is still in the trial's cgroup (cgroup.kill, kernel 5.14+), waits for it to
 * empty and removes it. Returns how many processes were still in it. */
int sup_cgroup_end(sup_cgroup *cg);
/* Empties the trial's cgroup: when processes are still in it, kills them and removes it
 * (sup_cgroup_end); when it is empty, leaves its removal to sup_cgroup_end after the trial's
 * end is reported. Returns how many were still in it. (supervise_cgroup.c, as the above.) */
int sup_cgroup_drain(sup_cgroup *cg);

/* The signals the supervisor takes with sigtimedwait() rather than by their default action. */
void sup_watched_signals(sigset_t *set);

/* The supervisor once it leads its own group with the watched signals blocked (OLD: the mask
 * the command gets) and its parent's death is asked for: contain, start, watch. MADE: its
 * cgroup when already made (a spare makes it ahead; with A->again it is left made, or emptied
 * when it could not be kept), else NULL. */
int supervise_run(sup_args *a, const sigset_t *old, sup_cgroup *made);

/* The fork server (supervise.h, SUPERVISE_SERVER_ARG) on socket SOCK to the orchestrator
 * BOSS. Returns when the orchestrator is gone. */
int supervise_server_main(int sock, pid_t boss);

#endif
