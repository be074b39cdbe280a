/* progress: the per-trial line and the status area, formatted without a terminal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "test.h"

static progress_line line_of(int number, outcome status, double value, const char *label) {
  return (progress_line){.number = number,
                         .role = number == 0 ? ROLE_BASELINE : ROLE_SEARCH,
                         .is_baseline = number == 0,
                         .status = status,
                         .value = value,
                         .baseline_ms = 500,
                         .label = label,
                         .done = number + 1,
                         .total = 30};
}

/* Columns of S (UTF-8 aware, escapes counted: only for colourless text). */
static int columns(const char *s) {
  int n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

TEST(abbrev_prefixes_bools_bytes) {
  char *a = progress_abbrev(
      "xla_gpu_enable_latency_hiding_scheduler=true xla_gpu_enable_pipelined_all_gather=false "
      "all_reduce_combine_threshold_bytes=67108864 NCCL_BUFFSIZE=4194304 "
      "XLA_PYTHON_CLIENT_MEM_FRACTION=0.9 steps=2048");
  CHECK_STR(
      a,
      "+latency_hiding_scheduler -pipelined_all_gather all_reduce_combine_threshold_bytes=64MiB "
      "NCCL_BUFFSIZE=4MiB XLA_PYTHON_CLIENT_MEM_FRACTION=0.9 steps=2048");
  free(a);
  /* Not a byte count: left alone; an odd size keeps its digits' meaning. */
  a = progress_abbrev("all_gather_combine_threshold_bytes=-1 x_bytes=1000 y_bytes=1536");
  CHECK_STR(a, "all_gather_combine_threshold_bytes=-1 x_bytes=1000 y_bytes=1.5KiB");
  free(a);
}

TEST(drop_defaults) {
  const char *defaults[] = {"enable_latency_hiding_scheduler=false", "NCCL_PROTO=Simple"};
  char *d = progress_drop_defaults(
      "enable_latency_hiding_scheduler=false NCCL_PROTO=LL enable_x=true", defaults, 2);
  CHECK_STR(d, "NCCL_PROTO=LL enable_x=true");
  free(d);
  d = progress_drop_defaults("enable_latency_hiding_scheduler=false", defaults, 2);
  CHECK_STR(d, "");
  free(d);
}

TEST(line_speedup_and_baseline) {
  progress_line l = line_of(7, OUTCOME_OK, 400, "enable_latency_hiding_scheduler=true");
  char *s = progress_format_line(&l, 0, 0, 0);
  CHECK_STR(s, "[   8/30] #7    ok             400.00 ms  1.250x  +latency_hiding_scheduler");
  free(s);
  l = line_of(0, OUTCOME_OK, 500, "baseline");
  s = progress_format_line(&l, 0, 0, 0);
  CHECK(strstr(s, "baseline") != NULL);
  CHECK(strstr(s, "x ") == NULL); /* no speedup over itself */
  free(s);
  /* The baseline re-measured by confirmation: marked, no "1.028x". */
  l = line_of(21, OUTCOME_OK, 486.4, "baseline");
  l.role = ROLE_CONFIRM;
  l.is_baseline = 1;
  s = progress_format_line(&l, 0, 0, 0);
  CHECK(strstr(s, "baseline (re-measured)") != NULL);
  CHECK(strstr(s, "1.028x") == NULL);
  free(s);
}

TEST(line_rung_and_failure) {
  progress_line l = line_of(3, OUTCOME_OK, 450, "V=a");
  l.rung_steps = 10;
  char *s = progress_format_line(&l, 0, 0, 0);
  CHECK(strstr(s, "[rung 10 steps] V=a") != NULL);
  free(s);
  l = line_of(4, OUTCOME_CRASH, NAN, "V=b");
  s = progress_format_line(&l, 0, 0, 0);
  CHECK(strstr(s, "crash") != NULL);
  CHECK(strstr(s, " ms") == NULL);
  free(s);
  l.not_stored = 1;
  s = progress_format_line(&l, 0, 0, 0);
  CHECK(strstr(s, "not-stored") != NULL);
  free(s);
}

TEST(line_fits_width) {
  const char *label =
      "xla_gpu_all_gather_combine_threshold_bytes=8589934592 "
      "xla_gpu_reduce_scatter_combine_threshold_bytes=8589934592 "
      "xla_gpu_enable_pipelined_all_gather=true A_VERY_LONG_VARIABLE=some-long-value";
  progress_line l = line_of(12, OUTCOME_OK, 431.2, label);
  for (int width = 60; width <= 120; width += 20) {
    char *s = progress_format_line(&l, width, 0, 0);
    CHECK(columns(s) <= width);
    CHECK(strcmp(s + strlen(s) - 3, "...") == 0);
    free(s);
  }
  char *whole = progress_format_line(&l, 60, 0, 1); /* -v: the whole label */
  CHECK(strstr(whole, "A_VERY_LONG_VARIABLE=some-long-value") != NULL);
  free(whole);
  /* Colour adds escapes but takes no column. */
  char *c = progress_format_line(&l, 80, 1, 0);
  CHECK(strstr(c, "\033[32m") != NULL);
  free(c);
}

TEST(status_area) {
  progress_running run[] = {
      {.number = 12, .label = "V=a", .n_steps = 17, .steps_budget = 50, .elapsed_s = 75},
      {.number = 13, .label = "V=b", .profiling = 1, .elapsed_s = 3}};
  progress_state st = {.done = 11,
                       .total = 30,
                       .parallel = 2,
                       .best_ms = 400,
                       .baseline_ms = 500,
                       .best_number = 7,
                       .best_lo = 1.2,
                       .best_hi = 1.3,
                       .eta_s = 3725,
                       .deadline_left_s = -1,
                       .running = run,
                       .n_running = 2};
  st.counts[OUTCOME_OK] = 9;
  st.counts[OUTCOME_OOM] = 2;
  int n = 0;
  char **lines = progress_format_status(&st, 80, 0, &n);
  CHECK_INT(n, 4);
  CHECK_STR(lines[0], "11/30 done  ok 9  oom 2  running 2  ETA 1h02m");
  CHECK_STR(lines[1], "baseline 500.00 ms  best #7 400.00 ms 1.250x (1.200-1.300 over its steps)");
  CHECK(strstr(lines[2], "#12") && strstr(lines[2], "1m15s") && strstr(lines[2], "17/50 steps"));
  CHECK(strstr(lines[3], "PGLE profile run") != NULL);
  for (int i = 0; i < n; i++) CHECK(columns(lines[i]) <= 80);
  progress_free_lines(lines, n);
  lines = progress_format_status(&st, 30, 0, &n);
  for (int i = 0; i < n; i++) CHECK(columns(lines[i]) <= 30);
  progress_free_lines(lines, n);
}

TEST(durations) {
  char b[32];
  progress_duration(42, b, sizeof b);
  CHECK_STR(b, "42s");
  progress_duration(185, b, sizeof b);
  CHECK_STR(b, "3m05s");
  progress_duration(7620, b, sizeof b);
  CHECK_STR(b, "2h07m");
  progress_duration(NAN, b, sizeof b);
  CHECK_STR(b, "0s");
}

TEST(abbrev_short_names) {
  const char *names[] = {"all_gather_combine_threshold_bytes", "enable_latency_hiding_scheduler",
                         "XLA_CLIENT_MEM_FRACTION"};
  const char *shorts[] = {"agctb", "lhs", "XCMF"};
  char *s = progress_abbrev_short(
      "all_gather_combine_threshold_bytes=67108864 enable_latency_hiding_scheduler=true "
      "XLA_CLIENT_MEM_FRACTION=0.9 other_flag=3",
      names, shorts, 3);
  /* byte counts still humanised by the full name; a name without a short one as before */
  CHECK_STR(s, "agctb=64MiB +lhs XCMF=0.9 other_flag=3");
  free(s);
  /* a long label in a narrow line: short names before any cut */
  progress_line l = {.number = 3,
                     .status = OUTCOME_OK,
                     .value = 100,
                     .baseline_ms = 120,
                     .label =
                         "all_gather_combine_threshold_bytes=67108864 "
                         "enable_latency_hiding_scheduler=true",
                     .names = names,
                     .shorts = shorts,
                     .n_names = 3,
                     .done = 1,
                     .total = 4};
  s = progress_format_line(&l, 80, 0, 0);
  CHECK(strstr(s, "agctb=64MiB +lhs") != NULL);
  free(s);
  s = progress_format_line(&l, 0, 0, 0); /* unlimited: whole names */
  CHECK(strstr(s, "all_gather_combine_threshold_bytes=64MiB") != NULL);
  free(s);
}
