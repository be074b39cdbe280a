/* `flagtune flags`: lists and explains the flag catalog (lua/catalog.lua, read through the Lua
 * host), parses the table a jaxlib prints for XLA_FLAGS=--help and keeps it in the database per
 * jaxlib version, and compares the catalog with such a list. Owns only this command's
 * arguments and output; the catalog's content is Lua data and every SQL statement is store's. */
#include "flagcmd.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <lauxlib.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "hardware.h"
#include "json.h"
#include "lhost.h"
#include "trialcfg.h"

/* Budget for the catalog's load and the did-you-mean search (both well under it). */
#define LUA_BUDGET 50000000L

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

static const char *USAGE =
    "usage: flagtune flags [PATTERN] [--jaxlib V] [--db PATH] [--json]\n"
    "       flagtune flags show NAME [--json]\n"
    "       flagtune flags import (--file HELP.txt | --command \"CMD\") [--jaxlib V] [--db PATH]\n"
    "       flagtune flags probe --command \"CMD\" (NAME... | --catalog) [--timeout S] [-q]\n"
    "\n"
    "Lists the catalog's flags and variables whose name matches PATTERN (a substring, or a glob\n"
    "with * and ?): name, type, default, backend and a one-line description. `show` explains one\n"
    "entry. `import` reads the table a jaxlib prints for XLA_FLAGS=--help (from a file, or by\n"
    "running CMD with XLA_FLAGS=--help) and stores it for jaxlib V (default: the version\n"
    "`python3 -c \"import jax, jaxlib; ...\"` reports); `--jaxlib V` then marks the catalog flags\n"
    "its table lists and those it does not (a table can be partial: jaxlib 0.11.2 lists 75).\n"
    "`probe` runs CMD (something short that starts the XLA backend, e.g. python3 -c \"import\n"
    "jax; jax.devices()\") with the NAMEd flags (--catalog: every non-TPU flag of the catalog)\n"
    "in XLA_FLAGS and reports which ones that XLA refuses as unknown (or whose value it cannot\n"
    "parse), one line per flag. It prints a line per run on stderr (not with -q), stops a run\n"
    "after --timeout S seconds (default 300; such a run is no verdict), and on SIGINT or\n"
    "SIGTERM stops the running command and prints the verdicts so far, 'undecided' for the\n"
    "rest (exit 130 or 143).\n";

/* ---- parsing XLA's help table ---- */

static const char *const HELP_TYPES[] = {"bool", "int32", "int64", "float", "string", NULL};

static int known_type(const char *t) {
  for (int i = 0; HELP_TYPES[i]; i++)
    if (strcmp(t, HELP_TYPES[i]) == 0) return 1;
  return 0;
}

static void rtrim(char *s) {
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
}

/* "\t--name=default   \ttype\tdescription" (LINE modified) into R; 0 when it is not one. */
static int help_row(char *line, store_flag_row *r) {
  char *p = line;
  while (*p == ' ' || *p == '\t') p++;
  if (strncmp(p, "--", 2) != 0) return 0;
  char *tab1 = strchr(p, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
  if (!tab2) return 0;
  *tab1 = *tab2 = '\0';
  rtrim(p);
  rtrim(tab1 + 1);
  char *eq = strchr(p, '=');
  if (!eq || !known_type(tab1 + 1)) return 0;
  *eq = '\0';
  const char *name = p + 2, *def = eq + 1;
  if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name)) return 0;
  size_t dl = strlen(def);
  if (dl >= 2 && def[0] == '"' && def[dl - 1] == '"') def++, dl -= 2;
  char *desc = tab2 + 1;
  rtrim(desc);
  r->name = xstrdup(name);
  r->type = xstrdup(tab1 + 1);
  r->default_value = xstrndup(def, dl);
  r->description = xstrdup(desc);
  return 1;
}

/* A glog line ("I0000 00:00:...", "W1122 ..."), a usage header or a Python log: never part
 * of a description that runs on over several lines. */
static int is_noise(const char *line) {
  if (strchr("IWEF", line[0]) && isdigit((unsigned char)line[1])) return 1;
  return strncmp(line, "usage:", 6) == 0 || strncmp(line, "Flags:", 6) == 0 ||
         strncmp(line, "Traceback", 9) == 0;
}

static void append_desc(store_flag_row *r, const char *more) {
  char *d = xasprintf("%s%s%s", r->description, *r->description ? " " : "", more);
  free((char *)r->description);
  r->description = d;
}

int flagcmd_parse_help(const char *text, store_flag_row **rows, int *n) {
  int cap = 0, in_row = 0;
  *rows = NULL;
  *n = 0;
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    char *copy = xstrndup(line, nl ? (size_t)(nl - line) : strlen(line));
    if (*n == cap) *rows = xrealloc(*rows, (size_t)(cap = cap * 2 + 64) * sizeof **rows);
    store_flag_row r = {0};
    if (help_row(copy, &r)) {
      (*rows)[(*n)++] = r;
      in_row = 1;
    } else {
      rtrim(copy);
      char *t = copy + strspn(copy, " \t");
      if (!*t || is_noise(t))
        in_row = 0;
      else if (in_row)
        append_desc(&(*rows)[*n - 1], t);
    }
    free(copy);
    line = nl ? nl + 1 : NULL;
  }
  return 0;
}

void flagcmd_rows_free(store_flag_row *rows, int n) {
  for (int i = 0; i < n; i++) {
    free((char *)rows[i].name);
    free((char *)rows[i].type);
    free((char *)rows[i].default_value);
    free((char *)rows[i].description);
  }
  free(rows);
}

/* ---- matching ---- */

static char *lower(const char *s) {
  char *c = xstrdup(s);
  for (char *p = c; *p; p++) *p = (char)tolower((unsigned char)*p);
  return c;
}

int flagcmd_match(const char *pattern, const char *name) {
  if (!pattern || !*pattern) return 1;
  char *p = lower(pattern), *s = lower(name);
  int m = strpbrk(p, "*?[") ? fnmatch(p, s, 0) == 0 : strstr(s, p) != NULL;
  free(p);
  free(s);
  return m;
}

/* ---- the catalog through Lua ---- */

/* A new host with the catalog array on top of its stack. */
static int catalog_open(lhost **h, char **err) {
  int rc = lhost_new(h, err);
  if (rc == 0) rc = lhost_require(*h, "catalog", err);
  if (rc == 0 && lua_type(lhost_state(*h), -1) != LUA_TTABLE)
    rc = diag_set(err, FT_ELUA, "lua/catalog.lua did not return a table");
  return rc;
}

