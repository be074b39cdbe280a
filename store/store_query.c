/* The store: `flagtune query`, one read-only statement from the user under a guard (an
 * authorizer that refuses writes, attaches and state-changing pragmas; a deadline, a heap
 * limit and a cap on the result's size; fts3_tokenizer off). Must not call up into other
 * modules. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "store_impl.h"
#include "store_qfunc.h"

/* ---- read-only queries ---- */

typedef struct {
  char what[96]; /* what the authorizer refused, for the message */
} query_guard;

/* True when NAME is a word of LIST (" a b c "). */
static int in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
    if (p[-1] == ' ' && p[n] == ' ') return 1;
  return 0;
}

/* Pragmas that only read: the first list may take an argument (a table name, a count),
 * the second only without one (with one, they set). */
static int pragma_readonly(const char *name, const char *arg) {
  static const char with_arg[] =
      " table_info table_xinfo index_list index_info index_xinfo foreign_key_list"
      " foreign_key_check integrity_check quick_check table_list ";
  static const char bare[] =
      " user_version schema_version application_id page_count page_size freelist_count"
      " encoding compile_options database_list function_list pragma_list collation_list"
      " module_list data_version foreign_keys synchronous auto_vacuum ";
  char lower[64];
  size_t i = 0;
  for (; i < sizeof lower - 1 && name[i]; i++) lower[i] = (char)tolower((unsigned char)name[i]);
  lower[i] = '\0';
  return in_list(with_arg, lower) || (!arg && in_list(bare, lower));
}

static const char *action_name(int action) {
  static const struct {
    int action;
    const char *name;
  } names[] = {
      {SQLITE_INSERT, "INSERT"},
      {SQLITE_UPDATE, "UPDATE"},
      {SQLITE_DELETE, "DELETE"},
      {SQLITE_ATTACH, "ATTACH"},
      {SQLITE_DETACH, "DETACH"},
      {SQLITE_TRANSACTION, "a transaction"},
      {SQLITE_SAVEPOINT, "a savepoint"},
      {SQLITE_ANALYZE, "ANALYZE"},
      {SQLITE_REINDEX, "REINDEX"},
      {SQLITE_ALTER_TABLE, "ALTER TABLE"},
      {SQLITE_CREATE_INDEX, "CREATE INDEX"},
      {SQLITE_CREATE_TABLE, "CREATE TABLE"},
      {SQLITE_CREATE_TRIGGER, "CREATE TRIGGER"},
      {SQLITE_CREATE_VIEW, "CREATE VIEW"},
      {SQLITE_CREATE_TEMP_INDEX, "CREATE TEMP INDEX"},
      {SQLITE_CREATE_TEMP_TABLE, "CREATE TEMP TABLE"},
      {SQLITE_CREATE_TEMP_TRIGGER, "CREATE TEMP TRIGGER"},
      {SQLITE_CREATE_TEMP_VIEW, "CREATE TEMP VIEW"},
      {SQLITE_DROP_INDEX, "DROP INDEX"},
      {SQLITE_DROP_TABLE, "DROP TABLE"},
      {SQLITE_DROP_TRIGGER, "DROP TRIGGER"},
      {SQLITE_DROP_VIEW, "DROP VIEW"},
      {SQLITE_DROP_TEMP_INDEX, "DROP INDEX"},
      {SQLITE_DROP_TEMP_TABLE, "DROP TABLE"},
      {SQLITE_DROP_TEMP_TRIGGER, "DROP TRIGGER"},
      {SQLITE_DROP_TEMP_VIEW, "DROP VIEW"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].action == action) return names[i].name;
  return "this statement";
}

/* sqlite3_stmt_readonly() lets ATTACH, BEGIN and connection pragmas through (they do not
 * write the file), so the authorizer refuses everything that is not reading. */
static int query_authorizer(void *ctx, int action, const char *a, const char *b, const char *db,
                            const char *trigger) {
  query_guard *g = ctx;
  (void)db;
  (void)trigger;
  switch (action) {
    case SQLITE_FUNCTION: /* fts3_tokenizer(name) returns a pointer into this process */
      if (b && sqlite3_stricmp(b, "fts3_tokenizer") == 0) {
        snprintf(g->what, sizeof g->what, "fts3_tokenizer()");
        return SQLITE_DENY;
      }
      return SQLITE_OK;
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_UPDATE: /* a table-valued pragma registers itself in the in-memory schema */
      if (strcmp(a, "sqlite_master") == 0) return SQLITE_OK;
      break;
    case SQLITE_INSERT: /* CREATE and DROP ask to change the schema table before naming */
    case SQLITE_DELETE: /* themselves: let them, to be refused by their own name next */
      if (strcmp(a, "sqlite_master") == 0 || strcmp(a, "sqlite_temp_master") == 0) return SQLITE_OK;
      break;
    case SQLITE_PRAGMA:
      if (pragma_readonly(a, b)) return SQLITE_OK;
      snprintf(g->what, sizeof g->what, "PRAGMA %.40s%s%.30s", a, b ? " = " : "", b ? b : "");
      return SQLITE_DENY;
    default:
      break;
  }
  if (!g->what[0]) snprintf(g->what, sizeof g->what, "%s", action_name(action));
  return SQLITE_DENY;
}

