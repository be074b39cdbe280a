/* Shared by the two files of `flagtune flags`: src/cli/flagcmd.c (arguments, the listing, show,
 * import) and src/cli/flagprobe.c (`flags probe`). Not an interface for anything else. */
#ifndef FLAGTUNE_FLAGCMD_IMPL_H
#define FLAGTUNE_FLAGCMD_IMPL_H

/* A probe run's time limit when --timeout is not given: a GPU jax starts in seconds, and a
 * run with hundreds of flags took 68 s for 172 on an H100 (jaxlib 0.11.2). */
#define PROBE_TIMEOUT_S 300.0

typedef struct {
  const char *sub;    /* NULL (list), "show", "import" or "probe" */
  const char *pos;    /* PATTERN or NAME */
  const char **names; /* probe: the flags to try (argv's, or the catalog's with --catalog) */
  int n_names, cap_names;
  const char *jaxlib, *file, *command, *db;
  int json, help, catalog;
  double timeout; /* probe: seconds a run may take */
} fargs;

/* `flags probe`: A's --command with A's names (or, with --catalog, every non-TPU catalog
 * flag) in XLA_FLAGS; prints a verdict per flag. Returns the exit code. */
int flagcmd_probe(fargs *a);

#endif
