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

/* Whether NAME matches PATTERN: a glob with * and ? when it has one, else a substring;
 * both case-insensitive. */
int flagcmd_match(const char *pattern, const char *name);

#endif