/* True when TAIL holds only blanks, semicolons and comments. */
static int tail_empty(const char *p) {
  for (;;) {
    while (isspace((unsigned char)*p) || *p == ';') p++;
    if (p[0] == '-' && p[1] == '-') {
      p += strcspn(p, "\n");
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      if (!end) return 1;
      p = end + 2;
    } else {
      return *p == '\0';
    }
  }
}

static int query_prepare(store *s, const char *sql, sqlite3_stmt **st, char **err) {
  query_guard g = {{0}};
  const char *tail = NULL;
  sqlite3_set_authorizer(s->db, query_authorizer, &g);
  int rc = sqlite3_prepare_v2(s->db, sql, -1, st, &tail);
  sqlite3_set_authorizer(s->db, NULL, NULL);
  if (rc != SQLITE_OK && g.what[0])
    return diag_set(err, FT_EINPUT, "query is read-only: %s is not allowed", g.what);
  if (rc != SQLITE_OK) return diag_set(err, FT_EINPUT, "query: %s", sqlite3_errmsg(s->db));
  if (!*st) return diag_set(err, FT_EINPUT, "query is empty");
  if (!sqlite3_stmt_readonly(*st))
    rc = diag_set(err, FT_EINPUT, "query is read-only: this statement would change the database");
  else if (!tail_empty(tail))
    rc = diag_set(err, FT_EINPUT, "query must be a single statement (found more: '%.40s')",
                  tail + strspn(tail, " \t\r\n;"));
  if (rc) sqlite3_finalize(*st), *st = NULL;
  return rc;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The progress handler of a query: non-zero interrupts it (SQLITE_INTERRUPT). */
static int query_past_deadline(void *ctx) {
  return now_s() > *(const double *)ctx;
}

/* The limits of one query, and the connection's settings they replace. An endless recursive
 * CTE meets the deadline (a progress handler); zeroblob(1e9) the length limit; a query that
 * holds much memory in SQLite the heap limit (process-wide, so set only while the query
 * runs). A single function call is never interrupted by the deadline: the ones that could
 * run for minutes (printf's repeated characters, instr's naive search) are guarded
 * (store_qfunc.c). The result is not held: store_query hands each row on as it comes.
 * fts3_tokenizer, which returns a pointer into this process, is off on the connection (and
 * refused by the authorizer). */
typedef struct {
  double deadline;
  int old_length;
  sqlite3_int64 old_heap;
  store_qfunc *funcs;
} query_limits;

static void limits_on(store *s, query_limits *q) {
  q->deadline = now_s() + s->query_seconds;
  sqlite3_db_config(s->db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
  int64_t length = s->query_bytes / 4 < INT32_MAX ? s->query_bytes / 4 : INT32_MAX;
  q->old_length = sqlite3_limit(s->db, SQLITE_LIMIT_LENGTH, (int)length);
  q->funcs = store_qfunc_install(s->db, length);
  q->old_heap = sqlite3_hard_heap_limit64(-1);
  sqlite3_hard_heap_limit64(s->query_bytes);
  sqlite3_progress_handler(s->db, 1000, query_past_deadline, &q->deadline);
}

static void limits_off(store *s, const query_limits *q) {
  sqlite3_progress_handler(s->db, 0, NULL, NULL);
  sqlite3_hard_heap_limit64(q->old_heap);
  sqlite3_limit(s->db, SQLITE_LIMIT_LENGTH, q->old_length);
  store_qfunc_remove(s->db, q->funcs);
}

/* The message of a failed step: the limits by name, anything else as SQLite says it. */
static int query_fail(store *s, int rc, char **err) {
  int mib = (int)(s->query_bytes >> 20);
  if (rc == SQLITE_INTERRUPT)
    return diag_set(err, FT_EINPUT, "query: stopped at the time limit of %g s", s->query_seconds);
  if (rc == SQLITE_NOMEM)
    return diag_set(err, FT_EINPUT, "query: stopped at the memory limit of %d MiB", mib);
  if (rc == SQLITE_TOOBIG)
    return diag_set(err, FT_EINPUT, "query: a value is larger than the limit of %d MiB", mib / 4);
  return diag_set(err, FT_EINPUT, "query: %s", sqlite3_errmsg(s->db));
}

int store_query(store *s, const char *sql, store_query_row fn, void *ud, char **err) {
  sqlite3_stmt *st = NULL;
  query_limits q;
  limits_on(s, &q);
  int rc = query_prepare(s, sql, &st, err);
  if (rc) {
    limits_off(s, &q);
    return rc;
  }
  int n = sqlite3_column_count(st);
  cJSON *cols = cJSON_CreateArray();
  for (int i = 0; i < n; i++)
    cJSON_AddItemToArray(cols, cJSON_CreateString(sqlite3_column_name(st, i)));
  int stopped = fn(cols, NULL, ud) != 0;
  while (!stopped && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    cJSON *row = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(row, store_col_json(st, i));
    /* The time limit is SQLite's own time: a reader that takes its time (a pager) must not
     * use it up, so the deadline moves by the time the row took to be taken. */
    double t0 = now_s();
    stopped = fn(cols, row, ud) != 0;
    q.deadline += now_s() - t0;
    cJSON_Delete(row);
  }
  rc = stopped || rc == SQLITE_DONE ? 0 : query_fail(s, rc, err);
  sqlite3_finalize(st);
  limits_off(s, &q);
  cJSON_Delete(cols);
  return rc;
}
