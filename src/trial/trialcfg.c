/* How a configuration becomes a process and a snippet: flag tokens, the one XLA_FLAGS /
 * LIBTPU_INIT_ARGS string, the child's argv and environment, shell quoting and the export
 * formats. This is the only module that assembles flags or quotes for a shell, so every
 * quoting rule lives here. Must not spawn, touch the store or Lua, or read the process's
 * own environment (callers pass it in), so it stays testable without a loop. */
#include "trialcfg.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "json.h"

/* A growable byte string; always NUL-terminated once anything was added. */
typedef struct {
  char *s;
  size_t len, cap;
} strbuf;

static void sb_addn(strbuf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    b->cap = (b->len + n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void sb_add(strbuf *b, const char *s) {
  sb_addn(b, s, strlen(s));
}
static void sb_addc(strbuf *b, char c) {
  sb_addn(b, &c, 1);
}

/* The finished string, owned by the caller ("" when nothing was added). */
static char *sb_take(strbuf *b) {
  return b->s ? b->s : xstrdup("");
}

/* ---- flag tokens and argv -------------------------------------------------------------- */

/* XLA's flag tokenizer splits on whitespace and reads a double-quoted value with backslash
 * escapes; a value without whitespace or quotes is read verbatim, backslashes included. */
static int needs_flag_quotes(const char *v) {
  for (; *v; v++)
    if (isspace((unsigned char)*v) || *v == '"' || *v == '\'') return 1;
  return 0;
}

char *trialcfg_flag_token(const char *name, const char *value) {
  if (!value) value = "";
  if (!needs_flag_quotes(value)) return xasprintf("--%s=%s", name, value);
  strbuf b = {0};
  sb_add(&b, "--");
  sb_add(&b, name);
  sb_add(&b, "=\"");
  for (const char *p = value; *p; p++) {
    if (*p == '"' || *p == '\\') sb_addc(&b, '\\');
    sb_addc(&b, *p);
  }
  sb_addc(&b, '"');
  return sb_take(&b);
}

/* S with every "{steps}" replaced by STEPS. */
static char *substitute_steps(const char *s, const char *steps) {
  strbuf b = {0};
  const char *p = s, *hit;
  while ((hit = strstr(p, "{steps}")) != NULL) {
    sb_addn(&b, p, (size_t)(hit - p));
    sb_add(&b, steps);
    p = hit + strlen("{steps}");
  }
  sb_add(&b, p);
  return sb_take(&b);
}

int trialcfg_argv(char *const *tmpl, int steps, char ***out_argv, char **err) {
  *out_argv = NULL;
  if (!tmpl || !tmpl[0] || !tmpl[0][0]) return diag_set(err, FT_EINPUT, "the command is empty");
  int n = 0;
  for (; tmpl[n]; n++) {
    /* Checked before allocating so an error leaves nothing to free. */
    if (steps <= 0 && strstr(tmpl[n], "{steps}"))
      return diag_set(err, FT_EINPUT,
                      "the command uses {steps} (argument %d) but the trial has no step budget "
                      "(set budget.steps)",
                      n + 1);
  }
  char num[24];
  snprintf(num, sizeof num, "%d", steps);
  char **argv = xcalloc((size_t)n + 1, sizeof *argv);
  for (int i = 0; i < n; i++) argv[i] = substitute_steps(tmpl[i], num);
  *out_argv = argv;
  return 0;
}

void trialcfg_free_strv(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

/* ---- the environment ------------------------------------------------------------------- */

/* A POSIX environment variable name: what every shell can export. */
static int valid_env_name(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
  return 1;
}

/* A flag name must survive tokenizing: no whitespace, '=', quotes or control bytes, and no
 * leading '-' (we add "--"). */
static int valid_flag_name(const char *s) {
  if (!*s || *s == '-') return 0;
  for (; *s; s++)
    if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s) || strchr("=\"'\\", *s)) return 0;
  return 1;
}

/* Environment entries "NAME=value", each NAME at most once, in first-seen order, with an
 * index by name (open addressing; slot holds an entry's position + 1, 0 when free): a trial's
 * environment starts from the whole base environment, and a scan per entry made building it
 * quadratic (67 K instructions a trial with 60 variables, docs/COST.md). */
typedef struct {
  char **v;
  int n, cap;
  int *slot;
  size_t nslot; /* a power of two, at least twice n */
} envlist;

static size_t name_hash(const char *name, size_t n) {
  size_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)name[i]) * 16777619u;
  return h;
}

