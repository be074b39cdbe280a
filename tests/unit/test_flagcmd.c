/* Tests for src/cli/flagcmd.c and the imported-flag part of store/store.c: parsing the recorded
 * XLA_FLAGS=--help table in tests/data/, patterns, the jaxlib_flags table (import, replace,
 * list, versions), and the command's own exit codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "flagcmd.h"
#include "store.h"
#include "test.h"

/* tests/data/NAME, whole (up to 128 KiB). */
static char *data_file(const char *name) {
  char *path = xasprintf("%s/tests/data/%s", SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  free(path);
  CHECK(f != NULL);
  char *buf = xcalloc(1, 1 << 17);
  if (f) {
    buf[fread(buf, 1, (1 << 17) - 1, f)] = '\0';
    fclose(f);
  }
  return buf;
}

static char *sample(void) {
  return data_file("xla_help_sample.txt");
}

static const store_flag_row *row(const store_flag_row *rows, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(rows[i].name, name) == 0) return &rows[i];
  return NULL;
}

/* store_query's row callback: keeps a copy of each row (an array of values) in the array UD
 * (the row itself is freed after the call). */
static int keep_row(const cJSON *columns, cJSON *row, void *ud) {
  (void)columns;
  cJSON_AddItemToArray((cJSON *)ud, cJSON_Duplicate(row, 1));
  return 0;
}

TEST(parse_recorded_table) {
  char *text = sample();
  store_flag_row *rows = NULL;
  int n = 0;
  CHECK_INT(flagcmd_parse_help(text, &rows, &n), 0);
  CHECK_INT(n, 14);
  const store_flag_row *r = row(rows, n, "xla_gpu_enable_latency_hiding_scheduler");
  CHECK(r != NULL);
  if (r) {
    CHECK_STR(r->type, "bool");
    CHECK_STR(r->default_value, "false");
    CHECK_STR(r->description, "Enable latency-hiding scheduler for XLA:GPU");
  }
  r = row(rows, n, "xla_dump_to");
  if (r) CHECK_STR(r->default_value, ""); /* quotes removed */
  r = row(rows, n, "xla_gpu_enable_command_buffer");
  if (r) {
    CHECK_STR(r->type, "string");
    CHECK_STR(r->default_value, "FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN,DYNAMIC_SLICE_FUSION");
  }
  r = row(rows, n, "xla_gpu_all_gather_combine_threshold_bytes");
  if (r) CHECK_STR(r->type, "int64");
  r = row(rows, n, "xla_gpu_auto_spmd_partitioning_memory_budget_ratio");
  if (r) CHECK_STR(r->default_value, "1.100000");
  /* A help text that runs on to the next line is one description. */
  r = row(rows, n, "xla_gpu_enable_nccl_user_buffers");
  CHECK(r && strstr(r->description, "peak collective memory usage. Also needs NCCL_NVLS_ENABLE"));
  /* The traceback after the table is not part of the last description. */
  CHECK(strstr(rows[n - 1].description, "Traceback") == NULL);
  CHECK_STR(rows[n - 1].name, "xla_gpu_triton_gemm_any");
  flagcmd_rows_free(rows, n);
  free(text);
}

TEST(parse_rejects_non_tables) {
  store_flag_row *rows = NULL;
  int n = -1;
  flagcmd_parse_help(
      "usage: x\nFlags:\n\t--Bad-Name=1\tint32\tx\n\t--xla_a=1\tdouble\tx\n"
      "--xla_b=1 int32 no tabs\nplain text\n",
      &rows, &n);
  CHECK_INT(n, 0);
  flagcmd_rows_free(rows, n);
  flagcmd_parse_help("", &rows, &n);
  CHECK_INT(n, 0);
  flagcmd_rows_free(rows, n);
}

TEST(match_patterns) {
  CHECK(flagcmd_match("latency", "xla_gpu_enable_latency_hiding_scheduler"));
  CHECK(flagcmd_match("LATENCY", "xla_gpu_enable_latency_hiding_scheduler"));
  CHECK(flagcmd_match("xla_gpu_*_threshold_bytes", "xla_gpu_all_gather_combine_threshold_bytes"));
  CHECK(!flagcmd_match("xla_tpu_*", "xla_gpu_enable_latency_hiding_scheduler"));
  CHECK(flagcmd_match("NCCL_PRO?O", "NCCL_PROTO"));
  CHECK(!flagcmd_match("threshold", "NCCL_PROTO"));
  CHECK(flagcmd_match(NULL, "anything"));
}

