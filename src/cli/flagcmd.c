/* `flagtune flags`: lists and explains the flag catalog (lua/catalog.lua, read through the Lua
 * host), parses the table a jaxlib prints for XLA_FLAGS=--help and keeps it in the database per
 * jaxlib version, and compares the catalog with such a list. Owns only this command's
 * arguments and output; the catalog's content is Lua data and every SQL statement is store's. */
#include "flagcmd.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "flagcmd_impl.h"
#include "hardware.h"
#include "json.h"
#include "lhost_catalog.h"

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
static const char *jaxlib_mark(lcatalog *c, int e, const cJSON *set, const char *name) {
  char *kind = lcatalog_field(c, e, "kind");
  char *backend = lcatalog_field(c, e, "backend");
  const char *m = "-";
  if (kind && strcmp(kind, "flag") == 0 && !(backend && strcmp(backend, "tpu") == 0))
    m = cJSON_GetObjectItemCaseSensitive(set, name) ? "yes" : "unlisted";
  free(kind);
  free(backend);
  return m;
}

/* ---- flags [PATTERN] ---- */

static void print_row(lcatalog *c, int e, const char *mark) {
  char *name = lcatalog_field(c, e, "name"), *type = lcatalog_field(c, e, "type");
  char *def = lcatalog_field(c, e, "default"), *backend = lcatalog_field(c, e, "backend");
  char *desc = lcatalog_field(c, e, "desc"), *dep = lcatalog_field(c, e, "deprecated");
  char *until = lcatalog_field(c, e, "until_");
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
  lcatalog *c = NULL;
  cJSON *set = NULL, *out = a->json ? cJSON_CreateArray() : NULL;
  char *err = NULL;
  int rc = lcatalog_open(&c, &err), shown = 0, missing = 0;
  if (rc == 0 && a->jaxlib) rc = jaxlib_set(db_of(a, db_path), a->jaxlib, &set, &err);
  int n = rc == 0 ? lcatalog_count(c) : 0;
  for (int i = 1; i <= n; i++) {
    char *name = lcatalog_field(c, i, "name");
    if (name && flagcmd_match(a->pos, name)) {
      const char *mark = set ? jaxlib_mark(c, i, set, name) : NULL;
      missing += mark && strcmp(mark, "unlisted") == 0;
      shown++;
      if (out) {
        cJSON *o = lcatalog_json(c, i);
        if (mark) cJSON_AddStringToObject(o, "in_jaxlib", mark);
        cJSON_AddItemToArray(out, o);
      } else {
        if (shown == 1) print_header(a, set); /* none when nothing matches */
        print_row(c, i, mark);
      }
    }
    free(name);
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
  lcatalog_free(c);
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
  lcatalog *c = NULL;
  char *err = NULL;
  int rc = lcatalog_open(&c, &err);
  int e = rc == 0 ? lcatalog_find(c, a->pos) : 0;
  if (rc == 0 && !e) {
    char *hint = lcatalog_suggest(c, a->pos);
    rc = hint ? diag_set(&err, FT_EINPUT, "unknown flag '%s' (did you mean '%s'?)", a->pos, hint)
              : diag_set(&err, FT_EINPUT, "unknown flag '%s' (see `flagtune flags`)", a->pos);
    free(hint);
  } else if (rc == 0 && a->json) {
    cJSON *o = lcatalog_json(c, e);
    char *s = json_print_text(o, 1);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
  } else if (rc == 0) {
    for (int i = 0; SHOW_FIELDS[i]; i++) {
      char *v = lcatalog_field(c, e, SHOW_FIELDS[i]);
      if (v) printf("%-12s %s\n", SHOW_FIELDS[i], v);
      free(v);
    }
  }
  lcatalog_free(c);
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

/* Runs CMD through the shell with XLA_FLAGS=--help, stdout and stderr together. The exit
 * status is not judged: a jaxlib may exit 0 or abort after printing the table. */
static char *run_help(const char *cmd, char **err) {
  char *full = xasprintf("XLA_FLAGS=--help %s 2>&1", cmd);
  char *out = hardware_capture(full, NULL);
  if (!out) diag_set(err, FT_ESYS, "cannot run %s: %s", cmd, strerror(errno));
  free(full);
  return out;
}

/* Catalog flags (not TPU) this list lacks, and listed flags the catalog lacks. */
static void compare(lcatalog *c, const store_flag_row *rows, int n, int *missing, int *unknown) {
  cJSON *set = cJSON_CreateObject();
  for (int i = 0; i < n; i++)
    if (!cJSON_GetObjectItemCaseSensitive(set, rows[i].name))
      cJSON_AddTrueToObject(set, rows[i].name);
  *missing = *unknown = 0;
  for (int i = 1, len = lcatalog_count(c); i <= len; i++) {
    char *name = lcatalog_field(c, i, "name");
    if (name && strcmp(jaxlib_mark(c, i, set, name), "unlisted") == 0) (*missing)++;
    if (name) cJSON_DeleteItemFromObjectCaseSensitive(set, name);
    free(name);
  }
  *unknown = cJSON_GetArraySize(set);
  cJSON_Delete(set);
}

/* absl cuts every log message at this many bytes (absl/log/internal/log_message.h,
 * kLogMessageBufferSize), and XLA prints the --help table inside one: the QCHECK message of
 * parse_flags_from_env.cc:220. */
#define ABSL_LOG_BUFFER 15000

/* The bytes from the start of the log line that carries the table ("... Check failed: ...")
 * to the end of its last "\t--" row, or 0 when TEXT has no such line. Near ABSL_LOG_BUFFER
 * means the table was cut, not finished. */
static size_t table_bytes(const char *text) {
  const char *q = strstr(text, "Flag parsing failed.");
  if (!q) return 0;
  while (q > text && q[-1] != '\n') q--;
  const char *end = q;
  for (const char *line = q; line && *line;) {
    const char *nl = strchr(line, '\n');
    if (strncmp(line, "\t--", 3) == 0) end = nl ? nl : line + strlen(line);
    line = nl ? nl + 1 : NULL;
  }
  return (size_t)(end - q);
}

static int import_rows(const fargs *a, const char *db, const char *jaxlib, char **err) {
  char *text = a->file ? read_text(a->file, err) : run_help(a->command, err);
  if (!text) return a->file ? FT_EINPUT : FT_ESYS;
  store_flag_row *rows = NULL;
  int n = 0, missing = 0, unknown = 0, rc;
  flagcmd_parse_help(text, &rows, &n);
  size_t cut = table_bytes(text);
  free(text);
  if (n == 0) {
    rc = diag_set(err, FT_EINPUT,
                  "no XLA flag table in %s: a jaxlib prints it for XLA_FLAGS=--help when its "
                  "backend starts (e.g. --command \"python3 -c 'import jax; jax.devices()'\"); "
                  "older jaxlibs ignore --help",
                  a->file ? a->file : "the command's output");
  } else {
    store *s = NULL;
    lcatalog *c = NULL;
    rc = store_open(db, 0, &s, err);
    if (rc == 0) rc = store_flags_import(s, jaxlib, rows, n, err);
    store_close(s);
    if (rc == 0 && lcatalog_open(&c, NULL) == 0) compare(c, rows, n, &missing, &unknown);
    lcatalog_free(c);
    if (rc == 0)
      printf(
          "imported %d flags of jaxlib %s into %s: %d catalog flags are not in its table, "
          "%d of its flags are not in the catalog\n",
          n, jaxlib, db, missing, unknown);
    if (rc == 0 && cut + 200 >= ABSL_LOG_BUFFER)
      printf(
          "the table stops at %zu bytes: absl cuts a log message at %d bytes "
          "(absl/log/internal/log_message.h) and XLA prints the table inside one, so "
          "XLA_FLAGS=--help lists only its first flags; `flagtune flags probe --command CMD "
          "--catalog` asks XLA about every catalog flag\n",
          cut, ABSL_LOG_BUFFER);
    else if (rc == 0 && missing > 0)
      printf(
          "a jaxlib's --help table can be partial: `flagtune flags probe --command CMD "
          "NAME...` asks XLA which flags it refuses\n");
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
    rc = flagcmd_probe(&a);
  } else {
    rc = cmd_import(&a, db_path);
  }
  free(a.names);
  return rc;
}