/* The slot where NAME (N bytes) is, or the free one where it would go. */
static size_t env_slot(const envlist *l, const char *name, size_t n) {
  size_t i = name_hash(name, n) & (l->nslot - 1);
  for (; l->slot[i]; i = (i + 1) & (l->nslot - 1)) {
    const char *e = l->v[l->slot[i] - 1];
    if (strncmp(e, name, n) == 0 && e[n] == '=') break;
  }
  return i;
}

static int env_find(const envlist *l, const char *name, size_t n) {
  if (!l->nslot) return -1;
  return l->slot[env_slot(l, name, n)] - 1;
}

/* Makes room for one more entry in the index (rebuilt at twice the size when half full). */
static void env_grow_index(envlist *l) {
  if ((size_t)(l->n + 1) * 2 <= l->nslot) return;
  free(l->slot);
  l->nslot = l->nslot ? l->nslot * 2 : 128;
  l->slot = xcalloc(l->nslot, sizeof *l->slot);
  for (int i = 0; i < l->n; i++) {
    size_t n = (size_t)(strchr(l->v[i], '=') - l->v[i]);
    l->slot[env_slot(l, l->v[i], n)] = i + 1;
  }
}

/* Takes ENTRY ("NAME=value"). An existing NAME is replaced when REPLACE, else ENTRY is
 * dropped (getenv reads the first of duplicate base entries, so the first one wins). */
static void env_put(envlist *l, char *entry, int replace) {
  size_t n = (size_t)(strchr(entry, '=') - entry);
  int at = env_find(l, entry, n);
  if (at >= 0) {
    if (replace) {
      free(l->v[at]);
      l->v[at] = entry;
    } else {
      free(entry);
    }
    return;
  }
  if (l->n + 2 > l->cap) {
    l->cap = l->cap ? l->cap * 2 : 64;
    l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
  }
  env_grow_index(l);
  l->slot[env_slot(l, entry, n)] = l->n + 1;
  l->v[l->n++] = entry;
  l->v[l->n] = NULL;
}

static const char *env_get(const envlist *l, const char *name) {
  int at = env_find(l, name, strlen(name));
  return at >= 0 ? strchr(l->v[at], '=') + 1 : NULL;
}

static int check_settings(const setting *s, int n, char **err) {
  if (n > 0 && !s) return diag_set(err, FT_EINPUT, "%d settings but no array", n);
  for (int i = 0; i < n; i++) {
    if (!s[i].name || !s[i].value)
      return diag_set(err, FT_EINPUT, "setting %d has no name or value", i + 1);
    if (s[i].target == TARGET_ENV && !valid_env_name(s[i].name, strlen(s[i].name)))
      return diag_set(err, FT_EINPUT, "'%s' is not a valid environment variable name", s[i].name);
    if (s[i].target != TARGET_ENV && !valid_flag_name(s[i].name))
      return diag_set(err, FT_EINPUT, "'%s' is not a valid flag name", s[i].name);
  }
  return 0;
}

static int check_extra(char *const *extra, char **err) {
  for (int i = 0; extra && extra[i]; i++) {
    const char *eq = strchr(extra[i], '=');
    if (!eq || !valid_env_name(extra[i], (size_t)(eq - extra[i])))
      return diag_set(err, FT_EINPUT, "'%s' is not a NAME=value environment entry", extra[i]);
  }
  return 0;
}

static int check_unset(char *const *unset, char **err) {
  for (int i = 0; unset && unset[i]; i++)
    if (!valid_env_name(unset[i], strlen(unset[i])))
      return diag_set(err, FT_EINPUT, "'%s' is not a valid environment variable name", unset[i]);
  return 0;
}

/* 1 when the base entry "NAME=value" names one of UNSET. */
static int is_unset(const char *entry, const char *eq, char *const *unset) {
  for (int i = 0; unset && unset[i]; i++)
    if (strlen(unset[i]) == (size_t)(eq - entry) && strncmp(entry, unset[i], eq - entry) == 0)
      return 1;
  return 0;
}

/* BASE (trimmed) then every flag of TARGET as a token, single spaces between. NULL when no
 * setting has that target, so an inherited value is left exactly as it was. */
