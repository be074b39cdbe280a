/* The -o FILE of export, minimize and report (outfile.h): a temporary file made beside FILE
 * with mkstemp (a fresh name, created exclusively, so a link planted beside FILE is never
 * followed) and renamed over FILE when complete. Must not follow a link it did not ask for. */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"

/* The permissions a plain fopen("w") would have given: mkstemp makes the file 0600. */
static void default_mode(int fd) {
  mode_t mask = umask(0);
  umask(mask);
  (void)fchmod(fd, 0666 & ~mask);
}

int outfile_open(outfile *o, const char *path, char **err) {
  struct stat st;
  memset(o, 0, sizeof *o);
  o->f = stdout;
  if (!path || strcmp(path, "-") == 0) return 0;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    o->f = NULL;
    return diag_set(err, FT_EINPUT, "cannot write %s: it is a directory (name a file)", path);
  }
  /* A device or a pipe (-o /dev/null, -o /dev/stdout, a FIFO) is written in place: renaming
   * a file over it would replace the device node itself. */
  int special = stat(path, &st) == 0 && !S_ISREG(st.st_mode), fd = -1;
  o->f = NULL;
  if (special) {
    o->f = fopen(path, "w");
  } else {
    o->tmp = xasprintf("%s.XXXXXX", path);
    if ((fd = mkstemp(o->tmp)) >= 0) {
      default_mode(fd);
      if (!(o->f = fdopen(fd, "w"))) close(fd), unlink(o->tmp);
    }
  }
  if (!o->f) {
    int e = errno;
    free(o->tmp);
    o->tmp = NULL;
    return diag_set(err, FT_EINPUT, "cannot write %s: %s%s", path, strerror(e),
                    e == ENOENT ? " (is its directory there?)" : "");
  }
  o->path = xstrdup(path);
  return 0;
}

int outfile_close(outfile *o, int keep, char **err) {
  int rc = 0;
  if (!o->path) {
    if (o->f == stdout && (fflush(stdout) != 0 || ferror(stdout)))
      rc = diag_set(err, FT_ESYS, "cannot write to stdout: %s", strerror(errno));
    o->f = NULL;
    return rc;
  }
  int bad = ferror(o->f);
  if (fclose(o->f) != 0 || bad)
    rc = diag_set(err, FT_ESYS, "cannot write %s: %s", o->path, strerror(errno));
  if (o->tmp && rc == 0 && keep && rename(o->tmp, o->path) != 0)
    rc = diag_set(err, FT_ESYS, "cannot write %s: %s", o->path, strerror(errno));
  if (o->tmp && (rc != 0 || !keep)) unlink(o->tmp);
  free(o->tmp);
  free(o->path);
  memset(o, 0, sizeof *o);
  return rc;
}
