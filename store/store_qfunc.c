/* The store: SQL functions that one call can make run for minutes, guarded for `flagtune query`.
 * A progress handler interrupts a statement only between its steps, never inside one function
 * call, so the query's time limit cannot stop these: printf('%.*c', 2e9, 'x') repeats one
 * character 2e9 times even after the result outgrew the length limit (SQLite 3.40 appends it
 * one by one, 16-32 s), and instr() compares naively (a 64 MiB text against a 32 MiB needle:
 * hours). printf and format refuse a width or precision over the length limit, then run
 * SQLite's own printf on a private in-memory connection; instr searches in linear time
 * (memmem). Must not touch the database's tables or call up into other modules. */
#define _GNU_SOURCE /* memmem */
#include "store_qfunc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

#define QFUNC_MAX_ARGS 127 /* SQLITE_MAX_FUNCTION_ARG's default */

struct store_qfunc {
  sqlite3 *mem;                         /* SQLite's own printf, opened at the first call */
  sqlite3_stmt *st[QFUNC_MAX_ARGS + 1]; /* "SELECT printf(?1, ..., ?N)" by N */
  int64_t max_len;
};

/* The first width or precision of FMT (with the arguments that `*` takes) over MAX, or 0. */
static int64_t oversized(const char *fmt, int argc, sqlite3_value **argv, int64_t max) {
  int arg = 1;
  for (const char *p = fmt; p && *p; p++) {
    if (*p != '%') continue;
    if (*++p == '%') continue;
    while (*p && strchr("-+ #0!,", *p)) p++;
    for (int part = 0; part < 2; part++) { /* the width, then ".precision" */
      if (part == 1 && *p != '.') break;
      if (part == 1) p++;
      int64_t v = 0;
      if (*p == '*') {
        v = arg < argc ? sqlite3_value_int64(argv[arg]) : 0;
        arg++, p++;
      } else {
        while (*p >= '0' && *p <= '9' && v < INT64_MAX / 10) v = v * 10 + (*p++ - '0');
        while (*p >= '0' && *p <= '9') p++;
      }
      if (v < 0) v = v == INT64_MIN ? INT64_MAX : -v;
      if (v > max) return v;
    }
    while (*p == 'l') p++;
    if (!*p) break;
    arg++; /* the conversion's own argument */
  }
  return 0;
}

static sqlite3_stmt *printf_stmt(store_qfunc *q, int argc) {
  if (!q->mem) {
    if (sqlite3_open_v2(":memory:", &q->mem, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) return NULL;
    sqlite3_limit(q->mem, SQLITE_LIMIT_LENGTH, (int)q->max_len);
  }
  if (!q->st[argc]) {
    char sql[16 + 6 * QFUNC_MAX_ARGS] = "SELECT printf(";
    for (int i = 1; i <= argc; i++)
      snprintf(sql + strlen(sql), sizeof sql - strlen(sql), "%s?%d", i > 1 ? "," : "", i);
    strcat(sql, ")");
    if (sqlite3_prepare_v2(q->mem, sql, -1, &q->st[argc], NULL) != SQLITE_OK) return NULL;
  }
  return q->st[argc];
}

static void guarded_printf(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  store_qfunc *q = sqlite3_user_data(ctx);
  if (argc < 1 || argc > QFUNC_MAX_ARGS) {
    sqlite3_result_error(ctx, "printf: bad arguments", -1);
    return;
  }
  const char *fmt = (const char *)sqlite3_value_text(argv[0]);
  int64_t v = oversized(fmt, argc, argv, q->max_len);
  if (v > 0) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "printf: a width or precision of %lld is over the limit of %lld bytes for one value",
             (long long)v, (long long)q->max_len);
    {
      sqlite3_result_error(ctx, msg, -1);
      return;
    }
  }
  sqlite3_stmt *st = printf_stmt(q, argc);
  if (!st) {
    sqlite3_result_error(ctx, "printf: cannot run", -1);
    return;
  }
  for (int i = 0; i < argc; i++) sqlite3_bind_value(st, i + 1, argv[i]);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
  else if (rc == SQLITE_TOOBIG)
    sqlite3_result_error_toobig(ctx);
  else
    sqlite3_result_error(ctx, sqlite3_errmsg(q->mem), -1);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
}

/* instr(X, Y) as SQLite defines it (the 1-based position of Y's first occurrence in X, in
 * characters for text and bytes for two blobs; 0 when absent; NULL for a NULL), in linear
 * time. */
static void guarded_instr(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  int th = sqlite3_value_type(argv[0]), tn = sqlite3_value_type(argv[1]);
  if (th == SQLITE_NULL || tn == SQLITE_NULL) return;
  int blobs = th == SQLITE_BLOB && tn == SQLITE_BLOB;
  const char *h = blobs ? sqlite3_value_blob(argv[0]) : (const char *)sqlite3_value_text(argv[0]);
  int nh = sqlite3_value_bytes(argv[0]);
  const char *n = blobs ? sqlite3_value_blob(argv[1]) : (const char *)sqlite3_value_text(argv[1]);
  int nn = sqlite3_value_bytes(argv[1]);
  if (nn > 0 && (!h || !n)) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (nn == 0) {
    sqlite3_result_int64(ctx, 1);
    return;
  }
  const char *at = memmem(h, (size_t)nh, n, (size_t)nn);
  if (!at) {
    sqlite3_result_int64(ctx, 0);
    return;
  }
  int64_t pos = 1;
  for (const char *p = h; p < at; p++)
    if (blobs || ((unsigned char)*p & 0xC0) != 0x80) pos++;
  sqlite3_result_int64(ctx, pos);
}

store_qfunc *store_qfunc_install(sqlite3 *db, int64_t max_len) {
  store_qfunc *q = xcalloc(1, sizeof *q);
  q->max_len = max_len;
  const int text = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  sqlite3_create_function(db, "printf", -1, text, q, guarded_printf, NULL, NULL);
  sqlite3_create_function(db, "format", -1, text, q, guarded_printf, NULL, NULL);
  sqlite3_create_function(db, "instr", 2, text, q, guarded_instr, NULL, NULL);
  return q;
}

void store_qfunc_remove(sqlite3 *db, store_qfunc *q) {
  if (!q) return;
  sqlite3_create_function(db, "printf", -1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
  sqlite3_create_function(db, "format", -1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
  sqlite3_create_function(db, "instr", 2, SQLITE_UTF8, NULL, NULL, NULL, NULL);
  for (int i = 0; i <= QFUNC_MAX_ARGS; i++) sqlite3_finalize(q->st[i]);
  sqlite3_close(q->mem);
  free(q);
}
