/* trialcfg: flag tokens, argv substitution, environment assembly, shell quoting, and the
 * export formats, including byte-exact round trips through the real shells (bash, dash,
 * and zsh when installed) with values that try to run commands. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "test.h"
#include "trialcfg.h"

/* ---- flag tokens and argv ---- */

static void check_token(const char *name, const char *value, const char *want) {
  char *t = trialcfg_flag_token(name, value);
  CHECK_STR(t, want);
  free(t);
}

TEST(flag_tokens) {
  check_token("xla_gpu_enable_latency_hiding_scheduler", "true",
              "--xla_gpu_enable_latency_hiding_scheduler=true");
  check_token("xla_gpu_all_gather_combine_threshold_bytes", "536870912",
              "--xla_gpu_all_gather_combine_threshold_bytes=536870912");
  check_token("xla_dump_to", "/tmp/my dumps", "--xla_dump_to=\"/tmp/my dumps\"");
  check_token("f", "a\"b", "--f=\"a\\\"b\"");
  check_token("f", "it's", "--f=\"it's\"");
  check_token("f", "a\\b c", "--f=\"a\\\\b c\"");
  check_token("f", "tab\there", "--f=\"tab\there\"");
  /* Without whitespace or quotes XLA reads the value verbatim, backslashes included. */
  check_token("f", "C:\\dir", "--f=C:\\dir");
  check_token("f", "", "--f=");
}

static void free_err(char **err) {
  free(*err);
  *err = NULL;
}

TEST(argv_steps_substitution) {
  char *tmpl[] = {"python3", "train.py", "--steps", "{steps}", "--tag=s{steps}-{steps}",
                  "{step}",  NULL};
  char **argv = NULL;
  char *err = NULL;
  CHECK_INT(trialcfg_argv(tmpl, 50, &argv, &err), 0);
  CHECK(err == NULL);
  CHECK_STR(argv[0], "python3");
  CHECK_STR(argv[2], "--steps");
  CHECK_STR(argv[3], "50");
  CHECK_STR(argv[4], "--tag=s50-50");
  CHECK_STR(argv[5], "{step}");
  CHECK(argv[6] == NULL);
  /* The template is not modified. */
  CHECK_STR(tmpl[3], "{steps}");
  trialcfg_free_strv(argv);
}

TEST(argv_errors) {
  char **argv = (char **)1;
  char *err = NULL;
  char *uses[] = {"train", "--steps={steps}", NULL};
  CHECK_INT(trialcfg_argv(uses, 0, &argv, &err), FT_EINPUT);
  CHECK(argv == NULL);
  CHECK(err && strstr(err, "{steps}"));
  free_err(&err);
  CHECK_INT(trialcfg_argv(uses, -3, &argv, &err), FT_EINPUT);
  free_err(&err);
  /* Without {steps}, no budget is fine. */
  char *plain[] = {"train", "--fast", NULL};
  CHECK_INT(trialcfg_argv(plain, 0, &argv, &err), 0);
  CHECK_STR(argv[1], "--fast");
  trialcfg_free_strv(argv);
  char *empty[] = {NULL};
  CHECK_INT(trialcfg_argv(empty, 5, &argv, &err), FT_EINPUT);
  CHECK(err != NULL);
  free_err(&err);
  char *blank[] = {"", NULL};
  CHECK_INT(trialcfg_argv(blank, 5, &argv, &err), FT_EINPUT);
  free_err(&err);
  CHECK_INT(trialcfg_argv(NULL, 5, &argv, &err), FT_EINPUT);
  free_err(&err);
}

/* ---- environment ---- */

/* The value of NAME in ENVP, or NULL; fails the test when NAME appears twice. */
static const char *envp_get(char **envp, const char *name) {
  const char *found = NULL;
  size_t n = strlen(name);
  for (char **p = envp; *p; p++) {
    if (strncmp(*p, name, n) != 0 || (*p)[n] != '=') continue;
    CHECK(found == NULL);
    found = *p + n + 1;
  }
  return found;
}

static int envp_count(char **envp) {
  int n = 0;
  while (envp[n]) n++;
  return n;
}

