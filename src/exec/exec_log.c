/* A trial's log file: its safe creation, and the one spare file made ahead of the next trial.
 * Owns the checks that keep a log from following a link planted in its place, and the spare's
 * life: an unnamed file (O_TMPFILE) made once a trial has started, named (linkat) as the next
 * trial's log when that trial starts. Must not write or read a log (exec.c does) and must not
 * leave a file behind: an unnamed file is gone with its descriptor, whatever ends the process. */
#define _GNU_SOURCE /* O_TMPFILE, AT_EMPTY_PATH */
#include "exec_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"

/* PATH's directory, a new string; NULL for a bare name (the current directory). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? xasprintf("%.*s", (int)(slash == path ? 1 : slash - path), path) : NULL;
}

/* Gives SPARE's file the name BASE in DFD and returns its descriptor (SPARE then holds none),
 * or -1 with errno set. Naming a descriptor takes AT_EMPTY_PATH, which older kernels grant only
 * with CAP_DAC_READ_SEARCH (ENOENT otherwise), or its /proc/self/fd link. EEXIST leaves the
 * spare for the caller's next try; a spare that cannot be named here is dropped: one on another
 * file system (EXDEV) is made again beside the next log, and where naming itself is refused
 * (no /proc, EPERM from a sandbox) none is made again, so that no log costs two creations. */
static int link_spare(exec_log_spare *s, int dfd, const char *base) {
  if (!s || s->fd < 0) return -1;
  int rc = linkat(s->fd, "", dfd, base, AT_EMPTY_PATH);
  if (rc != 0 && errno == ENOENT) {
    char proc[48];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
    rc = linkat(AT_FDCWD, proc, dfd, base, AT_SYMLINK_FOLLOW);
    if (rc != 0 && errno == ENOENT && access("/proc/self/fd", F_OK) != 0) s->off = 1;
  }
  if (rc != 0) {
    int e = errno;
    if (e != EEXIST) exec_log_spare_free(s);
    if (e != EEXIST && e != EXDEV && e != ENOENT && e != ENOSPC && e != EDQUOT) s->off = 1;
    errno = e;
    return -1;
  }
  int fd = s->fd;
  s->fd = -1;
  return fd;
}

int exec_log_open(const char *path, exec_log_spare *spare, char *why, size_t n) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  char *dir = dir_of(path);
  int dfd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
  struct stat st;
  if (dfd < 0 || fstat(dfd, &st) != 0) {
    snprintf(why, n, "%s", strerror(errno));
  } else if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
    snprintf(why, n, "its directory is writable by others without the sticky bit (chmod o-w %s)",
             dir ? dir : ".");
  } else {
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    fd = link_spare(spare, dfd, base);
    if (fd < 0) fd = openat(dfd, base, flags, 0644);
    if (fd < 0 && errno == EEXIST && fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1 &&
          unlinkat(dfd, base, 0) == 0)
        fd = openat(dfd, base, flags, 0644);
      else if (S_ISCHR(st.st_mode)) /* a device named as the log (/dev/null): written in place */
        fd = openat(dfd, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0 && errno == EEXIST)
      snprintf(why, n,
               "it exists and is not an earlier log of ours (a link, or another's file): "
               "left as it is");
    else if (fd < 0)
      snprintf(why, n, "%s", strerror(errno));
  }
  if (dfd >= 0) close(dfd);
  free(dir);
  return fd;
}

void exec_log_spare_make(exec_log_spare *spare, const char *path) {
  if (!spare || spare->fd >= 0 || spare->off || !path) return;
  char *dir = dir_of(path);
  spare->fd = open(dir ? dir : ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  /* A file system without unnamed files (EOPNOTSUPP), or a kernel without O_TMPFILE, which
   * reads it as a directory opened for writing (EISDIR): none is asked for again. */
  if (spare->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) spare->off = 1;
  free(dir);
}

void exec_log_spare_free(exec_log_spare *spare) {
  if (spare && spare->fd >= 0) close(spare->fd);
  if (spare) spare->fd = -1;
}
