/* The supervisor's entry (supervise.h): `flagtune __supervise ...` (and the flagtune-supervise
 * binary's main) parses its argv and becomes either one trial's supervisor (supervise.c) or the
 * sweep's fork server (supervise_server.c). Calls both; neither calls it. */
#define _GNU_SOURCE /* what strict C11 hides: sigset_t */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "supervise.h"
#include "supervise_impl.h"

int supervise_main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], SUPERVISE_SERVER_ARG) == 0) {
    char *end = NULL, *end2 = NULL;
    long fd = strtol(argv[2], &end, 10);
    long boss = strtol(argv[3], &end2, 10);
    if (*end || *end2 || fd < 3 || fd > 1024 || boss <= 0 || fcntl((int)fd, F_GETFD) < 0)
      return sup_usage();
    return supervise_server_main((int)fd, (pid_t)boss);
  }
  sup_args a;
  if (sup_parse_args(argc, argv, &a) != 0) return sup_usage();
  if (a.parent == 0) a.parent = getppid();
  a.boss = a.parent;
  if (a.report_fd >= 0) fcntl(a.report_fd, F_SETFD, FD_CLOEXEC); /* not the command's */
  /* Lead a group of our own, so that group signals never reach whoever started us. Under
   * the executor (spawned detached) we already do. */
  if (getpgrp() != getpid()) setpgid(0, 0);
  sigset_t set, old;
  sup_watched_signals(&set);
  sigprocmask(SIG_BLOCK, &set, &old);
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != a.parent)
    return 1; /* the parent died before we could ask to be told: start nothing */
  return supervise_run(&a, &old, NULL);
}

#ifdef FLAGTUNE_SUPERVISE_MAIN
/* The dedicated binary (flagtune-supervise, beside flagtune): the same argv as `flagtune
 * __supervise ...`, so that the executor only swaps the program's path. */
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], SUPERVISE_ARG) == 0) return supervise_main(argc - 1, argv + 1);
  return sup_usage();
}
#endif
