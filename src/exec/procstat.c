/* /proc/PID/stat, read once per call with open/read (no stdio, no allocation). The command
 * name in field 2 may hold anything, ")" and spaces included, so fields are counted from the
 * last ')'. Must not keep state or know what the process is. */
#include "procstat.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int procstat_read(pid_t pid, procstat *out) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  int ppid = 0, pgrp = 0;
  if (!p || sscanf(p + 1, " %c %d %d", &out->state, &ppid, &pgrp) != 3) return -1;
  out->ppid = (pid_t)ppid;
  out->pgrp = (pid_t)pgrp;
  /* After ") " come field 3 (state) .. field 22 (starttime): from the space after ')', skip
   * 19 more separators. */
  p++;
  for (int field = 2; field < 21 && p; field++) p = strchr(p + 1, ' ');
  out->starttime = p ? strtoll(p + 1, NULL, 10) : 0;
  return 0;
}
