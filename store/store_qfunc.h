/* The store's guarded SQL functions for `flagtune query` (store_qfunc.c): printf/format refuse
 * a width or precision over the value limit, instr searches in linear time, so that no single
 * function call outlives the query's time limit. */
#ifndef FLAGTUNE_STORE_QFUNC_H
#define FLAGTUNE_STORE_QFUNC_H

#include <sqlite3.h>
#include <stdint.h>

typedef struct store_qfunc store_qfunc;

/* Installs printf, format and instr on DB, in place of SQLite's own, for values of at most
 * MAX_LEN bytes. The returned guard is the caller's, freed by store_qfunc_remove. */
store_qfunc *store_qfunc_install(sqlite3 *db, int64_t max_len);

/* Gives DB SQLite's own functions back and frees Q (NULL: nothing). No statement of DB may be
 * running. */
void store_qfunc_remove(sqlite3 *db, store_qfunc *q);

#endif