TEST(store_import_replace_list) {
  char dir[] = "/tmp/ft_flags_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char *path = xasprintf("%s/f.db", dir), *err = NULL;
  store *s = NULL;
  CHECK_INT(store_open(path, 0, &s, &err), 0);
  store_flag_row two[] = {{"xla_b", "bool", "false", "B"}, {"xla_a", "int32", "4", NULL}};
  CHECK_INT(store_flags_import(s, "0.4.31", two, 2, &err), 0);
  CHECK_INT(store_flags_import(s, "0.4.30", two, 1, &err), 0);
  cJSON *list = NULL;
  CHECK_INT(store_flags_list(s, "0.4.31", &list, &err), 0);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "name")->valuestring, "xla_a");
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "description")));
  cJSON_Delete(list);
  /* A second import of one version replaces its list. */
  CHECK_INT(store_flags_import(s, "0.4.31", two, 1, &err), 0);
  CHECK_INT(store_flags_list(s, "0.4.31", &list, &err), 0);
  CHECK_INT(cJSON_GetArraySize(list), 1);
  cJSON_Delete(list);
  list = cJSON_CreateArray();
  CHECK_INT(store_query(s, "SELECT jaxlib FROM jaxlib_flags GROUP BY jaxlib ORDER BY jaxlib",
                        keep_row, list, &err),
            0);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  CHECK_STR(cJSON_GetArrayItem(cJSON_GetArrayItem(list, 1), 0)->valuestring, "0.4.31");
  cJSON_Delete(list);
  CHECK_INT(store_flags_list(s, "9.9", &list, &err), 0);
  CHECK_INT(cJSON_GetArraySize(list), 0);
  cJSON_Delete(list);
  CHECK_STORE_END(s);
  free(err);
  unlink(path);
  free(path);
  char *wal = xasprintf("rm -rf %s", dir);
  CHECK_INT(system(wal), 0);
  free(wal);
}

TEST(command_exit_codes) {
  char *a1[] = {"show", "xla_gpu_enable_latency_hiding_scheduler"};
  CHECK_INT(flagcmd_main(2, a1, "/nonexistent/x.db"), 0);
  char *a2[] = {"show", "xla_gpu_enable_latency_hidding_scheduler"};
  CHECK_INT(flagcmd_main(2, a2, "/nonexistent/x.db"), 2);
  char *a3[] = {"import"};
  CHECK_INT(flagcmd_main(1, a3, "/nonexistent/x.db"), 2);
  char *a4[] = {"--bogus"};
  CHECK_INT(flagcmd_main(1, a4, NULL), 2);
  char *a5[] = {"latency", "--jaxlib", "0.0.0"};
  CHECK_INT(flagcmd_main(3, a5, "/nonexistent/x.db"), 2);
}

/* The probe's reading of one run. Today's XLA names one unknown flag in the singular
 * (openxla/xla xla/parse_flags_from_env.cc:224, "Unknown flag" << (unknown_flags.size() > 1 ?
 * "s" : "")), which a probe of one flag at a time must see as a refusal. */
TEST(probe_reads_single_unknown_flag) {
  const char *names[] = {"xla_gpu_made_up_flag", "xla_gpu_autotune_level"};
  int st[2] = {0}, sus[2] = {0};
  const char *out =
      "F1123 11:20:00.123456   51234 parse_flags_from_env.cc:224] Unknown flag in "
      "XLA_FLAGS: --xla_gpu_made_up_flag=true\n*** Check failure stack trace: ***\n";
  CHECK_INT(flagcmd_probe_parse(out, names, 2, st, sus), 1);
  CHECK_INT(st[0], PROBE_UNKNOWN);
  CHECK_INT(st[1], PROBE_ACCEPTED);
  CHECK_INT(sus[0], 0); /* the singular is today's exact list */
  /* A prefix of a listed name is not that name. */
  const char *pre[] = {"xla_gpu_made_up"};
  int one = 0;
  CHECK_INT(flagcmd_probe_parse(out, pre, 1, &one, NULL), 0);
  /* Today's plural lists exactly the unknown flags. */
  int st2[2] = {0}, sus2[2] = {0};
  const char *two =
      "F1123 parse_flags_from_env.cc:224] Unknown flags in XLA_FLAGS: "
      "--xla_gpu_made_up_flag=true --xla_gpu_autotune_level=4\n";
  CHECK_INT(flagcmd_probe_parse(two, names, 2, st2, sus2), 2);
  CHECK_INT(sus2[0] + sus2[1], 0);
}

/* jax <= 0.5.0 joined XLA's whole argv vector after tsl's Flags::Parse had compacted it (the
 * span in DieIfEnvHasUnknownFlagsLeft before XLA commit b727c5cd): nulls as empty entries, and
 * tokens left over from before the compaction, known flags among them. Such a list is read,
 * but its names are only suspects until confirmed one at a time. */
