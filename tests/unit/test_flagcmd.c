/* Tests for src/flagcmd.c and the imported-flag part of src/store.c: parsing the recorded
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

static char *sample(void) {
  char *path = xasprintf("%s/tests/data/xla_help_sample.txt", SOURCE_DIR);
  FILE *f = fopen(path, "rb");
  free(path);
  CHECK(f != NULL);
  char *buf = xcalloc(1, 1 << 16);
  if (f) {
    buf[fread(buf, 1, (1 << 16) - 1, f)] = '\0';
    fclose(f);
  }
  return buf;
}

static const store_flag_row *row(const store_flag_row *rows, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(rows[i].name, name) == 0) return &rows[i];
  return NULL;
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
  flagcmd_parse_help("usage: x\nFlags:\n\t--Bad-Name=1\tint32\tx\n\t--xla_a=1\tdouble\tx\n"
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
  CHECK_INT(store_flags_versions(s, &list, &err), 0);
  CHECK_INT(cJSON_GetArraySize(list), 2);
  CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(list, 1), "jaxlib")->valuestring, "0.4.31");
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
