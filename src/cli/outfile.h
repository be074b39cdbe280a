/* The -o FILE of export, minimize and report: written to a fresh FILE.XXXXXX (mkstemp, so a
 * link planted beside FILE is never followed) and renamed into place only when complete, so
 * a reader never sees half a file and a failed run leaves the old one. */
#ifndef FLAGTUNE_OUTFILE_H
#define FLAGTUNE_OUTFILE_H

#include <stdio.h>

typedef struct {
  FILE *f;    /* where to write: stdout when no path (or "-") was given */
  char *path; /* the destination; NULL for stdout */
  char *tmp;  /* PATH.XXXXXX while open; NULL when PATH is a device or pipe, written in place */
} outfile;

/* Opens a fresh PATH.XXXXXX (PATH NULL or "-": stdout). A directory, a missing directory or no
 * write permission is the user's input (FT_EINPUT, exit 2), said with the reason. */
int outfile_open(outfile *o, const char *path, char **err);

/* Closes it (stdout: flushes it); with KEEP renames the temporary file over PATH, else removes it.
 * A write (the stream's error flag), close or rename that failed is FT_ESYS with the reason. Safe
 * to call on an outfile that did not open. */
int outfile_close(outfile *o, int keep, char **err);

#endif