/* T[KEY] as display text (new string): '' for "", booleans and numbers as XLA writes them,
 * lists joined with ", "; NULL when absent. */
static char *field_text(lua_State *L, int t, const char *key) {
  int type = lua_getfield(L, t, key);
  char *out = NULL;
  if (type == LUA_TBOOLEAN) {
    out = xstrdup(lua_toboolean(L, -1) ? "true" : "false");
  } else if (type == LUA_TNUMBER && lua_isinteger(L, -1)) {
    out = xasprintf("%lld", (long long)lua_tointeger(L, -1));
  } else if (type == LUA_TNUMBER) {
    out = xasprintf("%.10g", lua_tonumber(L, -1));
  } else if (type == LUA_TSTRING) {
    out = xstrdup(*lua_tostring(L, -1) ? lua_tostring(L, -1) : "''");
  } else if (type == LUA_TTABLE) {
    out = xstrdup("");
    int n = (int)lua_rawlen(L, -1), top = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
      lua_rawgeti(L, top, i);
      const char *v = lua_type(L, -1) == LUA_TBOOLEAN ? (lua_toboolean(L, -1) ? "true" : "false")
                                                      : luaL_tolstring(L, -1, NULL);
      char *next = xasprintf("%s%s%s", out, i > 1 ? " | " : "", *v ? v : "''");
      free(out);
      out = next;
      lua_settop(L, top);
    }
  }
  lua_pop(L, 1);
  return out;
}

/* The entry of the catalog (at CAT) named NAME pushed, or 0 with nothing pushed. */
static int find_entry(lua_State *L, int cat, const char *name) {
  int n = (int)lua_rawlen(L, cat);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, cat, i);
    lua_getfield(L, -1, "name");
    int same = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), name) == 0;
    lua_pop(L, 1);
    if (same) return 1;
    lua_pop(L, 1);
  }
  return 0;
}

/* util.did_you_mean(NAME, every catalog name) as a new string, or NULL. */
static char *suggest(lhost *h, int cat, const char *name) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  char *err = NULL, *hint = NULL;
  if (lhost_require(h, "util", &err) == 0) {
    lua_getfield(L, -1, "did_you_mean");
    lua_pushstring(L, name);
    lua_newtable(L);
    int n = (int)lua_rawlen(L, cat);
    for (int i = 1; i <= n; i++) {
      lua_rawgeti(L, cat, i);
      lua_getfield(L, -1, "name");
      lua_rawseti(L, -3, i);
      lua_pop(L, 1);
    }
    /* [util, did_you_mean, name, names] */
    if (lhost_pcall(h, 2, 1, LUA_BUDGET, &err) == 0 && lua_type(L, -1) == LUA_TSTRING)
      hint = xstrdup(lua_tostring(L, -1));
  }
  free(err);
  lua_settop(L, top);
  return hint;
}

/* ---- the imported list of a jaxlib ---- */

static const char *db_of(const fargs *a, const char *db_path) {
  if (a->db) return a->db;
  if (db_path) return db_path;
  const char *env = getenv("FLAGTUNE_DB");
  return env && *env ? env : "flagtune.db";
}

/* The flag names imported for JAXLIB as a cJSON object used as a set; FT_EINPUT when none. */
static int jaxlib_set(const char *db, const char *jaxlib, cJSON **set, char **err) {
  store *s = NULL;
  cJSON *list = NULL;
  int rc = store_open(db, STORE_READONLY, &s, err);
  if (rc == 0) rc = store_flags_list(s, jaxlib, &list, err);
  store_close(s);
  if (rc == 0 && cJSON_GetArraySize(list) == 0)
    rc = diag_set(err, FT_EINPUT,
                  "no flag list imported for jaxlib %s in %s: run `flagtune flags import "
                  "--jaxlib %s --command \"...\"` first",
                  jaxlib, db, jaxlib);
  if (rc != 0) {
    cJSON_Delete(list);
    return rc;
  }
  *set = cJSON_CreateObject();
  const cJSON *it;
  cJSON_ArrayForEach(it, list) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
    if (cJSON_IsString(name)) cJSON_AddTrueToObject(*set, name->valuestring);
  }
  cJSON_Delete(list);
  return 0;
}

/* How the entry on top of the stack stands in jaxlib SET: "yes", "unlisted", or "-" for what
 * a jaxlib's XLA_FLAGS table cannot hold (variables, libtpu flags). "unlisted", not
 * "missing": the table can be partial. jaxlib 0.11.2 printed 75 flags for XLA_FLAGS=--help
 * (tests/data/xla_help_jaxlib_0.11.2.txt, captured on an H200) while it ran trials with
 * flags that table leaves out (xla_gpu_enable_command_buffer, the collective combine
 * thresholds), so only `flags probe` can say that XLA refuses a flag. */
static const char *jaxlib_mark(lua_State *L, const cJSON *set, const char *name) {
  char *kind = field_text(L, lua_gettop(L), "kind");
  char *backend = field_text(L, lua_gettop(L), "backend");
  const char *m = "-";
  if (kind && strcmp(kind, "flag") == 0 && !(backend && strcmp(backend, "tpu") == 0))
    m = cJSON_GetObjectItemCaseSensitive(set, name) ? "yes" : "unlisted";
  free(kind);
  free(backend);
  return m;
}

/* ---- flags [PATTERN] ---- */

static void print_row(lua_State *L, int e, const char *mark) {
  char *name = field_text(L, e, "name"), *type = field_text(L, e, "type");
  char *def = field_text(L, e, "default"), *backend = field_text(L, e, "backend");
  char *desc = field_text(L, e, "desc"), *dep = field_text(L, e, "deprecated");
  char *until = field_text(L, e, "until_");
  if (def && strlen(def) > 24) strcpy(def + 21, "...");
  printf("%-56s %-6s %-24s %-7s ", name, type ? type : "-", def ? def : "-",
         backend ? backend : "-");
  if (mark) printf("%-8s ", mark);
  printf("%s%s\n", dep || until ? "[removed/deprecated] " : "", desc ? desc : "");
  free(name), free(type), free(def), free(backend), free(desc), free(dep), free(until);
}

static void print_header(const fargs *a, const cJSON *set) {
  printf("%-56s %-6s %-24s %-7s ", "NAME", "TYPE", "DEFAULT", "BACKEND");
  if (set) printf("%-8s ", a->jaxlib);
  printf("DESCRIPTION\n");
}