static char *join_flags(const char *base, const setting *s, int n, setting_target target) {
  int any = 0;
  for (int i = 0; i < n; i++) any |= s[i].target == target;
  if (!any) return NULL;
  strbuf b = {0};
  if (base) {
    while (isspace((unsigned char)*base)) base++;
    size_t len = strlen(base);
    while (len > 0 && isspace((unsigned char)base[len - 1])) len--;
    sb_addn(&b, base, len);
  }
  for (int i = 0; i < n; i++) {
    if (s[i].target != target) continue;
    if (b.len) sb_addc(&b, ' ');
    char *tok = trialcfg_flag_token(s[i].name, s[i].value);
    sb_add(&b, tok);
    free(tok);
  }
  return sb_take(&b);
}

/* Sets VAR to the joined flags of TARGET on top of whatever VAR holds so far. */
static void put_flags(envlist *env, const char *var, const setting *s, int n, setting_target t) {
  char *joined = join_flags(env_get(env, var), s, n, t);
  if (!joined) return;
  env_put(env, xasprintf("%s=%s", var, joined), 1);
  free(joined);
}

/* A persistent compilation cache that cannot lie. With JAX_COMPILATION_CACHE_DIR set, jax also
 * points XLA's own caches into it: by default the per-fusion autotune cache
 * (jax_persistent_cache_enable_xla_caches, default 'xla_gpu_per_fusion_autotune_cache_dir';
 * 'all' adds the kernel cache: jax 0.12.0.1 jax/_src/config.py:1527 and jax/_src/compiler.py:
 * 320-336). Those caches are keyed by the fusion, not by XLA_FLAGS, so trials sharing the
 * directory would reuse each other's autotuning while the compiled programs (whose key does
 * hash XLA_FLAGS, jax/_src/cache_key.py:383) stay apart. So a trial that will see a cache
 * directory and no explicit choice gets 'none', which enables no XLA cache (compiler.py tests
 * for 'all' or the cache's name); an explicit choice, the caller's or the experiment's, is
 * kept, and `check` warns about it (lua/checks.lua). */
#define CACHE_DIR_VAR "JAX_COMPILATION_CACHE_DIR"
#define XLA_CACHES_VAR "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"
static void keep_xla_caches_apart(envlist *env) {
  const char *dir = env_get(env, CACHE_DIR_VAR);
  if (!dir || !*dir || env_find(env, XLA_CACHES_VAR, strlen(XLA_CACHES_VAR)) >= 0) return;
  env_put(env, xstrdup(XLA_CACHES_VAR "=none"), 0);
}

static char *dup_or_null(const char *s) {
  return s ? xstrdup(s) : NULL;
}

int trialcfg_env(char *const *base, const setting *s, int n, char *const *unset, char *const *extra,
                 trial_env *out, char **err) {
  return trialcfg_env_defaults(base, s, n, unset, extra, NULL, out, err);
}

int trialcfg_env_defaults(char *const *base, const setting *s, int n, char *const *unset,
                          char *const *extra, char *const *defaults, trial_env *out, char **err) {
  memset(out, 0, sizeof *out);
  int rc = check_settings(s, n, err);
  if (rc == 0) rc = check_unset(unset, err);
  if (rc == 0) rc = check_extra(extra, err);
  if (rc == 0) rc = check_extra(defaults, err);
  if (rc != 0) return rc;
  envlist env = {0};
  for (int i = 0; base && base[i]; i++) {
    const char *eq = strchr(base[i], '=');
    if (eq && eq != base[i] && !is_unset(base[i], eq, unset)) env_put(&env, xstrdup(base[i]), 0);
  }
  /* A TARGET_ENV setting of XLA_FLAGS itself becomes the base our flags are appended to. */
  for (int i = 0; i < n; i++)
    if (s[i].target == TARGET_ENV) env_put(&env, xasprintf("%s=%s", s[i].name, s[i].value), 1);
  put_flags(&env, "XLA_FLAGS", s, n, TARGET_XLA);
  put_flags(&env, "LIBTPU_INIT_ARGS", s, n, TARGET_TPU);
  for (int i = 0; extra && extra[i]; i++) env_put(&env, xstrdup(extra[i]), 1);
  for (int i = 0; defaults && defaults[i]; i++) env_put(&env, xstrdup(defaults[i]), 0);
  keep_xla_caches_apart(&env);
  if (!env.v) env.v = xcalloc(1, sizeof *env.v);
  out->envp = env.v;
  /* Report what the child will really see, extras included. */
  out->xla_flags = dup_or_null(env_get(&env, "XLA_FLAGS"));
  out->tpu_args = dup_or_null(env_get(&env, "LIBTPU_INIT_ARGS"));
  free(env.slot);
  return 0;
}

