/* How a configuration becomes a process: the argv, the environment, the one XLA_FLAGS
 * string, and the export snippet. All flag assembly and all shell quoting live here. */
#ifndef FLAGTUNE_TRIALCFG_H
#define FLAGTUNE_TRIALCFG_H

#include <stdio.h>

typedef enum { TARGET_XLA = 0, TARGET_TPU = 1, TARGET_ENV = 2 } setting_target;

/* One rendered setting: a flag (to XLA_FLAGS or LIBTPU_INIT_ARGS) or an environment variable.
 * VALUE is already in its final text form ("true", "536870912", "0.9"). */
typedef struct {
  setting_target target;
  const char *name;
  const char *value;
} setting;

/* "--name=value"; the value is double-quoted when it holds whitespace or quotes
 * (as XLA's flag parser reads them). Caller frees. */
char *trialcfg_flag_token(const char *name, const char *value);

/* Replaces every "{steps}" in each TEMPLATE element (also inside a larger string, as in
 * "--steps={steps}") with STEPS. When STEPS <= 0 a template that uses "{steps}" is refused
 * with FT_EINPUT (a trial must not silently run 0 steps); one that does not is copied.
 * An empty command is FT_EINPUT. *out_argv is NULL-terminated; free with trialcfg_free_strv. */
int trialcfg_argv(char *const *tmpl, int steps, char ***out_argv, char **err);

typedef struct {
  char **envp;     /* complete child environment, NULL-terminated */
  char *xla_flags; /* the XLA_FLAGS value set (NULL if none) */
  char *tpu_args;  /* the LIBTPU_INIT_ARGS value set (NULL if none) */
} trial_env;

/* Builds the child environment: BASE (usually environ) less the variables UNSET names
 * (NULL-terminated, may be NULL: what the child must not inherit; a setting of such a name
 * still applies), then every TARGET_ENV setting (overriding), then XLA_FLAGS = the base's
 * XLA_FLAGS (if any) followed by every TARGET_XLA flag token in the order given;
 * LIBTPU_INIT_ARGS likewise; then each EXTRA "NAME=value" string (CUDA_VISIBLE_DEVICES,
 * FLAGTUNE_TRIAL, ...); then, when the result sets JAX_COMPILATION_CACHE_DIR (non-empty) and
 * not JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES, that one as "none", so that trials sharing a
 * cache directory never share XLA's autotune or kernel caches. Each name appears once (first of
 * duplicate BASE entries kept, as getenv reads it); single spaces join the flags; a TARGET_ENV
 * setting named XLA_FLAGS replaces the base value our flags are appended to. xla_flags / tpu_args
 * are what the child will see (NULL when unset). Bad names (env: [A-Za-z_][A-Za-z0-9_]*; flags: no
 * whitespace, '=', quotes, leading '-'), in settings or UNSET, are FT_EINPUT with *out
 * zeroed. Free with trialcfg_env_free. */
int trialcfg_env(char *const *base, const setting *s, int n, char *const *unset, char *const *extra,
                 trial_env *out, char **err);
/* trialcfg_env with DEFAULTS ("NAME=value", NULL-terminated, may be NULL) put after EXTRA
 * where nothing before set NAME: the base, a setting or an extra (an empty value counts as
 * set), so a user's choice always wins. Applied before the XLA-caches rule above, so a
 * default JAX_COMPILATION_CACHE_DIR also gets ..._ENABLE_XLA_CACHES=none. */
int trialcfg_env_defaults(char *const *base, const setting *s, int n, char *const *unset,
                          char *const *extra, char *const *defaults, trial_env *out, char **err);
void trialcfg_env_free(trial_env *e);
void trialcfg_free_strv(char **v);

/* POSIX single-quoted form of S: safe in bash, zsh, dash and ksh whatever S holds (not in fish,
 * where \' and \\ are escapes inside '...'). Caller frees. */
char *trialcfg_shell_quote(const char *s);

/* fish's single-quoted form of S ('...' with \ and ' escaped by a backslash): safe in fish
 * whatever S holds. Caller frees. */
char *trialcfg_fish_quote(const char *s);

typedef enum {
  EXPORT_SH = 0,
  EXPORT_ENV = 1,
  EXPORT_JSON = 2,
  EXPORT_FLAGFILE = 3,
  EXPORT_FISH = 4
} export_format;

/* True when setting NAME in a user's shell changes what that shell or the programs it starts
 * run (PATH, LD_PRELOAD, BASH_ENV, PROMPT_COMMAND, PYTHONSTARTUP, IFS, ...): such a variable
 * from a database is left out of an export unless asked for. */
int trialcfg_unsafe_env(const char *name);

typedef struct {
  const char *const *comments; /* "# ..." lines (sh), ignored (env), "comments" array (json) */
  int n_comments;
  const char *xla_flags; /* NULL or "" to omit */
  const char *tpu_args;
  const char *const *env_names; /* variables to set */
  const char *const *env_values;
  int n_env;
  int unsafe_env; /* 0: variables trialcfg_unsafe_env names are left out, with a warning */
} export_info;

/* Writes the snippet: XLA_FLAGS, then LIBTPU_INIT_ARGS (each only when set), then the
 * env variables in order. sh: "# ..." comment lines (control bytes replaced by spaces so
 * a comment cannot end early) and "export NAME='value'" lines, safe to source in bash, zsh,
 * dash and ksh; fish: the same comments and "set -gx NAME 'value'" lines for fish; env: NAME=value
 * lines for env files (docker --env-file, systemd) with values unquoted and line breaks refused;
 * json: {"comments": [...], "XLA_FLAGS": "..." (always, maybe ""), "LIBTPU_INIT_ARGS": "..." (when
 * set), "env": {...}}, always valid UTF-8 (a byte outside a well-formed sequence becomes U+FFFD,
 * with a warning); flagfile: the XLA flags one per line, no comments, for XLA_FLAGS=/path/to/file
 * (variables and LIBTPU_INIT_ARGS are left out: the caller says so). Names must match
 * [A-Za-z_][A-Za-z0-9_]* and appear once; an unsafe one (trialcfg_unsafe_env) is left out
 * with a warning and a comment saying so, unless info->unsafe_env. Everything is checked before the
 * first byte is written. Returns 0, FT_EINPUT with *err set, or FT_ESYS when writing fails. */
int trialcfg_export(FILE *out, export_format fmt, const export_info *info, char **err);

#endif
