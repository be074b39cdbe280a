/* A process as Linux's /proc/PID/stat describes it (proc(5)): its state, its parent, its
 * process group and when it started. The one reader of that file: the executor (is it a
 * zombie? which processes are in a dead run's trial group?), the supervisor (its
 * descendants) and the sweep claim (a pid's start time tells a reused pid apart). */
#ifndef FLAGTUNE_PROCSTAT_H
#define FLAGTUNE_PROCSTAT_H

#include <sys/types.h>

typedef struct {
  char state;          /* field 3: R, S, D, Z, T, ... */
  pid_t ppid;          /* field 4 */
  pid_t pgrp;          /* field 5: its process group */
  long long starttime; /* field 22: clock ticks after boot */
} procstat;

/* Reads PID's line. Returns 0, or -1 when the process is gone or the line does not parse.
 * Async-signal-unsafe but allocation-free (open/read only). */
int procstat_read(pid_t pid, procstat *out);

#endif