void trialcfg_env_free(trial_env *e) {
  if (!e) return;
  trialcfg_free_strv(e->envp);
  free(e->xla_flags);
  free(e->tpu_args);
  memset(e, 0, sizeof *e);
}

/* ---- shell quoting and export ---------------------------------------------------------- */

char *trialcfg_shell_quote(const char *s) {
  /* Inside '...' every byte is literal in POSIX sh, bash and zsh; a quote closes the string,
   * is written as \' and the string reopens. Runs of quotes become \'\' so no '' pair ever
   * appears (zsh's RC_QUOTES would read '' inside quotes as a quote). */
  strbuf b = {0};
  int open = 0;
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '\'') {
      if (open) sb_addc(&b, '\'');
      open = 0;
      sb_add(&b, "\\'");
      continue;
    }
    if (!open) sb_addc(&b, '\'');
    open = 1;
    sb_addc(&b, *p);
  }
  if (open) sb_addc(&b, '\'');
  if (!b.len) sb_add(&b, "''");
  return sb_take(&b);
}

char *trialcfg_fish_quote(const char *s) {
  /* fish reads \' and \\ as escapes inside '...' (every other byte, newlines included, is
   * literal), so a POSIX-quoted value ending in a backslash would swallow its closing quote. */
  strbuf b = {0};
  sb_addc(&b, '\'');
  for (const char *p = s ? s : ""; *p; p++) {
    if (*p == '\'' || *p == '\\') sb_addc(&b, '\\');
    sb_addc(&b, *p);
  }
  sb_addc(&b, '\'');
  return sb_take(&b);
}