TEST(env_assembly) {
  char *base[] = {"PATH=/usr/bin",
                  "XLA_FLAGS= --xla_gpu_autotune_level=2  ",
                  "NCCL_PROTO=LL",
                  "HOME=/root",
                  "CUDA_VISIBLE_DEVICES=0,1,2,3",
                  NULL};
  setting s[] = {
      {TARGET_XLA, "xla_gpu_enable_latency_hiding_scheduler", "true"},
      {TARGET_ENV, "NCCL_PROTO", "SIMPLE"},
      {TARGET_XLA, "xla_dump_to", "/tmp/a b"},
      {TARGET_ENV, "XLA_PYTHON_CLIENT_MEM_FRACTION", "0.9"},
      {TARGET_TPU, "xla_tpu_enable_async_all_gather", "true"},
  };
  char *extra[] = {"CUDA_VISIBLE_DEVICES=4,5", "FLAGTUNE_TRIAL=7", "NCCL_PROTO=LL128", NULL};
  trial_env e;
  char *err = NULL;
  CHECK_INT(trialcfg_env(base, s, 5, NULL, extra, &e, &err), 0);
  CHECK_STR(e.xla_flags,
            "--xla_gpu_autotune_level=2 --xla_gpu_enable_latency_hiding_scheduler=true "
            "--xla_dump_to=\"/tmp/a b\"");
  CHECK_STR(envp_get(e.envp, "XLA_FLAGS"), e.xla_flags);
  CHECK_STR(e.tpu_args, "--xla_tpu_enable_async_all_gather=true");
  CHECK_STR(envp_get(e.envp, "LIBTPU_INIT_ARGS"), e.tpu_args);
  CHECK_STR(envp_get(e.envp, "PATH"), "/usr/bin");
  CHECK_STR(envp_get(e.envp, "HOME"), "/root");
  CHECK_STR(envp_get(e.envp, "NCCL_PROTO"), "LL128"); /* extra beats setting beats base */
  CHECK_STR(envp_get(e.envp, "CUDA_VISIBLE_DEVICES"), "4,5");
  CHECK_STR(envp_get(e.envp, "FLAGTUNE_TRIAL"), "7");
  CHECK_STR(envp_get(e.envp, "XLA_PYTHON_CLIENT_MEM_FRACTION"), "0.9");
  CHECK_INT(envp_count(e.envp), 8);
  /* Base order is kept: PATH first, XLA_FLAGS replaced in place. */
  CHECK(strncmp(e.envp[0], "PATH=", 5) == 0);
  CHECK(strncmp(e.envp[1], "XLA_FLAGS=", 10) == 0);
  trialcfg_env_free(&e);
  CHECK(e.envp == NULL);
}

TEST(env_without_flags) {
  char *base[] = {"XLA_FLAGS=--xla_foo=1", "A=1", "A=2", "NOEQUALS", "=nameless", NULL};
  trial_env e;
  CHECK_INT(trialcfg_env(base, NULL, 0, NULL, NULL, &e, NULL), 0);
  /* Inherited XLA_FLAGS is reported as-is; nothing new is added. */
  CHECK_STR(e.xla_flags, "--xla_foo=1");
  CHECK(e.tpu_args == NULL);
  CHECK_STR(envp_get(e.envp, "A"), "1"); /* the first of duplicates, as getenv reads */
  CHECK_INT(envp_count(e.envp), 2);
  trialcfg_env_free(&e);

  char *none[] = {NULL};
  setting s[] = {{TARGET_ENV, "X", "y z"}};
  CHECK_INT(trialcfg_env(none, s, 1, NULL, NULL, &e, NULL), 0);
  CHECK(e.xla_flags == NULL);
  CHECK(envp_get(e.envp, "XLA_FLAGS") == NULL);
  CHECK_STR(envp_get(e.envp, "X"), "y z");
  trialcfg_env_free(&e);

  CHECK_INT(trialcfg_env(NULL, NULL, 0, NULL, NULL, &e, NULL), 0);
  CHECK(e.envp != NULL && e.envp[0] == NULL);
  trialcfg_env_free(&e);
}

/* A large base environment (the index by name is rebuilt several times on the way): names
 * that are prefixes of each other (V1, V10, V100), every name given twice (the first wins),
 * order kept, and settings and extras replacing entries in place. */
TEST(env_large_base_keeps_first_and_order) {
  enum { N = 700 };
  char **base = xcalloc(2 * N + 1, sizeof *base);
  for (int i = 0; i < N; i++) {
    base[i] = xasprintf("V%d=first%d", i, i);
    base[N + i] = xasprintf("V%d=second%d", i, i);
  }
  setting s[] = {{TARGET_ENV, "V10", "set"}, {TARGET_ENV, "NEW", "n"}};
  char *extra[] = {"V100=extra", "V1=extra1", NULL};
  trial_env e;
  CHECK_INT(trialcfg_env(base, s, 2, NULL, extra, &e, NULL), 0);
  CHECK_INT(envp_count(e.envp), N + 1);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    char want[64];
    snprintf(want, sizeof want, "V%d=", i);
    if (strncmp(e.envp[i], want, strlen(want)) != 0) bad++; /* first-seen order */
    if (i == 1 || i == 10 || i == 100) continue;
    char name[32], value[32];
    snprintf(name, sizeof name, "V%d", i);
    snprintf(value, sizeof value, "first%d", i);
    const char *got = envp_get(e.envp, name);
    if (!got || strcmp(got, value) != 0) bad++;
  }
  CHECK_INT(bad, 0);
  CHECK_STR(envp_get(e.envp, "V10"), "set");
  CHECK_STR(envp_get(e.envp, "V100"), "extra");
  CHECK_STR(envp_get(e.envp, "V1"), "extra1");
  CHECK_STR(e.envp[N], "NEW=n");
  trialcfg_env_free(&e);
  for (int i = 0; i < 2 * N; i++) free(base[i]);
  free(base);
}