static int cmd_list(const fargs *a, const char *db_path) {
  lhost *h = NULL;
  cJSON *set = NULL, *out = a->json ? cJSON_CreateArray() : NULL;
  char *err = NULL;
  int rc = catalog_open(&h, &err), shown = 0, missing = 0;
  if (rc == 0 && a->jaxlib) rc = jaxlib_set(db_of(a, db_path), a->jaxlib, &set, &err);
  lua_State *L = rc == 0 ? lhost_state(h) : NULL;
  int cat = L ? lua_gettop(L) : 0, n = L ? (int)lua_rawlen(L, cat) : 0;
  for (int i = 1; rc == 0 && i <= n; i++) {
    lua_rawgeti(L, cat, i);
    char *name = field_text(L, lua_gettop(L), "name");
    if (name && flagcmd_match(a->pos, name)) {
      const char *mark = set ? jaxlib_mark(L, set, name) : NULL;
      missing += mark && strcmp(mark, "unlisted") == 0;
      shown++;
      if (out) {
        cJSON *o = json_from_lua(L, lua_gettop(L));
        if (mark) cJSON_AddStringToObject(o, "in_jaxlib", mark);
        cJSON_AddItemToArray(out, o);
      } else {
        if (shown == 1) print_header(a, set); /* none when nothing matches */
        print_row(L, lua_gettop(L), mark);
      }
    }
    free(name);
    lua_pop(L, 1);
  }
  if (rc == 0 && out) {
    char *s = json_print_text(out, 1);
    printf("%s\n", s);
    free(s);
  } else if (rc == 0 && set && shown > 0) {
    printf(
        "%d of %d listed catalog flags are not in jaxlib %s's XLA_FLAGS=--help table; a "
        "jaxlib's table can be partial (0.11.2 lists 75 flags and accepts others): `flagtune "
        "flags probe --command CMD NAME...` asks XLA which it refuses\n",
        missing, shown, a->jaxlib);
  }
  if (rc == 0 && shown == 0) diag_warn("no catalog entry matches '%s'", a->pos);
  cJSON_Delete(out);
  cJSON_Delete(set);
  lhost_free(h);
  if (rc != 0) diag_error(err);
  free(err);
  /* Like grep: nothing found is exit 1, so a script can tell. */
  return rc != 0 ? diag_exit_code(rc) : shown == 0 && a->pos ? 1 : 0;
}

/* ---- flags show NAME ---- */

static const char *const SHOW_FIELDS[] = {
    "name",       "kind",  "backend", "type",       "default",    "values",   "recommended",
    "candidates", "desc",  "source",  "deprecated", "renamed_to", "requires", "overrides",
    "notes",      "since", "until_",  "probe",      "tags",       NULL};

static int cmd_show(const fargs *a) {
  lhost *h = NULL;
  char *err = NULL;
  int rc = catalog_open(&h, &err);
  if (rc == 0) {
    lua_State *L = lhost_state(h);
    int cat = lua_gettop(L);
    if (!find_entry(L, cat, a->pos)) {
      char *hint = suggest(h, cat, a->pos);
      rc = hint ? diag_set(&err, FT_EINPUT, "unknown flag '%s' (did you mean '%s'?)", a->pos, hint)
                : diag_set(&err, FT_EINPUT, "unknown flag '%s' (see `flagtune flags`)", a->pos);
      free(hint);
    } else if (a->json) {
      cJSON *o = json_from_lua(L, lua_gettop(L));
      char *s = json_print_text(o, 1);
      printf("%s\n", s);
      free(s);
      cJSON_Delete(o);
    } else {
      for (int i = 0; SHOW_FIELDS[i]; i++) {
        char *v = field_text(L, lua_gettop(L), SHOW_FIELDS[i]);
        if (v) printf("%-12s %s\n", SHOW_FIELDS[i], v);
        free(v);
      }
    }
  }
  lhost_free(h);
  if (rc != 0) diag_error(err);
  free(err);
  return diag_exit_code(rc);
}

/* ---- flags import ---- */

