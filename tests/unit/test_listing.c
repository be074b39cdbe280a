/* view: the trial table's numbers and rows, written without printf (listing_fixed,
 * listing_trial_line), are byte for byte what printf writes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "json.h"
#include "listing.h"
#include "metric.h"
#include "test.h"

/* 0 when listing_fixed(V, D) is snprintf's "%.Df", else prints both. */
static int fixed_differs(double v, int d) {
  char want[64], got[64];
  snprintf(want, sizeof want, "%.*f", d, v);
  listing_fixed(got, sizeof got, v, d);
  if (strcmp(want, got) == 0) return 0;
  fprintf(stderr, "  %.17g with %d decimals: printf '%s', listing_fixed '%s'\n", v, d, want, got);
  return 1;
}

TEST(fixed_is_printf) {
  /* ties exact in binary (round to even), ties that are not (0.005, 2.675), signs, the
   * bounds of the fast path, what falls back */
  static const double edge[] = {
      0,      -0.0,     0.5,    1.5,      2.5,       0.25,     0.125,
      0.375,  0.005,    2.675,  1.005,    -0.5,      -2.5,     -0.004,
      0.0049, 9.995,    99.95,  999.5,    1e15,      -1e15,    999999999999999.9,
      1e16,   1e300,    5e-324, INFINITY, -INFINITY, NAN,      -NAN,
      4.35,   1234.565, 0.045,  0.95,     65535.5,   123456.75};
  int bad = 0;
  for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (int d = 0; d <= 2; d++) bad += fixed_differs(edge[i], d);
  /* values near every tie: k/200 and k/20 and their neighbours, and random magnitudes */
  for (int k = -20000; k <= 20000; k++)
    for (int d = 0; d <= 2; d++) {
      double v = k / 200.0;
      bad += fixed_differs(v, d) + fixed_differs(nextafter(v, INFINITY), d) +
             fixed_differs(nextafter(v, -INFINITY), d);
    }
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double v = ldexp((double)(x >> 11), -53) * pow(10, (double)(x % 17)) * (x & 1 ? -1 : 1);
    bad += fixed_differs(v, (int)(x % 3));
  }
  CHECK_INT(bad, 0);
}

/* What listing_trial_line wrote for T, read back through a temporary file on stdout. */
static char *line_of(const store_trial_line *t, int higher) {
  char path[] = "/tmp/flagtune-test-view-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  dup2(fd, STDOUT_FILENO);
  listing_trial_line(t, higher);
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  off_t n = lseek(fd, 0, SEEK_END);
  char *text = xcalloc((size_t)n + 1, 1);
  if (pread(fd, text, (size_t)n, 0) != n) text[0] = '\0';
  close(fd);
  unlink(path);
  return text;
}

/* The row as printf writes it, with the strings made terminal-safe (the table's format). */
static char *printf_line(const store_trial_line *t, int higher) {
  char val[32], dur[32], first[32];
  char *role = json_terminal_text(t->role, NULL), *status = json_terminal_text(t->status, NULL);
  char *label = json_terminal_text(t->label, NULL), *error = json_terminal_text(t->error, NULL);
  listing_cell(val, sizeof val, metric_shown(t->value, higher), "%.2f");
  listing_cell(dur, sizeof dur, t->duration_s, "%.1f");
  listing_cell(first, sizeof first, t->first_step_ms / 1e3, "%.1f");
  char *row = xasprintf("%5.0f  %-8s %-11s %10s %6.0f %8s %9s  %s\n", t->number, role, status, val,
                        t->n_steps, dur, first,
                        strcmp(role, "baseline") == 0 ? "(baseline)"
                        : label                       ? label
                                                      : "");
  if (error && strcmp(status, "ok") != 0) {
    size_t n = strcspn(error, "\n");
    const char *esc = strstr(error, "\\x0a");
    if (esc && (size_t)(esc - error) < n) n = (size_t)(esc - error);
    char *both = xasprintf("%s%7s%.*s\n", row, "", (int)(n > 160 ? 160 : n), error);
    free(row);
    row = both;
  }
  free(role), free(status), free(label), free(error);
  return row;
}

TEST(trial_line_is_printf) {
  char long_label[700], long_error[400];
  memset(long_label, 'x', sizeof long_label - 1), long_label[sizeof long_label - 1] = '\0';
  memset(long_error, 'e', sizeof long_error - 1), long_error[sizeof long_error - 1] = '\0';
  const store_trial_line rows[] = {
      {0, 412.3, 100, 61.25, 8125, "baseline", "ok", "{}", NULL},
      {17, 398.125, 100, 60.05, 7950.5, "search", "ok", "xla_gpu_autotune_level=4", NULL},
      {123456, NAN, 0, NAN, NAN, "search", "oom", "a=1 b=2", "RESOURCE_EXHAUSTED: Out of memory"},
      {3, NAN, NAN, 2.5, NAN, "rerun", "crash", NULL, "Segmentation fault\nat line 2"},
      {4, 1.0 / 3, 7, 0.05, 0.5, "confirm", "timeout", "\x1b[31mred\x1b[0m \xff\xfe", "\x1b]0;x\a"},
      {5, -0.0, 1e9, 1e16, -3.25, "minimize", "pruned", long_label, long_error},
      {6, 2.5, 3, 0.25, 125, "search-with-a-long-role", "interrupted-long", "caf\xc3\xa9", ""},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    for (int higher = 0; higher <= 1; higher++) {
      char *got = line_of(&rows[i], higher), *want = printf_line(&rows[i], higher);
      CHECK(got != NULL);
      CHECK_STR(got, want);
      free(got);
      free(want);
    }
}