TEST(env_xla_flags_setting_is_the_base) {
  char *base[] = {"XLA_FLAGS=--from_user=1", NULL};
  setting s[] = {{TARGET_XLA, "b", "2"}, {TARGET_ENV, "XLA_FLAGS", "--from_experiment=1"}};
  trial_env e;
  CHECK_INT(trialcfg_env(base, s, 2, NULL, NULL, &e, NULL), 0);
  CHECK_STR(e.xla_flags, "--from_experiment=1 --b=2");
  trialcfg_env_free(&e);
  /* An extra XLA_FLAGS overrides everything and is what gets reported. */
  char *extra[] = {"XLA_FLAGS=--only", NULL};
  CHECK_INT(trialcfg_env(base, s, 2, NULL, extra, &e, NULL), 0);
  CHECK_STR(e.xla_flags, "--only");
  CHECK_STR(envp_get(e.envp, "XLA_FLAGS"), "--only");
  trialcfg_env_free(&e);
}

TEST(env_rejects_bad_names) {
  trial_env e;
  char *err = NULL;
  setting bad_env[] = {{TARGET_ENV, "1BAD", "x"}};
  CHECK_INT(trialcfg_env(NULL, bad_env, 1, NULL, NULL, &e, &err), FT_EINPUT);
  CHECK(e.envp == NULL && e.xla_flags == NULL);
  CHECK(err && strstr(err, "1BAD"));
  setting bad_flag[] = {{TARGET_XLA, "xla foo", "1"}};
  CHECK_INT(trialcfg_env(NULL, bad_flag, 1, NULL, NULL, &e, &err), FT_EINPUT);
  setting dashed[] = {{TARGET_XLA, "--xla_foo", "1"}};
  CHECK_INT(trialcfg_env(NULL, dashed, 1, NULL, NULL, &e, &err), FT_EINPUT);
  setting eq[] = {{TARGET_TPU, "a=b", "1"}};
  CHECK_INT(trialcfg_env(NULL, eq, 1, NULL, NULL, &e, &err), FT_EINPUT);
  setting nul[] = {{TARGET_ENV, "A", NULL}};
  CHECK_INT(trialcfg_env(NULL, nul, 1, NULL, NULL, &e, &err), FT_EINPUT);
  char *extra[] = {"NOVALUE", NULL};
  CHECK_INT(trialcfg_env(NULL, NULL, 0, NULL, extra, &e, &err), FT_EINPUT);
  CHECK(err && strstr(err, "NOVALUE"));
  free(err);
}

/* jaxlib >= 0.4.32 raises ValueError when XLA_CLIENT_MEM_FRACTION and
 * XLA_PYTHON_CLIENT_MEM_FRACTION are both set (jax-ml/jax jaxlib/xla_client.py:180-190): a
 * sweep that sets one drops the other from what the child inherits, every copy of it. */
TEST(env_unset_drops_inherited_names) {
  char *base[] = {"PATH=/usr/bin", "XLA_PYTHON_CLIENT_MEM_FRACTION=0.9",
                  "XLA_PYTHON_CLIENT_MEM_FRACTION=0.8", "XLA_PYTHON_CLIENT_MEM=keep", NULL};
  setting s[] = {{TARGET_ENV, "XLA_CLIENT_MEM_FRACTION", "0.85"}};
  char *unset[] = {"XLA_PYTHON_CLIENT_MEM_FRACTION", "NOT_THERE", NULL};
  trial_env e;
  CHECK_INT(trialcfg_env(base, s, 1, unset, NULL, &e, NULL), 0);
  CHECK(envp_get(e.envp, "XLA_PYTHON_CLIENT_MEM_FRACTION") == NULL);
  CHECK_STR(envp_get(e.envp, "XLA_PYTHON_CLIENT_MEM"), "keep"); /* a prefix is another name */
  CHECK_STR(envp_get(e.envp, "XLA_CLIENT_MEM_FRACTION"), "0.85");
  CHECK_STR(envp_get(e.envp, "PATH"), "/usr/bin");
  CHECK_INT(envp_count(e.envp), 3);
  trialcfg_env_free(&e);
  /* A setting of an unset name still reaches the child: unset drops only what is inherited. */
  setting both[] = {{TARGET_ENV, "XLA_PYTHON_CLIENT_MEM_FRACTION", "0.7"}};
  CHECK_INT(trialcfg_env(base, both, 1, unset, NULL, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "XLA_PYTHON_CLIENT_MEM_FRACTION"), "0.7");
  trialcfg_env_free(&e);
  char *err = NULL;
  char *bad[] = {"NOT A NAME", NULL};
  CHECK_INT(trialcfg_env(base, NULL, 0, bad, NULL, &e, &err), FT_EINPUT);
  CHECK(e.envp == NULL);
  CHECK(err && strstr(err, "NOT A NAME"));
  free(err);
}