TEST(probe_old_list_is_suspect) {
  const char *names[] = {"xla_gpu_made_up_flag", "xla_gpu_enable_latency_hiding_scheduler"};
  int st[2] = {0}, sus[2] = {0};
  const char *out =
      "F0000 parse_flags_from_env.cc:234] Unknown flags in XLA_FLAGS: "
      "--xla_gpu_made_up_flag=true  --xla_gpu_enable_latency_hiding_scheduler=false "
      "\nPerhaps you meant to specify these on the TF_XLA_FLAGS envvar?\n";
  CHECK_INT(flagcmd_probe_parse(out, names, 2, st, sus), 2);
  CHECK_INT(sus[0], 1);
  CHECK_INT(sus[1], 1);
  /* A lone unknown flag in the old form: "--x " with its trailing blank. */
  int one = 0, s1 = 0;
  CHECK_INT(flagcmd_probe_parse("Unknown flags in XLA_FLAGS: --xla_gpu_made_up_flag=true \n", names,
                                1, &one, &s1),
            1);
  CHECK_INT(one, PROBE_UNKNOWN);
  CHECK_INT(s1, 1);
  /* The TensorFlow-era wording is still read. */
  int tf = 0;
  CHECK_INT(flagcmd_probe_parse("Unknown flag(s) in XLA_FLAGS: --xla_gpu_made_up_flag=1", names, 1,
                                &tf, NULL),
            1);
}

/* A value XLA cannot parse: tsl's "Couldn't interpret value V for flag F."
 * (xla/tsl/util/command_line_flags.cc) names the flag; it is known, its value is not. */
TEST(probe_reads_value_refusal) {
  const char *names[] = {"xla_gpu_made_up_flag", "xla_gpu_autotune_level"};
  int st[2] = {0};
  const char *out =
      "E1123 command_line_flags.cc:122] Couldn't interpret value x for flag "
      "xla_gpu_autotune_level.\n"
      "F1123 parse_flags_from_env.cc:210] Check failed: tsl::Flags::Parse(&env_argv->argc, "
      "env_argv->argv.data(), flag_list) Flag parsing failed.\nusage: --xla_gpu_autotune_level=x\n";
  CHECK_INT(flagcmd_probe_parse(out, names, 2, st, NULL), 1);
  CHECK_INT(st[0], PROBE_ACCEPTED);
  CHECK_INT(st[1], PROBE_BAD_VALUE);
  /* Decided entries stay as they are; no output changes nothing. */
  CHECK_INT(flagcmd_probe_parse(out, names, 2, st, NULL), 0);
  CHECK_INT(flagcmd_probe_parse("", names, 2, st, NULL), 0);
  CHECK_INT(flagcmd_probe_parse(NULL, names, 2, st, NULL), 0);
}

/* tsl's Flags::Parse logs every value it cannot parse before it returns false
 * (xla/tsl/util/command_line_flags.cc), so one run names them all. */
TEST(probe_reads_every_value_refusal) {
  const char *names[] = {"xla_gpu_autotune_level", "xla_gpu_enable_triton_gemm",
                         "xla_gpu_all_reduce_combine_threshold_bytes"};
  int st[3] = {0};
  const char *out =
      "E1126 command_line_flags.cc:105] Couldn't interpret value x for flag "
      "xla_gpu_autotune_level.\n"
      "E1126 command_line_flags.cc:105] Couldn't interpret value 12MiB for flag "
      "xla_gpu_all_reduce_combine_threshold_bytes.\n"
      "F1126 02:13:07.427349     472 parse_flags_from_env.cc:220] Check failed: "
      "tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) Flag parsing "
      "failed.\n";
  CHECK_INT(flagcmd_probe_parse(out, names, 3, st, NULL), 2);
  CHECK_INT(st[0], PROBE_BAD_VALUE);
  CHECK_INT(st[1], PROBE_ACCEPTED);
  CHECK_INT(st[2], PROBE_BAD_VALUE);
}

/* The table jaxlib 0.11.2 printed for XLA_FLAGS=--help on an H200 (captured by
 * tests/gpu/truth.sh): after the QCHECK's "Flag parsing failed." (parse_flags_from_env.cc:220)
 * and "usage: --help", 75 rows, several with descriptions that run on over lines. It is a
 * partial list: the same jaxlib ran trials with xla_gpu_enable_command_buffer, absent here. */
TEST(parse_real_jaxlib_0_11_2_table) {
  char *text = data_file("xla_help_jaxlib_0.11.2.txt");
  store_flag_row *rows = NULL;
  int n = 0;
  CHECK_INT(flagcmd_parse_help(text, &rows, &n), 0);
  CHECK_INT(n, 75);
  const store_flag_row *r = row(rows, n, "xla_gpu_autotune_level");
  CHECK(r != NULL);
  if (r) {
    CHECK_STR(r->type, "int32");
    CHECK_STR(r->default_value, "4");
    CHECK(strncmp(r->description, "[Stable] Set GEMM and Convolution auto-tuning level.", 52) == 0);
  }
  r = row(rows, n, "xla_cpu_experimental_xnn_graph_fusion_mode");
  CHECK(r && strstr(r->description, "XNN_GRAPH_FUSION_MODE_GREEDY") != NULL);
  CHECK(row(rows, n, "xla_gpu_enable_command_buffer") == NULL);
  CHECK(row(rows, n, "xla_gpu_enable_latency_hiding_scheduler") == NULL);
  flagcmd_rows_free(rows, n);
  free(text);
}
