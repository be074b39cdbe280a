/* flagtune-schema: writes build/schema_data.c, the schema a new database gets in one step. It
 * applies every store/NNNN_*.sql migration in order and then store/views.sql to an in-memory
 * database, as store.c's migrate_all does (foreign keys off, one transaction), and keeps the
 * result's CREATE statements (tables, then indexes, triggers and views, each in the order
 * SQLite stored them) as one NUL-terminated C array, `store_schema_sql`, with the schema
 * number it stands for. A new database runs that instead of some fifty statements that add, rebuild
 * and rename, each of which makes SQLite parse the schema again (about 20 ms a new database); a
 * database made by an older flagtune still takes the migrations one by one. A migration that leaves
 * a row behind in an empty database (the snapshot would lose it) fails the build. Usage:
 * flagtune-schema OUT FILE...   (the .sql files of store/; OUT is written only when it changes)
 * Built for the host only; owns nothing at run time. */
#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolbuf.h"

/* The number of ".../NNNN_name.sql", or 0. */
static int migration_number(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int n = 0;
  const char *p = base;
  while (isdigit((unsigned char)*p)) n = n * 10 + (*p++ - '0');
  return p > base && *p == '_' ? n : 0;
}

static int run(sqlite3 *db, const char *sql, const char *what) {
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
  fprintf(stderr, "flagtune-schema: %s: %s\n", what, msg ? msg : "failed");
  sqlite3_free(msg);
  return 1;
}

/* The schema's CREATE statements of TYPE, in the order SQLite stored them, onto OUT. */
static int dump_type(sqlite3 *db, const char *type, buf *out) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db,
                              "SELECT sql FROM sqlite_schema WHERE type = ?1 AND sql IS NOT NULL "
                              "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
                              -1, &st, NULL);
  if (rc == SQLITE_OK) sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const unsigned char *sql = sqlite3_column_text(st, 0);
    int added =
        buf_add(out, sql, (size_t)sqlite3_column_bytes(st, 0)) == 0 && buf_add(out, ";\n", 2) == 0;
    rc = added ? SQLITE_OK : SQLITE_NOMEM;
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE) return 0;
  fprintf(stderr, "flagtune-schema: reading the %s statements: %s\n", type, sqlite3_errmsg(db));
  return 1;
}

/* 1 when a table of the migrated schema holds a row (named on stderr). */
static int holds_rows(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table'", -1, &st,
                         NULL) != SQLITE_OK)
    return 1;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    char *q = sqlite3_mprintf("SELECT 1 FROM \"%w\" LIMIT 1", name);
    sqlite3_stmt *c = NULL;
    if (sqlite3_prepare_v2(db, q, -1, &c, NULL) == SQLITE_OK && sqlite3_step(c) == SQLITE_ROW &&
        strcmp(name, "sqlite_sequence") != 0) {
      fprintf(stderr, "flagtune-schema: the migrations leave a row in %s\n", name);
      found = 1;
    }
    sqlite3_finalize(c);
    sqlite3_free(q);
  }
  sqlite3_finalize(st);
  return found;
}

static int cmp_number(const void *a, const void *b) {
  return migration_number(*(char *const *)a) - migration_number(*(char *const *)b);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: flagtune-schema OUT FILE...\n");
    return 2;
  }
  const char **mig = calloc((size_t)argc, sizeof *mig), *views = NULL;
  int n = 0, latest = 0;
  for (int i = 2; i < argc; i++) {
    const char *base = strrchr(argv[i], '/');
    base = base ? base + 1 : argv[i];
    if (migration_number(argv[i]) > 0)
      mig[n++] = argv[i];
    else if (strcmp(base, "views.sql") == 0)
      views = argv[i];
  }
  qsort(mig, (size_t)n, sizeof *mig, cmp_number);
  for (int i = 0; i < n; i++) {
    if (migration_number(mig[i]) != i + 1) {
      fprintf(stderr, "flagtune-schema: %s: expected migration %d here\n", mig[i], i + 1);
      return 1;
    }
  }
  latest = n;
  if (!views || n == 0) {
    fprintf(stderr, "flagtune-schema: no %s given\n", views ? "migration" : "views.sql");
    return 1;
  }
  sqlite3 *db = NULL;
  int rc = sqlite3_open(":memory:", &db) != SQLITE_OK;
  rc = rc || run(db, "PRAGMA foreign_keys = OFF; BEGIN", "starting");
  for (int i = 0; i <= n && !rc; i++) {
    const char *path = i < n ? mig[i] : views;
    buf sql = {0};
    if (read_file(path, &sql) != 0 || buf_add(&sql, "", 1) != 0) {
      perror(path);
      rc = 1;
    } else {
      rc = run(db, (const char *)sql.p, path);
    }
    free(sql.p);
  }
  rc = rc || run(db, "COMMIT", "committing") || holds_rows(db);
  buf sql = {0}, out = {0};
  const char *types[] = {"table", "index", "trigger", "view"};
  for (int i = 0; i < 4 && !rc; i++) rc = dump_type(db, types[i], &sql);
  sqlite3_close(db);
  free(mig);
  /* As bytes, not a string literal: the text is longer than ISO C asks a compiler to take. */
  char head[256];
  int len =
      snprintf(head, sizeof head,
               "/* Generated by tools/schema.c from the .sql files of store/: do not edit. */\n"
               "const int store_schema_version = %d;\n",
               latest);
  if (!rc) {
    const char *tail = "const char *const store_schema_sql = (const char *)schema;\n";
    buf_add(&out, head, (size_t)len);
    emit_named_array(&out, "schema", &sql);
    rc = buf_add(&out, tail, strlen(tail)) != 0 || write_if_changed(argv[1], &out) != 0;
  }
  free(sql.p);
  free(out.p);
  return rc;
}