/* A cache directory, from anywhere, turns XLA's flag-blind caches off unless the caller or the
 * experiment chose; without a directory nothing is added. */
TEST(env_cache_dir_turns_xla_caches_off) {
  char *base[] = {"PATH=/usr/bin", NULL};
  setting dir[] = {{TARGET_ENV, "JAX_COMPILATION_CACHE_DIR", "/tmp/jc"}};
  trial_env e;
  CHECK_INT(trialcfg_env(base, dir, 1, NULL, NULL, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"), "none");
  trialcfg_env_free(&e);
  /* Inherited from the caller, the same. */
  char *inherited[] = {"JAX_COMPILATION_CACHE_DIR=/tmp/jc", NULL};
  CHECK_INT(trialcfg_env(inherited, NULL, 0, NULL, NULL, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"), "none");
  CHECK_INT(envp_count(e.envp), 2);
  trialcfg_env_free(&e);
  /* An explicit choice is kept, the caller's or the experiment's ('' included). */
  char *chosen[] = {"JAX_COMPILATION_CACHE_DIR=/tmp/jc",
                    "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=all", NULL};
  CHECK_INT(trialcfg_env(chosen, NULL, 0, NULL, NULL, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"), "all");
  trialcfg_env_free(&e);
  setting both[] = {{TARGET_ENV, "JAX_COMPILATION_CACHE_DIR", "/tmp/jc"},
                    {TARGET_ENV, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES", ""}};
  CHECK_INT(trialcfg_env(base, both, 2, NULL, NULL, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"), "");
  trialcfg_env_free(&e);
  /* No directory, or an empty one (jax then has no cache): nothing added. */
  CHECK_INT(trialcfg_env(base, NULL, 0, NULL, NULL, &e, NULL), 0);
  CHECK(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES") == NULL);
  trialcfg_env_free(&e);
  setting empty[] = {{TARGET_ENV, "JAX_COMPILATION_CACHE_DIR", ""}};
  CHECK_INT(trialcfg_env(base, empty, 1, NULL, NULL, &e, NULL), 0);
  CHECK(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES") == NULL);
  trialcfg_env_free(&e);
}

/* A default (the sweep's own cache directory) applies only where nothing set the name: not
 * the caller, not the experiment (an empty value, which turns jax's cache off, counts), not an
 * extra; applied, it brings the XLA-caches rule with it. */
TEST(env_defaults_only_where_unset) {
  char *base[] = {"PATH=/usr/bin", NULL};
  char *defaults[] = {"JAX_COMPILATION_CACHE_DIR=/logs/sweep-1/jax-cache", NULL};
  trial_env e;
  CHECK_INT(trialcfg_env_defaults(base, NULL, 0, NULL, NULL, defaults, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_COMPILATION_CACHE_DIR"), "/logs/sweep-1/jax-cache");
  CHECK_STR(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"), "none");
  CHECK_INT(envp_count(e.envp), 3);
  trialcfg_env_free(&e);
  char *inherited[] = {"JAX_COMPILATION_CACHE_DIR=/mine", NULL};
  CHECK_INT(trialcfg_env_defaults(inherited, NULL, 0, NULL, NULL, defaults, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_COMPILATION_CACHE_DIR"), "/mine");
  trialcfg_env_free(&e);
  char *off[] = {"JAX_COMPILATION_CACHE_DIR=", NULL};
  CHECK_INT(trialcfg_env_defaults(off, NULL, 0, NULL, NULL, defaults, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_COMPILATION_CACHE_DIR"), "");
  CHECK(envp_get(e.envp, "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES") == NULL);
  trialcfg_env_free(&e);
  setting empty[] = {{TARGET_ENV, "JAX_COMPILATION_CACHE_DIR", ""}};
  CHECK_INT(trialcfg_env_defaults(base, empty, 1, NULL, NULL, defaults, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_COMPILATION_CACHE_DIR"), "");
  trialcfg_env_free(&e);
  char *extra[] = {"JAX_COMPILATION_CACHE_DIR=/extra", NULL};
  CHECK_INT(trialcfg_env_defaults(base, NULL, 0, NULL, extra, defaults, &e, NULL), 0);
  CHECK_STR(envp_get(e.envp, "JAX_COMPILATION_CACHE_DIR"), "/extra");
  trialcfg_env_free(&e);
  char *bad[] = {"no equals sign", NULL};
  char *err = NULL;
  CHECK_INT(trialcfg_env_defaults(base, NULL, 0, NULL, NULL, bad, &e, &err), FT_EINPUT);
  CHECK(e.envp == NULL);
  free(err);
}

/* ---- shell quoting ---- */

static void check_quote(const char *in, const char *want) {
  char *q = trialcfg_shell_quote(in);
  CHECK_STR(q, want);
  free(q);
}

TEST(shell_quote_forms) {
  check_quote("it's", "'it'\\''s'");
  check_quote("", "''");
  check_quote("plain", "'plain'");
  check_quote("'", "\\'");
  check_quote("a''b", "'a'\\'\\''b'");
  check_quote("'x'", "\\''x'\\'");
  check_quote("$HOME `id` \\ \"", "'$HOME `id` \\ \"'");
  check_quote("a\nb", "'a\nb'");
}

static void check_fish_quote(const char *in, const char *want) {
  char *q = trialcfg_fish_quote(in);
  CHECK_STR(q, want);
  free(q);
}

TEST(fish_quote_forms) {
  /* fish: inside '...' only \' and \\ are escapes; newlines and everything else are literal. */
  check_fish_quote("it's", "'it\\'s'");
  check_fish_quote("", "''");
  check_fish_quote("ends in \\", "'ends in \\\\'");
  check_fish_quote("x\\'y", "'x\\\\\\'y'");
  check_fish_quote("$HOME `id` (echo) \"", "'$HOME `id` (echo) \"'");
  check_fish_quote("a\nb", "'a\nb'");
}

TEST(unsafe_env_names) {
  const char *unsafe[] = {"PATH",         "LD_PRELOAD",    "LD_LIBRARY_PATH",
                          "BASH_ENV",     "ENV",           "PROMPT_COMMAND",
                          "PS4",          "IFS",           "SHELLOPTS",
                          "PYTHONPATH",   "PYTHONSTARTUP", "DYLD_INSERT_LIBRARIES",
                          "BASH_FUNC_x%%"};
  for (size_t i = 0; i < sizeof unsafe / sizeof *unsafe; i++)
    CHECK_INT(trialcfg_unsafe_env(unsafe[i]), 1);
  const char *safe[] = {"XLA_PYTHON_CLIENT_MEM_FRACTION",
                        "NCCL_PROTO",
                        "TF_CPP_MIN_LOG_LEVEL",
                        "PATHX",
                        "MY_PATH",
                        "CUDA_VISIBLE_DEVICES"};
  for (size_t i = 0; i < sizeof safe / sizeof *safe; i++)
    CHECK_INT(trialcfg_unsafe_env(safe[i]), 0);
}

/* ---- export text ---- */

/* Writes the export into a string; returns the code. *text is always set; caller frees. */
static int export_to_string(export_format fmt, const export_info *info, char **text, char **err) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int rc = trialcfg_export(f, fmt, info, err);
  fclose(f);
  *text = buf;
  return rc;
}

TEST(export_sh_text) {
  const char *comments[] = {"flagtune: sweep 12 \"llama2-7b-fsdp\"",
                            "evil\nrm -rf /tmp/x\r\x1b[2J; echo \x7f"};
  const char *names[] = {"XLA_PYTHON_CLIENT_MEM_FRACTION", "NCCL_PROTO"};
  const char *values[] = {"0.9", "LL,LL128,SIMPLE"};
  export_info info = {comments, 2, "--a=true --b=\"x y\"", NULL, names, values, 2, 0};
  char *text, *err = NULL;
  CHECK_INT(export_to_string(EXPORT_SH, &info, &text, &err), 0);
  CHECK_STR(text,
            "# flagtune: sweep 12 \"llama2-7b-fsdp\"\n"
            "# evil rm -rf /tmp/x  [2J; echo  \n"
            "export XLA_FLAGS='--a=true --b=\"x y\"'\n"
            "export XLA_PYTHON_CLIENT_MEM_FRACTION='0.9'\n"
            "export NCCL_PROTO='LL,LL128,SIMPLE'\n");
  free(text);
  info.tpu_args = "--t=1";
  info.xla_flags = "";
  info.n_comments = 0;
  CHECK_INT(export_to_string(EXPORT_SH, &info, &text, &err), 0);
  CHECK_STR(text,
            "export LIBTPU_INIT_ARGS='--t=1'\n"
            "export XLA_PYTHON_CLIENT_MEM_FRACTION='0.9'\n"
            "export NCCL_PROTO='LL,LL128,SIMPLE'\n");
  free(text);
}

TEST(export_leaves_unsafe_variables_out) {
  const char *names[] = {"NCCL_PROTO", "LD_PRELOAD", "PATH"};
  const char *values[] = {"SIMPLE", "/tmp/evil.so", "/tmp"};
  export_info info = {NULL, 0, "--a=1", NULL, names, values, 3, 0};
  char *text, *err = NULL;
  CHECK_INT(export_to_string(EXPORT_SH, &info, &text, &err), 0);
  CHECK_STR(text,
            "# left out: LD_PRELOAD PATH (flagtune export --unsafe-env includes them)\n"
            "export XLA_FLAGS='--a=1'\n"
            "export NCCL_PROTO='SIMPLE'\n");
  free(text);
  CHECK_INT(export_to_string(EXPORT_FISH, &info, &text, &err), 0);
  CHECK_STR(text,
            "# left out: LD_PRELOAD PATH (flagtune export --unsafe-env includes them)\n"
            "set -gx XLA_FLAGS '--a=1'\n"
            "set -gx NCCL_PROTO 'SIMPLE'\n");
  free(text);
  CHECK_INT(export_to_string(EXPORT_ENV, &info, &text, &err), 0);
  CHECK_STR(text, "XLA_FLAGS=--a=1\nNCCL_PROTO=SIMPLE\n");
  free(text);
  info.unsafe_env = 1;
  CHECK_INT(export_to_string(EXPORT_ENV, &info, &text, &err), 0);
  CHECK_STR(text, "XLA_FLAGS=--a=1\nNCCL_PROTO=SIMPLE\nLD_PRELOAD=/tmp/evil.so\nPATH=/tmp\n");
  free(text);
}

TEST(export_env_text) {
  const char *comments[] = {"ignored"};
  const char *names[] = {"A", "B"};
  const char *values[] = {"x y 'z'", ""};
  export_info info = {comments, 1, "--a=1", "--t=2", names, values, 2, 0};
  char *text, *err = NULL;
  CHECK_INT(export_to_string(EXPORT_ENV, &info, &text, &err), 0);
  CHECK_STR(text, "XLA_FLAGS=--a=1\nLIBTPU_INIT_ARGS=--t=2\nA=x y 'z'\nB=\n");
  free(text);
  /* A line break cannot be carried: refused, and nothing is written. */
  values[1] = "two\nlines";
  CHECK_INT(export_to_string(EXPORT_ENV, &info, &text, &err), FT_EINPUT);
  CHECK(err && strstr(err, "B") && strstr(err, "line break"));
  CHECK_STR(text, "");
  free(text);
  free_err(&err);
  values[1] = "ok";
  info.xla_flags = "--a=\"x\r\"";
  CHECK_INT(export_to_string(EXPORT_ENV, &info, &text, &err), FT_EINPUT);
  CHECK(err && strstr(err, "XLA_FLAGS"));
  free(text);
  free(err);
}

/* The flagfile splits XLA_FLAGS as XLA's ParseArgvFromString does (xla/parse_flags_from_env.cc
 * :100-139): whitespace (blank, tab, CR, LF) between flags, a quoted value (double quotes with
 * backslash escapes, single quotes literal) is one item, an unterminated quote runs to the end. */
TEST(export_flagfile_text) {
  const char *comments[] = {"never in a flagfile: XLA would stop reading there"};
  const char *names[] = {"A"};
  const char *values[] = {"1"};
  export_info info = {comments, 1,     " --a=1\t--b=\"x y\"\r\n--c='p q' --d --e=\"s\\\" t\"",
                      "--t=1",  names, values,
                      1,        0};
  char *text, *err = NULL;
  CHECK_INT(export_to_string(EXPORT_FLAGFILE, &info, &text, &err), 0);
  CHECK_STR(text, "--a=1\n--b=\"x y\"\n--c='p q'\n--d\n--e=\"s\\\" t\"\n");
  free(text);
  info.xla_flags = "--a=\"open ended";
  CHECK_INT(export_to_string(EXPORT_FLAGFILE, &info, &text, &err), 0);
  CHECK_STR(text, "--a=\"open ended\n");
  free(text);
  info.xla_flags = NULL; /* the baseline: an empty file, which XLA reads as no flags */
  CHECK_INT(export_to_string(EXPORT_FLAGFILE, &info, &text, &err), 0);
  CHECK_STR(text, "");
  free(text);
  /* Where XLA would stop reading, the export is refused and writes nothing. */
  const char *stops[] = {"--a=1 b=2", "--a=\"x\"y --b=1", "# comment --a=1"};
  for (int i = 0; i < 3; i++) {
    info.xla_flags = stops[i];
    CHECK_INT(export_to_string(EXPORT_FLAGFILE, &info, &text, &err), FT_EINPUT);
    CHECK(err && strstr(err, "XLA would stop reading"));
    CHECK_STR(text, "");
    free(text);
    free_err(&err);
  }
}

TEST(export_json_text) {
  const char *comments[] = {"line one", "two\nlines"};
  const char *names[] = {"A", "B"};
  const char *values[] = {"1", "it's \"q\"\n"};
  export_info info = {comments, 2, "--a=1", NULL, names, values, 2, 0};
  char *text, *err = NULL;
  CHECK_INT(export_to_string(EXPORT_JSON, &info, &text, &err), 0);
  cJSON *j = cJSON_Parse(text);
  CHECK(j != NULL);
  if (j) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "comments");
    CHECK_INT(cJSON_GetArraySize(c), 2);
    CHECK_STR(cJSON_GetArrayItem(c, 1)->valuestring, "two\nlines");
    CHECK_STR(cJSON_GetObjectItemCaseSensitive(j, "XLA_FLAGS")->valuestring, "--a=1");
    CHECK(cJSON_GetObjectItemCaseSensitive(j, "LIBTPU_INIT_ARGS") == NULL);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(j, "env");
    CHECK_INT(cJSON_GetArraySize(env), 2);
    CHECK_STR(cJSON_GetObjectItemCaseSensitive(env, "B")->valuestring, "it's \"q\"\n");
    cJSON_Delete(j);
  }
  free(text);
  /* XLA_FLAGS stays present when empty; LIBTPU_INIT_ARGS appears when set. */
  info.xla_flags = NULL;
  info.tpu_args = "--t=1";
  info.n_env = 0;
  CHECK_INT(export_to_string(EXPORT_JSON, &info, &text, &err), 0);
  j = cJSON_Parse(text);
  CHECK(j != NULL);
  if (j) {
    CHECK_STR(cJSON_GetObjectItemCaseSensitive(j, "XLA_FLAGS")->valuestring, "");
    CHECK_STR(cJSON_GetObjectItemCaseSensitive(j, "LIBTPU_INIT_ARGS")->valuestring, "--t=1");
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "env")), 0);
    cJSON_Delete(j);
  }
  free(text);
}

TEST(export_rejects_bad_names) {
  const char *bad_names[][1] = {{"1X"}, {"A-B"}, {"A B"}, {""}, {"X;rm"}, {"$(x)"}};
  const char *values[] = {"v"};
  export_format fmts[] = {EXPORT_SH, EXPORT_ENV, EXPORT_JSON};
  for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
    for (int f = 0; f < 3; f++) {
      export_info info = {NULL, 0, "--a=1", NULL, bad_names[i], values, 1, 0};
      char *text, *err = NULL;
      CHECK_INT(export_to_string(fmts[f], &info, &text, &err), FT_EINPUT);
      CHECK(err != NULL);
      CHECK_STR(text, ""); /* nothing half-written */
      free(text);
      free(err);
    }
  }
  /* The same name twice, or an env entry that collides with XLA_FLAGS. */
  const char *dup[] = {"A", "A"};
  const char *vals[] = {"1", "2"};
  export_info info = {NULL, 0, NULL, NULL, dup, vals, 2, 0};
  char *text, *err = NULL;
  CHECK_INT(export_to_string(EXPORT_SH, &info, &text, &err), FT_EINPUT);
  free(text);
  const char *xf[] = {"XLA_FLAGS"};
  export_info info2 = {NULL, 0, "--a=1", NULL, xf, vals, 1, 0};
  CHECK_INT(export_to_string(EXPORT_SH, &info2, &text, &err), FT_EINPUT);
  CHECK(err && strstr(err, "XLA_FLAGS"));
  free(text);
  free(err);
}

/* ---- round trips through real shells ---- */

static char tmpdir[64];

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/ft_trialcfg_XXXXXX");
  CHECK(mkdtemp(tmpdir) != NULL);
}

static int have_shell(const char *sh) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", sh);
  return system(cmd) == 0;
}

/* Runs SHELL sourcing FILE and printing $NAME; returns what it printed (caller frees). */
static char *source_and_print(const char *shell, const char *file, const char *name, size_t *n) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -c '. %s; printf %%s \"$%s\"' 2>&1", shell, file, name);
  FILE *p = popen(cmd, "r");
  char *out = NULL;
  size_t len = 0, cap = 0;
  char chunk[4096];
  size_t got;
  while (p && (got = fread(chunk, 1, sizeof chunk, p)) > 0) {
    if (len + got + 1 > cap) out = xrealloc(out, cap = (len + got + 1) * 2);
    memcpy(out + len, chunk, got);
    len += got;
  }
  int status = p ? pclose(p) : -1;
  CHECK_INT(status, 0);
  if (!out) out = xstrdup("");
  out[len] = '\0';
  *n = len;
  return out;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Exports VALUE as FT_V (and as XLA_FLAGS), sources it in SHELL, and checks the bytes. */
static void round_trip(const char *shell, const char *value, const char *comment) {
  char file[128];
  snprintf(file, sizeof file, "%s/snippet.sh", tmpdir);
  FILE *f = fopen(file, "w");
  CHECK(f != NULL);
  if (!f) return;
  const char *names[] = {"FT_V"};
  const char *values[] = {value};
  const char *comments[] = {comment};
  export_info info = {comments, 1, value, NULL, names, values, 1, 0};
  char *err = NULL;
  CHECK_INT(trialcfg_export(f, EXPORT_SH, &info, &err), 0);
  fclose(f);
  free(err);
  const char *vars[] = {"FT_V", "XLA_FLAGS"};
  for (int i = 0; i < 2; i++) {
    size_t n;
    char *got = source_and_print(shell, file, vars[i], &n);
    if (n != strlen(value) || memcmp(got, value, n) != 0) {
      fprintf(stderr, "  %s: $%s came back as [%s], expected [%s]\n", shell, vars[i], got, value);
      test_failures++;
    }
    free(got);
  }
  unlink(file);
}

TEST(export_sh_round_trips_in_shells) {
  make_tmpdir();
  char pwned[8][96];
  for (int i = 0; i < 8; i++) snprintf(pwned[i], sizeof pwned[i], "%s/pwned_%d", tmpdir, i);
  char v[8][256];
  snprintf(v[0], sizeof v[0], "$(touch %s)", pwned[0]);
  snprintf(v[1], sizeof v[1], "`touch %s`", pwned[1]);
  snprintf(v[2], sizeof v[2], "'; touch %s; '", pwned[2]);
  snprintf(v[3], sizeof v[3], "\"; touch %s; \"", pwned[3]);
  snprintf(v[4], sizeof v[4], "x'\n touch %s\n'", pwned[4]);
  snprintf(v[5], sizeof v[5], "\\'$(touch %s)\\'", pwned[5]);
  char comment_attack[400];
  snprintf(comment_attack, sizeof comment_attack, "sweep\ntouch %s\r\ntouch %s", pwned[6],
           pwned[7]);
  const char *plain[] = {
      "with spaces  and\ttabs",
      "it's a 'quoted' \"string\"",
      "$HOME and ${HOME} and ~ and *",
      "back\\slash \\\\ \\n \\'",
      "new\nline\n\n",
      "\nleading",
      "ünïcødé ✓ 日本語 \xf0\x9f\x9a\x80",
      "\xff\xfe not utf-8 \xc3",
      "''''",
      "",
      "-n",
      "100% !history !! ;&|<>(){}[]#",
      "--xla_dump_to=\"/tmp/a b\" --xla_gpu_enable_latency_hiding_scheduler=true",
      "cr\rlf\r\n",
  };
  const char *shells[] = {"bash", "dash", "zsh"};
  for (int s = 0; s < 3; s++) {
    if (!have_shell(shells[s])) {
      fprintf(stderr, "  note: %s not installed, skipping its round trips\n", shells[s]);
      continue;
    }
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
      round_trip(shells[s], plain[i], "flagtune export");
    for (int i = 0; i < 6; i++) round_trip(shells[s], v[i], comment_attack);
  }
  for (int i = 0; i < 8; i++) {
    if (exists(pwned[i])) fprintf(stderr, "  a command ran: %s exists\n", pwned[i]);
    CHECK(!exists(pwned[i]));
    unlink(pwned[i]);
  }
  rmdir(tmpdir);
}

TEST(export_sh_long_value) {
  make_tmpdir();
  size_t n = 20000;
  char *big = xmalloc(n + 1);
  for (size_t i = 0; i < n; i++) big[i] = "a' \"$`\\\n"[i % 8];
  big[n] = '\0';
  if (have_shell("bash")) round_trip("bash", big, "long");
  if (have_shell("dash")) round_trip("dash", big, "long");
  free(big);
  rmdir(tmpdir);
}