static char *read_text(const char *path, char **err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_set(err, FT_EINPUT, "cannot read %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 0, n = 0, r;
  char *buf = NULL;
  do {
    if (n + 4096 > cap) buf = xrealloc(buf, cap = cap * 2 + 4096);
    r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
  } while (r > 0);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* Runs CMD through the shell with XLA_FLAGS set to FLAGS, stdout and stderr together;
 * *status (may be NULL) receives pclose's status. */
static char *run_with_flags(const char *cmd, const char *flags, int *status, char **err) {
  char *quoted = trialcfg_shell_quote(flags);
  char *full = xasprintf("XLA_FLAGS=%s %s 2>&1", quoted, cmd);
  char *out = hardware_capture(full, status);
  if (!out) diag_set(err, FT_ESYS, "cannot run %s: %s", cmd, strerror(errno));
  free(quoted);
  free(full);
  return out;
}

/* Runs CMD with XLA_FLAGS=--help. The exit status is not judged: a jaxlib may exit 0 or
 * abort after printing the table. */
static char *run_help(const char *cmd, char **err) {
  return run_with_flags(cmd, "--help", NULL, err);
}

/* Catalog flags (not TPU) this list lacks, and listed flags the catalog lacks. */
static void compare(lhost *h, const store_flag_row *rows, int n, int *missing, int *unknown) {
  lua_State *L = lhost_state(h);
  int cat = lua_gettop(L), len = (int)lua_rawlen(L, cat);
  cJSON *set = cJSON_CreateObject();
  for (int i = 0; i < n; i++)
    if (!cJSON_GetObjectItemCaseSensitive(set, rows[i].name))
      cJSON_AddTrueToObject(set, rows[i].name);
  *missing = *unknown = 0;
  for (int i = 1; i <= len; i++) {
    lua_rawgeti(L, cat, i);
    char *name = field_text(L, lua_gettop(L), "name");
    if (name && strcmp(jaxlib_mark(L, set, name), "unlisted") == 0) (*missing)++;
    if (name) cJSON_DeleteItemFromObjectCaseSensitive(set, name);
    free(name);
    lua_pop(L, 1);
  }
  *unknown = cJSON_GetArraySize(set);
  cJSON_Delete(set);
}

static int import_rows(const fargs *a, const char *db, const char *jaxlib, char **err) {
  char *text = a->file ? read_text(a->file, err) : run_help(a->command, err);
  if (!text) return a->file ? FT_EINPUT : FT_ESYS;
  store_flag_row *rows = NULL;
  int n = 0, missing = 0, unknown = 0, rc;
  flagcmd_parse_help(text, &rows, &n);
  free(text);
  if (n == 0) {
    rc = diag_set(err, FT_EINPUT,
                  "no XLA flag table in %s: a jaxlib prints it for XLA_FLAGS=--help when its "
                  "backend starts (e.g. --command \"python3 -c 'import jax; jax.devices()'\"); "
                  "older jaxlibs ignore --help",
                  a->file ? a->file : "the command's output");
  } else {
    store *s = NULL;
    lhost *h = NULL;
    rc = store_open(db, 0, &s, err);
    if (rc == 0) rc = store_flags_import(s, jaxlib, rows, n, err);
    store_close(s);
    if (rc == 0 && catalog_open(&h, NULL) == 0) compare(h, rows, n, &missing, &unknown);
    lhost_free(h);
    if (rc == 0)
      printf(
          "imported %d flags of jaxlib %s into %s: %d catalog flags are not in its table, "
          "%d of its flags are not in the catalog\n",
          n, jaxlib, db, missing, unknown);
    if (rc == 0 && missing > 0)
      printf(
          "a jaxlib's --help table can be partial (0.11.2 lists 75 flags and accepts others): "
          "`flagtune flags probe --command CMD NAME...` asks XLA which flags it refuses\n");
  }
  flagcmd_rows_free(rows, n);
  return rc;
}

static int cmd_import(const fargs *a, const char *db_path) {
  char *err = NULL, *probed = NULL;
  int rc = 0;
  if (!a->file == !a->command)
    rc = diag_set(&err, FT_EINPUT, "flags import needs --file HELP.txt or --command \"CMD\"");
  const char *jaxlib = a->jaxlib;
  if (rc == 0 && !jaxlib) {
    char *sw = hardware_software(NULL, &probed);
    free(sw);
    jaxlib = probed;
    if (!jaxlib)
      rc = diag_set(&err, FT_EINPUT,
                    "flags import: give --jaxlib VERSION (python3 could not tell the jaxlib "
                    "version)");
  }
  if (rc == 0) rc = import_rows(a, db_of(a, db_path), jaxlib, &err);
  free(probed);
  if (rc != 0) diag_error(err);
  free(err);
  return diag_exit_code(rc);
}

/* ---- arguments ---- */

/* ---- probe ---- */

/* T[KEY] as the text XLA_FLAGS would carry (new string): a boolean, number or string; NULL
 * when absent or a table. */
static char *scalar_text(lua_State *L, int t, const char *key) {
  int type = lua_getfield(L, t, key);
  char *v = NULL;
  if (type == LUA_TBOOLEAN)
    v = xstrdup(lua_toboolean(L, -1) ? "true" : "false");
  else if (type == LUA_TNUMBER && lua_isinteger(L, -1))
    v = xasprintf("%lld", (long long)lua_tointeger(L, -1));
  else if (type == LUA_TNUMBER)
    v = xasprintf("%.10g", lua_tonumber(L, -1));
  else if (type == LUA_TSTRING)
    v = xstrdup(lua_tostring(L, -1));
  lua_pop(L, 1);
  return v;
}

/* A value NAME's XLA parses, so that only an unknown name can fail the run: the catalog's
 * `probe` value, else its default, else one by type. A malformed value makes XLA die on it
 * before its unknown-flag check (and older XLAs skip that check). By type, from
 * xla/debug_options_flags.cc of a recent openxla/xla tree (SetterForRepeatedEnum is newer
 * than openxla/xla@1ff3f7d7):
 *   bool  "false": a setter may refuse true where the build lacks the feature
 *         (xla_gpu_enable_libnvptxcompiler's returns false for true unless
 *         IsLibNvPtxCompilerSupported(); jaxlib 0.11.2's wheel refused "true" on an H100);
 *   list  "": SetterForRepeatedEnum clears the list on an empty input and parses "true" as
 *         the enum value <PREFIX>TRUE, which does not exist (jaxlib 0.11.2 refused
 *         xla_gpu_experimental_autotune_backends=true);
 *   enum  its first catalog value; int, bytes, float "0"; string, path "" (a string whose
 *         "" does not parse gives `probe`: the thunk id ranges' ParseIntRangeInclusive,
 *         xla/debug_options_parsers.cc, refuses "").
 * A name the catalog lacks gets "true". */
static char *probe_value(lua_State *L, int cat, const char *name) {
  if (!find_entry(L, cat, name)) return xstrdup("true");
  int e = lua_gettop(L);
  char *v = scalar_text(L, e, "probe");
  if (!v) v = scalar_text(L, e, "default");
  if (!v) {
    char *type = field_text(L, e, "type");
    const char *t = type ? type : "";
    if (strcmp(t, "bool") == 0) {
      v = xstrdup("false");
    } else if (strcmp(t, "enum") == 0) {
      lua_getfield(L, e, "values");
      if (lua_istable(L, -1)) {
        lua_rawgeti(L, -1, 1);
        if (lua_type(L, -1) == LUA_TSTRING) v = xstrdup(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    } else if (strcmp(t, "int") == 0 || strcmp(t, "bytes") == 0 || strcmp(t, "float") == 0) {
      v = xstrdup("0");
    } else if (strcmp(t, "list") == 0 || strcmp(t, "string") == 0 || strcmp(t, "path") == 0) {
      v = xstrdup("");
    }
    free(type);
  }
  lua_pop(L, 1);
  return v ? v : xstrdup("true");
}

/* The first of XLA's unknown-flag texts in OUT: today "Unknown flag in XLA_FLAGS: --x=1" for
 * one flag and "flags" for more (xla/parse_flags_from_env.cc:224), "flags" for any number
 * before XLA commit b727c5cd (jax <= 0.5.0), "flag(s)" in TensorFlow-era builds. Returns the
 * list after the colon (to the end of its line: *LEN) and sets *SUSPECT when the list may
 * name flags XLA did accept: the older code joined its whole argv vector after tsl's
 * Flags::Parse had compacted it, so the list holds empty entries (a doubled or trailing
 * blank) and whatever tokens the vector still held from before. */
static const char *unknown_list(const char *out, size_t *len, int *suspect) {
  static const char *const heads[] = {
      "Unknown flag in XLA_FLAGS:", "Unknown flags in XLA_FLAGS:", "Unknown flag(s) in XLA_FLAGS:"};
  const char *p = NULL;
  int which = -1;
  for (int k = 0; k < 3; k++) {
    const char *q = strstr(out, heads[k]);
    if (q && (!p || q < p)) p = q, which = k;
  }
  if (!p) return NULL;
  p = strchr(p, ':') + 1;
  *len = strcspn(p, "\n");
  size_t body = *len;
  if (body > 0 && p[body - 1] == '\r') body--;
  int empty_entry = body > 1 && p[body - 1] == ' ';
  for (size_t k = 2; k < body && !empty_entry; k++) empty_entry = p[k] == ' ' && p[k - 1] == ' ';
  *suspect = which > 0 && empty_entry;
  return p;
}

/* Whether LIST (LEN bytes) names --NAME as a whole token ("--name" or "--name=..."). */
static int lists_flag(const char *list, size_t len, const char *name) {
  char *tok = xasprintf("--%s", name);
  size_t tl = strlen(tok);
  int found = 0;
  for (const char *q = list; !found && (q = strstr(q, tok)) && q < list + len; q += tl)
    found = q[tl] == '=' || q[tl] == ' ' || q[tl] == '\0' || q[tl] == '\n' || q[tl] == '\r';
  free(tok);
  return found;
}

/* The index in NAMES of the flag that tsl's "Couldn't interpret value V for flag NAME." at P
 * names, or -1. */
static int refused_value_at(const char *p, const char *const *names, int n) {
  const char *f = strstr(p, " for flag ");
  const char *nl = strchr(p, '\n');
  if (!f || (nl && f > nl)) return -1;
  f += strlen(" for flag ");
  for (int i = 0; i < n; i++) {
    size_t l = strlen(names[i]);
    if (strncmp(f, names[i], l) == 0 && (f[l] == '.' || f[l] == '\n' || f[l] == '\0')) return i;
  }
  return -1;
}

/* Whether OUT says XLA could not parse a value: tsl's "Couldn't interpret value V for flag
 * NAME." (naming it: *NAMED set to its index in NAMES, else -1), or only the QCHECK's
 * "Flag parsing failed." that follows it, and that an enum setter's refusal gets alone. */
static int value_refusal(const char *out, const char *const *names, int n, int *named) {
  *named = -1;
  for (const char *p = out; (p = strstr(p, "Couldn't interpret value ")); p++)
    if ((*named = refused_value_at(p, names, n)) >= 0) return 1;
  return strstr(out, "Flag parsing failed.") != NULL;
}

int flagcmd_probe_parse(const char *out, const char *const *names, int n, int *state,
                        int *suspect) {
  int changed = 0, sus = 0;
  size_t len = 0;
  const char *list = out ? unknown_list(out, &len, &sus) : NULL;
  for (int i = 0; list && i < n; i++) {
    if (state[i] != PROBE_ACCEPTED || !lists_flag(list, len, names[i])) continue;
    state[i] = PROBE_UNKNOWN;
    if (suspect) suspect[i] = sus;
    changed++;
  }
  /* tsl's Flags::Parse goes on past a value it cannot parse and logs every one
   * (xla/tsl/util/command_line_flags.cc), so one run can name several. */
  for (const char *p = out; p && (p = strstr(p, "Couldn't interpret value ")); p++) {
    int i = refused_value_at(p, names, n);
    if (i >= 0 && state[i] == PROBE_ACCEPTED) state[i] = PROBE_BAD_VALUE, changed++;
  }
  return changed;
}

/* The probe's state: the flags, their verdicts so far and how each run went. */
typedef struct {
  const fargs *a;
  lua_State *L;
  int cat;
  int *state;     /* PROBE_* per name */
  int *decided;   /* 1 once a run settled it: a refusal, a clean run with it, its lone run */
  int *timed_out; /* 1 when its lone run ran out of time: no verdict */
  int *suspect;   /* refused by a list that may be over-inclusive: to confirm alone */
  int runs;
} probe_ctx;

/* How one run of the command ended. */
enum { RUN_FAILED = 0, RUN_CLEAN = 1, RUN_ERROR = -1, RUN_TIMEOUT = -2, RUN_SIGNAL = -3 };

/* SIGINT or SIGTERM, once one arrived: the probe stops its run and prints what it knows. A
 * second one ends the process at once (as a sweep's does). */
static volatile sig_atomic_t probe_signal;

static void on_probe_signal(int sig) {
  if (probe_signal) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  probe_signal = sig;
}

static void probe_catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_probe_signal; /* no SA_RESTART: poll() returns at once */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Ends the process group PID leads (the run's shell and all it started): SIGTERM, SIGKILL
 * after a second, and reaps PID. */
static void stop_group(pid_t pid) {
  kill(-pid, SIGTERM);
  for (int i = 0; i < 20; i++) {
    if (waitpid(pid, NULL, WNOHANG) == pid) {
      kill(-pid, SIGKILL); /* what the leader left behind */
      return;
    }
    usleep(50000);
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

/* Runs the command through /bin/sh in a process group of its own, with XLA_FLAGS=FLAGS, stdin
 * from /dev/null, stdout and stderr together into *OUT (new string, NULL unless it ended by
 * itself). Stops it after --timeout seconds (RUN_TIMEOUT) or when SIGINT/SIGTERM arrives
 * (RUN_SIGNAL); else RUN_CLEAN when it exited 0, RUN_FAILED otherwise, RUN_ERROR when it
 * could not start (ERR set). */
static int probe_exec(const probe_ctx *p, const char *flags, char **out, char **err) {
  *out = NULL;
  if (probe_signal) return RUN_SIGNAL;
  int fds[2];
  if (pipe(fds) != 0) return diag_set(err, FT_ESYS, "pipe: %s", strerror(errno)), RUN_ERROR;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return diag_set(err, FT_ESYS, "cannot run %s: %s", p->a->command, strerror(errno)), RUN_ERROR;
  }
  if (pid == 0) {
    signal(SIGINT, SIG_DFL); /* a stop sent to the group before the exec ends it, too */
    signal(SIGTERM, SIG_DFL);
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    setenv("XLA_FLAGS", flags, 1);
    execl("/bin/sh", "sh", "-c", p->a->command, (char *)NULL);
    _exit(127);
  }
  setpgid(pid, pid); /* either side may get there first */
  close(fds[1]);
  size_t cap = 8192, n = 0;
  char *buf = xmalloc(cap);
  double deadline = now_s() + p->a->timeout;
  int how = 0, status = 0;
  for (;;) {
    if (probe_signal) {
      how = RUN_SIGNAL;
      break;
    }
    double left = deadline - now_s();
    if (left <= 0) {
      how = RUN_TIMEOUT;
      break;
    }
    struct pollfd pf = {.fd = fds[0], .events = POLLIN};
    int r = poll(&pf, 1, left > 0.2 ? 200 : (int)(left * 1000) + 1);
    if (r <= 0) continue; /* EINTR or no output yet: look at the signal and the clock */
    if (n + 4096 > cap) buf = xrealloc(buf, cap *= 2);
    ssize_t k = read(fds[0], buf + n, cap - n - 1);
    if (k > 0)
      n += (size_t)k;
    else if (k == 0 || errno != EINTR)
      break; /* end of output */
  }
  close(fds[0]);
  buf[n] = '\0';
  /* Its output ended; the shell may still be on its way out (or hanging with its output
   * closed): wait for it under the same clock. */
  while (!how) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (probe_signal)
      how = RUN_SIGNAL;
    else if (now_s() >= deadline)
      how = RUN_TIMEOUT;
    else
      usleep(20000);
  }
  if (how) {
    stop_group(pid);
    free(buf);
    return how;
  }
  kill(-pid, SIGKILL); /* anything it left running in its group */
  *out = buf;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? RUN_CLEAN : RUN_FAILED;
}

/* XLA_FLAGS holding, as --name=value, every NAME still accepted whose IN is set (IN NULL:
 * every one), but for those whose lone run ran out of time (no verdict, likely the hang). */
static char *probe_flags(const probe_ctx *p, const int *in) {
  size_t cap = 256, len = 0;
  char *flags = xmalloc(cap);
  flags[0] = '\0';
  for (int i = 0; i < p->a->n_names; i++) {
    if (p->state[i] != PROBE_ACCEPTED || p->timed_out[i] || (in && !in[i])) continue;
    char *v = probe_value(p->L, p->cat, p->a->names[i]);
    char *tok = trialcfg_flag_token(p->a->names[i], v);
    size_t tl = strlen(tok);
    if (len + tl + 2 > cap) flags = xrealloc(flags, cap = (len + tl + 2) * 2);
    if (len) flags[len++] = ' ';
    memcpy(flags + len, tok, tl + 1);
    len += tl;
    free(tok), free(v);
  }
  return flags;
}

/* One progress line on stderr (not with -q): run K, its flags, what it taught, its time. */
static void probe_note(const probe_ctx *p, int k, const char *what, double t0) {
  diag_note("flags probe: run %d: %d flag%s: %s (%.1f s)", p->runs, k, k == 1 ? "" : "s", what,
            now_s() - t0);
}

/* What a run taught, for the progress line: C names refused, RC how it ended. */
static char *run_summary(const probe_ctx *p, int rc, int unknown, int values) {
  if (rc == RUN_TIMEOUT)
    return xasprintf("timed out after %g s, no verdict (--timeout)", p->a->timeout);
  if (rc == RUN_SIGNAL) return xstrdup("stopped by a signal, no verdict");
  if (unknown || values)
    return xasprintf("%d refused as unknown, %d with a value refused", unknown, values);
  return xstrdup(rc == RUN_CLEAN ? "clean" : "failed without naming a flag");
}

/* One run with the flags still accepted whose IN is set (IN NULL: all of them; NONE: no flag
 * at all). Reads what its output names into the state (unless it timed out or was stopped);
 * when it ran clean and named nothing, its flags are settled as accepted. *CHANGED (may be
 * NULL) gets how many it named. Returns RUN_*. */
static int probe_run(probe_ctx *p, const int *in, int none, int *changed, char **err) {
  int n = p->a->n_names, k = 0;
  int *inc = xcalloc((size_t)n + 1, sizeof *inc);
  for (int i = 0; i < n && !none; i++)
    if (p->state[i] == PROBE_ACCEPTED && !p->timed_out[i] && (!in || in[i])) inc[i] = 1, k++;
  char *flags = none ? xstrdup("") : probe_flags(p, in);
  char *out = NULL;
  double t0 = now_s();
  p->runs++;
  int rc = probe_exec(p, flags, &out, err), c = 0, values = 0;
  free(flags);
  if (out) {
    c = flagcmd_probe_parse(out, p->a->names, n, p->state, p->suspect);
    for (int i = 0; i < n; i++) {
      if (inc[i] && p->state[i] != PROBE_ACCEPTED) p->decided[i] = 1;
      values += inc[i] && p->state[i] == PROBE_BAD_VALUE;
      if (rc == RUN_CLEAN && c == 0 && inc[i]) p->decided[i] = 1;
    }
  }
  if (rc != RUN_ERROR) {
    char *what = run_summary(p, rc, c - values, values);
    probe_note(p, k, what, t0);
    free(what);
  }
  free(out);
  free(inc);
  if (changed) *changed = c;
  return rc;
}

/* Runs flag I alone and takes what that run says as the answer for it: a lone flag cannot
 * be listed for another's sake, and a lone failure with "Flag parsing failed." is its value.
 * A lone run that times out leaves it undecided. 0, or RUN_ERROR / RUN_SIGNAL. */
static int probe_alone(probe_ctx *p, int i, char **err) {
  int *in = xcalloc((size_t)p->a->n_names, sizeof *in), st[1] = {PROBE_ACCEPTED}, named;
  in[i] = 1;
  char *flags = probe_flags(p, in), *out = NULL;
  free(in);
  double t0 = now_s();
  p->runs++;
  int rc = probe_exec(p, flags, &out, err);
  free(flags);
  if (rc == RUN_ERROR) return RUN_ERROR;
  if (out) {
    const char *one[1] = {p->a->names[i]};
    flagcmd_probe_parse(out, one, 1, st, NULL);
    if (st[0] == PROBE_ACCEPTED && rc == RUN_FAILED && value_refusal(out, one, 1, &named))
      st[0] = PROBE_BAD_VALUE;
    p->state[i] = st[0];
    p->decided[i] = 1;
  } else if (rc == RUN_TIMEOUT) {
    p->timed_out[i] = 1;
  }
  char *how = out ? xstrdup(st[0] == PROBE_UNKNOWN     ? "refused as unknown"
                            : st[0] == PROBE_BAD_VALUE ? "value refused"
                                                       : "accepted")
                  : run_summary(p, rc, 0, 0);
  char *what = xasprintf("%s: %s", p->a->names[i], how);
  probe_note(p, 1, what, t0);
  free(how), free(what);
  free(out);
  return rc == RUN_SIGNAL ? RUN_SIGNAL : 0;
}

/* Confirms, one flag at a time, the refusals read from a list that may be over-inclusive.
 * Returns how many turned out accepted, or RUN_ERROR / RUN_SIGNAL. */
static int probe_confirm(probe_ctx *p, char **err) {
  int cleared = 0;
  for (int i = 0; i < p->a->n_names; i++) {
    if (p->state[i] != PROBE_UNKNOWN || !p->suspect[i]) continue;
    p->suspect[i] = 0;
    p->state[i] = PROBE_ACCEPTED;
    p->decided[i] = 0;
    int rc = probe_alone(p, i, err);
    if (rc < 0) return rc;
    cleared += p->state[i] == PROBE_ACCEPTED;
  }
  return cleared;
}

/* Settles the K flags IDX names (still accepted, but their run together failed without
 * naming why, as a list setter's refusal does, or ran out of time) by halves: a half that
 * runs clean is accepted, a half that names flags is run again without them, a failing half
 * is split, and a lone flag is decided alone. About 2 log2(K) runs per culprit instead of K
 * runs. FAILED: the caller's last run had just these flags and failed naming none, so the
 * first split needs no run of its own. 0, or RUN_ERROR / RUN_SIGNAL. */
static int probe_split(probe_ctx *p, const int *idx, int k, int failed, char **err) {
  if (k == 1) return probe_alone(p, idx[0], err);
  int n = p->a->n_names, *in = xcalloc((size_t)n, sizeof *in), rc = 0;
  for (;;) {
    int left = 0, changed = 0;
    for (int j = 0; j < k; j++) left += p->state[idx[j]] == PROBE_ACCEPTED, in[idx[j]] = 1;
    if (left == 0) break;
    int clean = failed ? RUN_FAILED : probe_run(p, in, 0, &changed, err);
    failed = 0;
    if (clean == RUN_ERROR || clean == RUN_SIGNAL) {
      rc = clean;
      break;
    }
    int cleared = probe_confirm(p, err);
    if (cleared < 0) {
      rc = cleared;
      break;
    }
    if (clean == RUN_CLEAN && changed == 0) break;
    if (changed > 0) continue;
    /* Failed (or timed out) without naming a flag: split what is left. */
    int *rest = xcalloc((size_t)k, sizeof *rest), m = 0;
    for (int j = 0; j < k; j++)
      if (p->state[idx[j]] == PROBE_ACCEPTED) rest[m++] = idx[j];
    if (m == 1) rc = probe_alone(p, rest[0], err);
    if (m > 1) {
      rc = probe_split(p, rest, m / 2, 0, err);
      if (rc == 0) rc = probe_split(p, rest + m / 2, m - m / 2, 0, err);
    }
    free(rest);
    break;
  }
  free(in);
  return rc;
}

/* The probe itself: first the command alone (when it fails without flags, no verdict can be
 * read and none is tried), then all flags at once, again without the refused ones until a
 * run names nothing new (an older jaxlib's malformed value hides unknown flags, so a run
 * that refused something does not count as clean); refusals from a suspect list are
 * confirmed one by one; if the last run still failed (or ran out of time), the flags still
 * undecided are settled by halves, and the survivors run together once more. Returns
 * RUN_CLEAN, RUN_FAILED (still failing), 2 (failing with no flags at all), 3 (no flags and
 * out of time), RUN_ERROR or RUN_SIGNAL. */
static int probe_all(probe_ctx *p, char **err) {
  int clean = probe_run(p, NULL, 1, NULL, err);
  if (clean == RUN_TIMEOUT) return 3;
  if (clean == RUN_FAILED) return 2;
  if (clean < 0) return clean;
  int quiet_failure = 0; /* the last run failed naming nothing, with the flags still open */
  for (int round = 0; round <= p->a->n_names; round++) {
    int changed = 0;
    clean = probe_run(p, NULL, 0, &changed, err);
    if (clean == RUN_ERROR || clean == RUN_SIGNAL) return clean;
    int cleared = probe_confirm(p, err);
    if (cleared < 0) return cleared;
    quiet_failure = clean != RUN_CLEAN && changed == 0 && cleared == 0;
    if (changed == 0 && cleared == 0) break;
    clean = RUN_FAILED;
  }
  if (clean == RUN_CLEAN) return RUN_CLEAN;
  int n = p->a->n_names, *idx = xcalloc((size_t)n + 1, sizeof *idx), k = 0;
  for (int i = 0; i < n; i++)
    if (p->state[i] == PROBE_ACCEPTED) idx[k++] = i;
  int rc = k > 0 ? probe_split(p, idx, k, quiet_failure, err) : 0;
  free(idx);
  if (rc < 0) return rc;
  clean = probe_run(p, NULL, 0, NULL, err); /* the verdicts together: a clean run? */
  return clean == RUN_TIMEOUT ? RUN_FAILED : clean;
}

/* Every non-TPU flag of the catalog (on top of L's stack at CAT), in its order: new strings. */
static char **catalog_flags(lua_State *L, int cat, int *n) {
  int len = (int)lua_rawlen(L, cat);
  char **out = xcalloc((size_t)len + 1, sizeof *out);
  *n = 0;
  for (int i = 1; i <= len; i++) {
    lua_rawgeti(L, cat, i);
    char *name = field_text(L, lua_gettop(L), "name");
    char *kind = field_text(L, lua_gettop(L), "kind");
    char *backend = field_text(L, lua_gettop(L), "backend");
    if (name && kind && strcmp(kind, "flag") == 0 && !(backend && strcmp(backend, "tpu") == 0))
      out[(*n)++] = name;
    else
      free(name);
    free(kind), free(backend);
    lua_pop(L, 1);
  }
  return out;
}

static int cmd_probe(fargs *a) {
  if (!a->command || (a->n_names == 0) == !a->catalog) {
    diag_error(a->command && a->catalog
                   ? "flags probe: give NAMEs or --catalog, not both"
                   : "usage: flagtune flags probe --command \"CMD\" (NAME... | --catalog)");
    return 2;
  }
  lhost *h = NULL;
  char *err = NULL;
  if (catalog_open(&h, &err) != 0) return diag_error(err), free(err), lhost_free(h), 1;
  probe_ctx p = {.a = a, .L = lhost_state(h)};
  p.cat = lua_gettop(p.L);
  char **owned = NULL;
  int n_owned = 0;
  if (a->catalog) {
    owned = catalog_flags(p.L, p.cat, &n_owned);
    a->names = (const char **)owned;
    a->n_names = n_owned;
  }
  int n = a->n_names;
  p.state = xcalloc((size_t)n, sizeof *p.state);
  p.decided = xcalloc((size_t)n, sizeof *p.decided);
  p.timed_out = xcalloc((size_t)n, sizeof *p.timed_out);
  p.suspect = xcalloc((size_t)n, sizeof *p.suspect);
  probe_catch_signals();
  int clean = probe_all(&p, &err), rc = 0;
  if (clean == 2)
    err = xasprintf(
        "flags probe: the command fails with XLA_FLAGS empty, so no flag can be judged: run "
        "it by hand (%s) and fix it first",
        a->command);
  if (clean == 3)
    err = xasprintf(
        "flags probe: the command ran out of time (--timeout %g) with XLA_FLAGS empty, so no "
        "flag can be judged: run it by hand (%s), or give a longer --timeout",
        a->timeout, a->command);
  if (clean == RUN_ERROR || clean == 2 || clean == 3) {
    diag_error(err);
    rc = 1;
  } else {
    int partial = clean == RUN_SIGNAL, n_refused = 0, n_values = 0, n_open = 0;
    for (int i = 0; i < n; i++) {
      if (p.state[i] == PROBE_BAD_VALUE) {
        char *v = probe_value(p.L, p.cat, a->names[i]);
        printf("%-60s VALUE REFUSED (this XLA cannot parse '%s')\n", a->names[i], v);
        free(v);
      } else if (p.state[i] == PROBE_UNKNOWN) {
        printf("%-60s REFUSED (unknown to this XLA)\n", a->names[i]);
      } else if (p.timed_out[i] && !p.decided[i]) {
        printf("%-60s undecided (its run timed out after %g s)\n", a->names[i], a->timeout);
      } else if (partial && !p.decided[i]) {
        printf("%-60s undecided\n", a->names[i]);
      } else {
        printf("%-60s accepted\n", a->names[i]);
      }
      n_refused += p.state[i] == PROBE_UNKNOWN;
      n_values += p.state[i] == PROBE_BAD_VALUE;
      n_open += p.state[i] == PROBE_ACCEPTED && !p.decided[i] && (partial || p.timed_out[i]);
    }
    if (clean == RUN_FAILED)
      diag_warn(
          "the probe command failed even without the refused flags: 'accepted' means only "
          "that XLA did not name them");
    printf("%s%d of %d refused", partial ? "partial: " : "", n_refused, n);
    if (n_values) printf(", %d known with a value refused", n_values);
    if (n_open) printf(", %d undecided", n_open);
    printf("\n");
    if (partial) {
      char *msg = xasprintf(
          "flags probe: interrupted by %s after %d runs: the verdicts above are partial "
          "('undecided': not settled yet)",
          probe_signal == SIGINT ? "SIGINT" : "SIGTERM", p.runs);
      diag_error(msg);
      free(msg);
      rc = 128 + probe_signal;
    } else {
      rc = clean == RUN_CLEAN && n_open == 0 ? 0 : 1;
    }
  }
  fflush(stdout);
  free(err);
  free(p.state), free(p.decided), free(p.timed_out), free(p.suspect);
  for (int i = 0; i < n_owned; i++) free(owned[i]);
  free(owned);
  if (a->catalog) a->names = NULL, a->n_names = 0;
  lua_pop(p.L, 1);
  lhost_free(h);
  return rc;
}

/* "--name=value" or "--name value": the value of option NAME at argv[*i], or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, char **err) {
  const char *arg = argv[*i] + 2;
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return NULL;
  if (arg[n] == '=') return arg + n + 1;
  if (arg[n] != '\0') return NULL;
  if (*i + 1 >= argc) {
    diag_set(err, FT_EINPUT, "option --%s needs a value", name);
    return NULL;
  }
  return argv[++*i];
}

/* --timeout S: seconds, a number > 0. */
static int parse_timeout(fargs *a, const char *v, char **err) {
  char *end = NULL;
  errno = 0;
  double t = strtod(v, &end);
  if (end == v || *end || errno || !(t > 0) || t > 1e6)
    return diag_set(err, FT_EINPUT,
                    "flags probe: --timeout needs seconds, a number above 0 (e.g. 300), not '%s'",
                    v);
  a->timeout = t;
  return 0;
}

static int parse_option(fargs *a, int argc, char **argv, int *i, char **err) {
  const char *arg = argv[*i], *v;
  if (strcmp(arg, "--json") == 0) return a->json = 1, 0;
  if (strcmp(arg, "--catalog") == 0) return a->catalog = 1, 0;
  if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) return diag_quiet = 1, 0;
  if ((v = opt_value(argc, argv, i, "timeout", err))) return parse_timeout(a, v, err);
  if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return a->help = 1, 0;
  if ((v = opt_value(argc, argv, i, "jaxlib", err))) return a->jaxlib = v, 0;
  if ((v = opt_value(argc, argv, i, "file", err))) return a->file = v, 0;
  if ((v = opt_value(argc, argv, i, "command", err))) return a->command = v, 0;
  if ((v = opt_value(argc, argv, i, "db", err))) return a->db = v, 0;
  if (err && *err) return FT_EINPUT;
  return diag_set(err, FT_EINPUT, "flags: unknown option '%s' (see `flagtune flags --help`)", arg);
}

static int parse_args(int argc, char **argv, fargs *a, char **err) {
  int i = 0, npos = 0;
  if (argc > 0 && (strcmp(argv[0], "show") == 0 || strcmp(argv[0], "import") == 0 ||
                   strcmp(argv[0], "probe") == 0))
    a->sub = argv[i++];
  int probe = a->sub && strcmp(a->sub, "probe") == 0;
  for (; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1]) {
      int rc = parse_option(a, argc, argv, &i, err);
      if (rc) return rc;
    } else if (probe) {
      if (a->n_names == a->cap_names)
        a->names =
            xrealloc(a->names, (size_t)(a->cap_names = a->cap_names * 2 + 64) * sizeof *a->names);
      a->names[a->n_names++] = argv[i];
    } else if (npos++ == 0) {
      a->pos = argv[i];
    } else {
      return diag_set(err, FT_EINPUT, "flags: unexpected argument '%s'", argv[i]);
    }
  }
  if (a->help) return 0;
  if (a->sub && strcmp(a->sub, "show") == 0 && !a->pos)
    return diag_set(err, FT_EINPUT, "usage: flagtune flags show NAME");
  if (a->sub && strcmp(a->sub, "import") == 0 && a->pos)
    return diag_set(err, FT_EINPUT, "flags import takes no PATTERN: give --file or --command");
  return 0;
}

int flagcmd_main(int argc, char **argv, const char *db_path) {
  fargs a = {.timeout = PROBE_TIMEOUT_S};
  char *err = NULL;
  int rc;
  if (parse_args(argc, argv, &a, &err) != 0) {
    diag_error(err);
    free(err);
    rc = 2;
  } else if (a.help) {
    rc = fputs(USAGE, stdout) < 0;
  } else if (!a.sub) {
    rc = cmd_list(&a, db_path);
  } else if (strcmp(a.sub, "show") == 0) {
    rc = cmd_show(&a);
  } else if (strcmp(a.sub, "probe") == 0) {
    rc = cmd_probe(&a);
  } else {
    rc = cmd_import(&a, db_path);
  }
  free(a.names);
  return rc;
}
