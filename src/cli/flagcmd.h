/* `flagtune flags`: the flag catalog (lua/catalog.lua) as a listing, one entry explained, and
 * the import of a jaxlib's own flag table (XLA_FLAGS=--help) into the database. */
#ifndef FLAGTUNE_FLAGCMD_H
#define FLAGTUNE_FLAGCMD_H

#include "store.h"

/* Runs `flagtune flags ARGS...`; ARGV starts after "flags". DB_PATH is the database for
 * import and --jaxlib (NULL: --db, else $FLAGTUNE_DB, else ./flagtune.db). Prints the
 * listing or the error and returns the exit code (0, 1 or 2). */
int flagcmd_main(int argc, char **argv, const char *db_path);

/* Parses the table XLA prints for XLA_FLAGS=--help (tsl Flags::Usage: one
 * "\t--name=default\ttype\tdescription" line per flag, a description possibly running on over
 * the next lines) into *ROWS (*N of them). Lines that are not part of the table are ignored.
 * Free with flagcmd_rows_free. Returns 0 (also for no rows). */
int flagcmd_parse_help(const char *text, store_flag_row **rows, int *n);
void flagcmd_rows_free(store_flag_row *rows, int n);

/* A probed flag's verdict. */
enum { PROBE_ACCEPTED = 0, PROBE_UNKNOWN = 1, PROBE_BAD_VALUE = 2 };

/* Reads one probe run's output OUT (stdout and stderr together) for the N flag NAMES (without
 * "--"): a name on XLA's unknown-flag line ("Unknown flag in XLA_FLAGS: ...", or "flags", or
 * "flag(s)") becomes PROBE_UNKNOWN, the flag named by tsl's "Couldn't interpret value V for
 * flag F." PROBE_BAD_VALUE; only entries still PROBE_ACCEPTED in STATE change. SUSPECT (may
 * be NULL) is set for names read from a list in the older, over-inclusive form (jax <= 0.5.0
 * joined XLA's whole argv: empty entries, known flags possible), which a caller confirms one
 * flag at a time. Returns how many entries changed. */
int flagcmd_probe_parse(const char *out, const char *const *names, int n, int *state, int *suspect);

/* Whether NAME matches PATTERN: a glob with * and ? when it has one, else a substring;
 * both case-insensitive. */
int flagcmd_match(const char *pattern, const char *name);

#endif