int trialcfg_unsafe_env(const char *name) {
  /* Shells' start-up and prompt hooks, what decides which program or library runs, and the
   * interpreters' own start-up code: a database (someone else's, or a trial's output) must not
   * reach them through `source`. */
  static const char *const names[] = {"PATH",
                                      "ENV",
                                      "BASH_ENV",
                                      "PROMPT_COMMAND",
                                      "PS0",
                                      "PS1",
                                      "PS2",
                                      "PS3",
                                      "PS4",
                                      "IFS",
                                      "SHELLOPTS",
                                      "BASHOPTS",
                                      "CDPATH",
                                      "GLOBIGNORE",
                                      "HOME",
                                      "SHELL",
                                      "ZDOTDIR",
                                      "FPATH",
                                      "PROMPT",
                                      "RPROMPT",
                                      "PYTHONPATH",
                                      "PYTHONSTARTUP",
                                      "PYTHONHOME",
                                      "PYTHONINSPECT",
                                      "PYTHONUSERBASE",
                                      "PERL5LIB",
                                      "PERL5OPT",
                                      "PERLLIB",
                                      "RUBYOPT",
                                      "RUBYLIB",
                                      "NODE_OPTIONS",
                                      "GCONV_PATH",
                                      "LOCPATH",
                                      "HOSTALIASES",
                                      "EDITOR",
                                      "VISUAL",
                                      "PAGER",
                                      "GIT_SSH_COMMAND",
                                      "TERMINFO",
                                      "INPUTRC"};
  static const char *const prefixes[] = {"LD_", "DYLD_", "BASH_FUNC_", "fish_"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(name, names[i]) == 0) return 1;
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

static int is_set(const char *s) {
  return s && *s;
}

/* Every variable the snippet sets, in output order, so checks and writers agree. */
typedef struct {
  const char *name;
  const char *value;
} export_var;

static int collect_vars(const export_info *info, export_var **out, char **err) {
  if (info->n_env < 0 || info->n_comments < 0 || (info->n_comments > 0 && !info->comments) ||
      (info->n_env > 0 && (!info->env_names || !info->env_values)))
    return diag_set(err, FT_EINPUT, "malformed export request");
  export_var *v = xcalloc((size_t)info->n_env + 2, sizeof *v);
  int n = 0;
  if (is_set(info->xla_flags)) v[n++] = (export_var){"XLA_FLAGS", info->xla_flags};
  if (is_set(info->tpu_args)) v[n++] = (export_var){"LIBTPU_INIT_ARGS", info->tpu_args};
  for (int i = 0; i < info->n_env; i++) {
    const char *name = info->env_names[i], *value = info->env_values[i];
    int rc = 0;
    if (!name || !value || !valid_env_name(name, strlen(name)))
      rc = diag_set(err, FT_EINPUT, "'%s' is not a valid environment variable name",
                    name ? name : "(null)");
    for (int j = 0; rc == 0 && j < n; j++)
      if (strcmp(v[j].name, name) == 0)
        rc = diag_set(err, FT_EINPUT, "variable %s is set twice in the export", name);
    if (rc != 0) {
      free(v);
      return rc;
    }
    v[n++] = (export_var){name, value};
  }
  *out = v;
  return n;
}

/* Leaves the unsafe variables out of V (keeping the order) unless INFO asks for them, warning
 * once for all; the names left out go in *LEFT ("" when none; caller frees). Returns the new
 * count. */
static int drop_unsafe(const export_info *info, export_var *v, int n, char **left) {
  strbuf b = {0};
  int kept = 0;
  for (int i = 0; i < n; i++) {
    if (!info->unsafe_env && trialcfg_unsafe_env(v[i].name)) {
      if (b.len) sb_addc(&b, ' ');
      sb_add(&b, v[i].name);
      continue;
    }
    v[kept++] = v[i];
  }
  *left = b.len ? sb_take(&b) : xstrdup("");
  if (**left)
    diag_warn(
        "left out of the export: %s, which would change what your shell or its programs "
        "run (export --unsafe-env includes them)",
        *left);
  return kept;
}

/* A comment line that cannot end early: a newline or other control byte inside it would
 * let the rest of the "comment" run as a command when the snippet is sourced. */
static void write_comment(FILE *out, const char *c) {
  fputs("# ", out);
  for (const unsigned char *p = (const unsigned char *)(c ? c : ""); *p; p++)
    fputc(*p < 0x20 || *p == 0x7f ? ' ' : *p, out);
  fputc('\n', out);
}

static void write_left_out(FILE *out, const char *left) {
  if (!*left) return;
  char *c = xasprintf("left out: %s (flagtune export --unsafe-env includes them)", left);
  write_comment(out, c);
  free(c);
}

static int write_sh(FILE *out, const export_info *info, const export_var *v, int n,
                    const char *left, int fish) {
  for (int i = 0; i < info->n_comments; i++) write_comment(out, info->comments[i]);
  write_left_out(out, left);
  for (int i = 0; i < n; i++) {
    char *q = fish ? trialcfg_fish_quote(v[i].value) : trialcfg_shell_quote(v[i].value);
    fprintf(out, fish ? "set -gx %s %s\n" : "export %s=%s\n", v[i].name, q);
    free(q);
  }
  return 0;
}

static int write_env(FILE *out, const export_var *v, int n, char **err) {
  /* An env file has no quoting: a line break would split the value. Check all first so a
   * refused export writes nothing. */
  for (int i = 0; i < n; i++)
    if (strpbrk(v[i].value, "\n\r"))
      return diag_set(err, FT_EINPUT,
                      "the value of %s holds a line break, which an env file cannot carry "
                      "(use --format sh or json)",
                      v[i].name);
  for (int i = 0; i < n; i++) fprintf(out, "%s=%s\n", v[i].name, v[i].value);
  return 0;
}

/* The end of the XLA flag that starts at P, read as XLA reads XLA_FLAGS and the file it may
 * name (xla/parse_flags_from_env.cc ParseArgvFromString, openxla/xla at 001918b: a flag starts
 * with '-', its name is [-_A-Za-z0-9], a value may be quoted --f="a b" with backslash escapes
 * inside double quotes, and whitespace " \t\r\n" ends an unquoted one). NULL when XLA would
 * stop reading there (a token not starting with '-', text glued to a closing quote). */
static const char *flag_token_end(const char *p) {
  static const char ws[] = " \t\r\n";
  if (*p != '-') return NULL;
  const char *e = p;
  while (*e && (isalnum((unsigned char)*e) || *e == '-' || *e == '_')) e++;
  if (*e == '=' && (e[1] == '"' || e[1] == '\'')) {
    char quote = e[1];
    for (e += 2; *e && *e != quote; e++)
      if (quote == '"' && *e == '\\' && e[1]) e++;
    if (!*e) return e; /* unterminated: XLA takes the rest as the value */
    e++;
    return *e == '\0' || strchr(ws, *e) ? e : NULL;
  }
  return e + strcspn(e, ws);
}

/* A flagfile: the XLA flags one per line, nothing else. XLA reads such a file when XLA_FLAGS
 * holds a path instead of flags (parse_flags_from_env.cc SetArgvFromEnv: a value whose first
 * non-blank byte is not '-' is a file name) and parses it exactly as the variable. It has no
 * comments: the parser stops at the first token that does not start with '-', so a '#' line
 * would silently drop every flag after it. Variables and LIBTPU_INIT_ARGS cannot be in it. */
static int write_flagfile(FILE *out, const export_info *info, char **err) {
  const char *p = is_set(info->xla_flags) ? info->xla_flags : "";
  strbuf b = {0};
  for (p += strspn(p, " \t\r\n"); *p; p += strspn(p, " \t\r\n")) {
    const char *e = flag_token_end(p);
    if (!e) {
      free(sb_take(&b));
      return diag_set(err, FT_EINPUT,
                      "XLA would stop reading the flags at '%.40s' (a flagfile holds only "
                      "--flag or --flag=value items; use --format sh)",
                      p);
    }
    sb_addn(&b, p, (size_t)(e - p));
    sb_addc(&b, '\n');
    p = e;
  }
  char *text = sb_take(&b);
  fputs(text, out);
  free(text);
  return 0;
}

static int write_json(FILE *out, const export_info *info, const export_var *v, int n,
                      const char *left, char **err) {
  cJSON *root = cJSON_CreateObject();
  cJSON *comments = cJSON_AddArrayToObject(root, "comments");
  for (int i = 0; i < info->n_comments; i++)
    cJSON_AddItemToArray(comments, cJSON_CreateString(info->comments[i] ? info->comments[i] : ""));
  if (*left) {
    char *c = xasprintf("left out: %s (flagtune export --unsafe-env includes them)", left);
    cJSON_AddItemToArray(comments, cJSON_CreateString(c));
    free(c);
  }
  /* XLA_FLAGS is always present (maybe "") so readers need no existence check. */
  cJSON_AddStringToObject(root, "XLA_FLAGS", is_set(info->xla_flags) ? info->xla_flags : "");
  if (is_set(info->tpu_args)) cJSON_AddStringToObject(root, "LIBTPU_INIT_ARGS", info->tpu_args);
  cJSON *env = cJSON_AddObjectToObject(root, "env");
  for (int i = 0; i < n; i++) /* v: XLA_FLAGS and LIBTPU_INIT_ARGS first, both set above */
    if (strcmp(v[i].name, "XLA_FLAGS") != 0 && strcmp(v[i].name, "LIBTPU_INIT_ARGS") != 0)
      cJSON_AddStringToObject(env, v[i].name, v[i].value);
  /* JSON is UTF-8: bytes outside a well-formed sequence become U+FFFD (json_print_text), and
   * the export says so, since the values then differ from what the trial ran with. */
  char *raw = cJSON_PrintUnformatted(root), *compact = json_print_text(root, 0);
  char *text = json_print_text(root, 1);
  cJSON_Delete(root);
  int replaced = raw && compact && strcmp(raw, compact) != 0;
  free(raw);
  free(compact);
  if (!text) return diag_set(err, FT_ESYS, "out of memory while printing the export");
  if (replaced)
    diag_warn(
        "the export holds bytes that are not UTF-8: JSON cannot carry them, so they are "
        "written as U+FFFD (--format sh keeps every byte)");
  fprintf(out, "%s\n", text);
  free(text);
  return 0;
}

int trialcfg_export(FILE *out, export_format fmt, const export_info *info, char **err) {
  if (!out || !info) return diag_set(err, FT_EINPUT, "nothing to export");
  export_var *v = NULL;
  int n = collect_vars(info, &v, err);
  if (n < 0) return n;
  char *left = xstrdup("");
  if (fmt != EXPORT_FLAGFILE) free(left), n = drop_unsafe(info, v, n, &left);
  int rc;
  switch (fmt) {
    case EXPORT_SH:
    case EXPORT_FISH:
      rc = write_sh(out, info, v, n, left, fmt == EXPORT_FISH);
      break;
    case EXPORT_ENV:
      rc = write_env(out, v, n, err);
      break;
    case EXPORT_JSON:
      rc = write_json(out, info, v, n, left, err);
      break;
    case EXPORT_FLAGFILE:
      rc = write_flagfile(out, info, err);
      break;
    default:
      rc = diag_set(err, FT_EINPUT, "unknown export format %d", (int)fmt);
      break;
  }
  free(v);
  free(left);
  if (rc == 0 && (fflush(out) != 0 || ferror(out)))
    rc = diag_set(err, FT_ESYS, "could not write the export");
  return rc;
}
