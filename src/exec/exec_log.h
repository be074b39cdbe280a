/* A trial's log file: opened without following a link planted in its place, and made ahead of
 * the trial that needs it (exec_log.c). */
#ifndef FLAGTUNE_EXEC_LOG_H
#define FLAGTUNE_EXEC_LOG_H
#include <stddef.h>

/* One unnamed file (O_TMPFILE) kept for the next log, or none (fd -1). Zero it with
 * EXEC_LOG_SPARE_INIT; free it with exec_log_spare_free. */
typedef struct exec_log_spare {
  int fd;  /* the unnamed file, -1 when none is held */
  int off; /* this file system (or kernel) cannot make or name one: none is made again */
} exec_log_spare;
#define EXEC_LOG_SPARE_INIT \
  { -1, 0 }

/* Opens PATH for a new log and returns its descriptor, or -1 with WHY (N bytes) filled. The
 * file is created exclusively in its directory, opened once by a descriptor: a directory that
 * others may write without the sticky bit is refused, an existing entry is replaced only when
 * it is our own regular file with one link (an earlier run's log), a character device
 * (/dev/null) is written in place. With SPARE (may be NULL) holding a file, that file is given
 * PATH's name instead of a new one made: the descriptor returned is then the spare's, which is
 * left empty. */
int exec_log_open(const char *path, exec_log_spare *spare, char *why, size_t n);

/* Makes SPARE's unnamed file in the directory of PATH (the log just opened) when it holds
 * none: the inode's allocation, on ext4 a scan past every inode freed in the last minute, then
 * happens while a trial runs, not between one trial's end and the next start. A failure leaves
 * SPARE empty (the next log is made as usual). */
void exec_log_spare_make(exec_log_spare *spare, const char *path);

/* Closes SPARE's file (an unnamed file is gone with its last descriptor). */
void exec_log_spare_free(exec_log_spare *spare);
#endif
