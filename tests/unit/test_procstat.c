/* procstat: /proc/PID/stat's state, parent and start time, whatever the command's name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procstat.h"
#include "test.h"

TEST(reads_this_process) {
  procstat st;
  CHECK_INT(procstat_read(getpid(), &st), 0);
  CHECK(st.state == 'R' || st.state == 'S');
  CHECK_INT(st.ppid, getppid());
  CHECK(st.starttime > 0);
}

/* A name with ") " in it must not shift the fields; a child's start time is after ours. */
TEST(name_with_paren_and_zombie) {
  procstat self, child;
  CHECK_INT(procstat_read(getpid(), &self), 0);
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_NAME, ") Z 1 2 3", 0, 0, 0);
    _exit(0);
  }
  usleep(200000); /* exited, not yet reaped: a zombie */
  CHECK_INT(procstat_read(pid, &child), 0);
  CHECK(child.state == 'Z');
  CHECK_INT(child.ppid, getpid());
  CHECK(child.starttime >= self.starttime);
  waitpid(pid, NULL, 0);
  CHECK_INT(procstat_read(pid, &child), -1); /* gone */
}
