/* exec_log: a trial's log named from the spare made ahead of it, and the spare never a way
 * around the log's checks: a name already taken by another's file or a link stays as it is, an
 * earlier log of ours is replaced, a spare on another file system is dropped, and an unused
 * spare leaves no file behind. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "exec_log.h"
#include "test.h"

static char *make_dir(void) {
  char *d = xstrdup("/tmp/ft-exec-log-XXXXXX");
  CHECK(mkdtemp(d) != NULL);
  return d;
}

/* How many entries D holds, . and .. aside. */
static int entries(const char *d) {
  DIR *dir = opendir(d);
  int n = 0;
  for (struct dirent *e; dir && (e = readdir(dir)) != NULL;)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (dir) closedir(dir);
  return n;
}

/* The next log is the spare itself: its descriptor, given the log's name, written through. */
TEST(spare_becomes_the_next_log) {
  char *d = make_dir(), *first = xasprintf("%s/trial-0000.log", d);
  char *next = xasprintf("%s/trial-0001.log", d), why[200] = "";
  exec_log_spare s = EXEC_LOG_SPARE_INIT;
  exec_log_spare_make(&s, first);
  CHECK(s.fd >= 0);
  CHECK_INT(entries(d), 0); /* unnamed until a trial takes it */
  int held = s.fd, fd = exec_log_open(next, &s, why, sizeof why);
  CHECK_INT(fd, held);
  CHECK_INT(s.fd, -1);
  CHECK_INT(write(fd, "step 1\n", 7), 7);
  close(fd);
  struct stat st;
  CHECK_INT(lstat(next, &st), 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK_INT(st.st_nlink, 1);
  CHECK_INT(st.st_size, 7);
  mode_t mask = umask(0);
  umask(mask);
  CHECK_INT(st.st_mode & 0777, 0644 & ~mask);
  CHECK_INT(entries(d), 1);
  exec_log_spare_free(&s);
  free(first);
  free(next);
  test_remove_tree(d);
}

/* A link planted at the log's name is not followed and not replaced, spare or not; the spare
 * is kept for the next log. */
TEST(spare_leaves_a_planted_link_alone) {
  char *d = make_dir(), *log = xasprintf("%s/trial-0001.log", d);
  char *target = xasprintf("%s/victim", d), why[200] = "";
  FILE *f = fopen(target, "w");
  CHECK(f != NULL);
  if (f) fputs("keep\n", f), fclose(f);
  CHECK_INT(symlink(target, log), 0);
  exec_log_spare s = EXEC_LOG_SPARE_INIT;
  exec_log_spare_make(&s, log);
  CHECK(s.fd >= 0);
  CHECK_INT(exec_log_open(log, &s, why, sizeof why), -1);
  CHECK(strstr(why, "not an earlier log of ours") != NULL);
  CHECK(s.fd >= 0);
  struct stat st;
  CHECK_INT(lstat(log, &st), 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK_INT(stat(target, &st), 0);
  CHECK_INT(st.st_size, 5);
  exec_log_spare_free(&s);
  CHECK_INT(s.fd, -1);
  CHECK_INT(entries(d), 2);
  free(log);
  free(target);
  test_remove_tree(d);
}

/* An earlier run's log of ours under the name is replaced by a new, empty one. */
TEST(spare_replaces_an_earlier_log_of_ours) {
  char *d = make_dir(), *log = xasprintf("%s/trial-0001.log", d), why[200] = "";
  FILE *f = fopen(log, "w");
  CHECK(f != NULL);
  if (f) fputs("an earlier run\n", f), fclose(f);
  exec_log_spare s = EXEC_LOG_SPARE_INIT;
  exec_log_spare_make(&s, log);
  int fd = exec_log_open(log, &s, why, sizeof why);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  struct stat st;
  CHECK_INT(lstat(log, &st), 0);
  CHECK_INT(st.st_size, 0);
  CHECK_INT(entries(d), 1);
  exec_log_spare_free(&s);
  free(log);
  test_remove_tree(d);
}

/* A spare made on another file system cannot take the name: the log is made as usual and the
 * spare dropped, so that the next one is made beside the logs. */
TEST(spare_on_another_file_system_is_dropped) {
  char *d = make_dir(), *log = xasprintf("%s/trial-0001.log", d), why[200] = "";
  struct stat a, b;
  if (stat(d, &a) != 0 || stat("/dev/shm", &b) != 0 || a.st_dev == b.st_dev) {
    fprintf(stderr, "skipped: /dev/shm is not another file system here\n");
  } else {
    exec_log_spare s = EXEC_LOG_SPARE_INIT;
    exec_log_spare_make(&s, "/dev/shm/trial-0000.log");
    CHECK(s.fd >= 0);
    int fd = exec_log_open(log, &s, why, sizeof why);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_INT(s.fd, -1);
    CHECK_INT(s.off, 0);
    CHECK_INT(entries(d), 1);
  }
  free(log);
  test_remove_tree(d);
}

/* A spare no trial took leaves nothing behind, and one already held is not made again. */
TEST(unused_spare_leaves_no_file) {
  char *d = make_dir(), *log = xasprintf("%s/trial-0000.log", d);
  exec_log_spare s = EXEC_LOG_SPARE_INIT;
  exec_log_spare_make(&s, log);
  int held = s.fd;
  exec_log_spare_make(&s, log);
  CHECK_INT(s.fd, held);
  exec_log_spare_free(&s);
  CHECK_INT(s.fd, -1);
  CHECK_INT(entries(d), 0);
  free(log);
  test_remove_tree(d);
}
