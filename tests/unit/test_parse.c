/* parse: step times from JSON lines and from a pattern matcher, the sanity bounds, and
 * hostile bytes (NUL inside, invalid UTF-8, no terminator, huge lines). */
#include <stdlib.h>

#include "parse.h"
#include "test.h"

static metric_spec json_spec(const char *field, double scale) {
  metric_spec m = {0};
  m.kind = METRIC_JSON;
  m.field = field;
  m.scale = scale;
  return m;
}

/* Parses S (a C string) and returns the code; *ms untouched on anything but PARSE_STEP. */
static int jparse(const char *field, const char *s, double *ms) {
  metric_spec m = json_spec(field, 0);
  return parse_step(&m, s, strlen(s), ms);
}

TEST(json_basic) {
  double ms = 0;
  CHECK_INT(jparse("step_time_ms", "{\"step\": 3, \"step_time_ms\": 412.3}", &ms), PARSE_STEP);
  CHECK_NEAR(ms, 412.3, 1e-12);
  CHECK_INT(jparse("step_time_ms", "  \t{\"step_time_ms\":1e2}  ", &ms), PARSE_STEP);
  CHECK_NEAR(ms, 100, 0);
  CHECK_INT(jparse("step_time_ms", "{\"step_time_ms\": 7}\r", &ms), PARSE_STEP);
  CHECK_NEAR(ms, 7, 0);
}

TEST(json_not_a_metric_line) {
  double ms = -1;
  CHECK_INT(jparse("step_time_ms", "step 3: 412.3 ms", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "I0301 {\"step_time_ms\": 412.3}", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "{\"loss\": 2.1}", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "{\"step_time_ms\": 412.3", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "{\"step_time_ms\": 412.3} trailing", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "[{\"step_time_ms\": 412.3}]", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "   ", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "{\"Step_Time_Ms\": 412.3}", &ms), PARSE_NONE);
  CHECK_INT(jparse("", "{\"\": 412.3}", &ms), PARSE_NONE);
  CHECK_NEAR(ms, -1, 0);
}

TEST(json_dotted_paths) {
  double ms = 0;
  CHECK_INT(jparse("timing.step_ms", "{\"timing\": {\"step_ms\": 55.5, \"n\": 1}}", &ms),
            PARSE_STEP);
  CHECK_NEAR(ms, 55.5, 0);
  CHECK_INT(jparse("a.b.c", "{\"a\": {\"b\": {\"c\": 9}}}", &ms), PARSE_STEP);
  CHECK_NEAR(ms, 9, 0);
  /* A literal dotted key, as some loggers flatten nested names. */
  CHECK_INT(jparse("timing.step_ms", "{\"timing.step_ms\": 12}", &ms), PARSE_STEP);
  CHECK_NEAR(ms, 12, 0);
  CHECK_INT(jparse("timing.step_ms", "{\"timing\": 5}", &ms), PARSE_NONE);
  CHECK_INT(jparse("timing.step_ms", "{\"step_ms\": 5}", &ms), PARSE_NONE);
  CHECK_INT(jparse("timing.step_ms", "{\"timing\": [{\"step_ms\": 5}]}", &ms), PARSE_NONE);
}

TEST(json_numeric_strings) {
  double ms = 0;
  CHECK_INT(jparse("t", "{\"t\": \"412.5\"}", &ms), PARSE_STEP);
  CHECK_NEAR(ms, 412.5, 0);
  CHECK_INT(jparse("t", "{\"t\": \" 3e2 \"}", &ms), PARSE_STEP);
  CHECK_NEAR(ms, 300, 0);
  CHECK_INT(jparse("t", "{\"t\": \"fast\"}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": \"\"}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": \"0x1p3\"}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": \"12ms\"}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": \"NaN\"}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": \"inf\"}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": \"-Infinity\"}", &ms), PARSE_BAD);
}

TEST(json_bad_values) {
  double ms = 99;
  CHECK_INT(jparse("t", "{\"t\": 0}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": -3.5}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": 1e400}", &ms), PARSE_BAD); /* cJSON reads it as inf */
  CHECK_INT(jparse("t", "{\"t\": 86400001}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": null}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": true}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": {\"x\": 1}}", &ms), PARSE_BAD);
  CHECK_NEAR(ms, 99, 0);
  CHECK_INT(jparse("t", "{\"t\": 86400000}", &ms), PARSE_STEP);
  CHECK_NEAR(ms, PARSE_MAX_MS, 0);
}

TEST(json_below_a_nanosecond_is_bad) {
  /* 1e-300 ms would be a 5e302x speedup; 1 ns (1e-6 ms) is the shortest step accepted. */
  double ms = 99;
  CHECK_INT(jparse("t", "{\"t\": 1e-300}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": 9.99e-7}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": \"1e-12\"}", &ms), PARSE_BAD);
  CHECK_INT(jparse("t", "{\"t\": -0.0}", &ms), PARSE_BAD);
  CHECK_NEAR(ms, 99, 0);
  CHECK_INT(jparse("t", "{\"t\": 1e-6}", &ms), PARSE_STEP);
  CHECK_NEAR(ms, PARSE_MIN_MS, 0);
}

TEST(json_nan_tokens_are_bad) {
  /* Python's json.dumps writes these; they are not JSON, so cJSON refuses the line. */
  double ms = 99;
  CHECK_INT(jparse("step_time_ms", "{\"step\": 4, \"step_time_ms\": NaN}", &ms), PARSE_BAD);
  CHECK_INT(jparse("step_time_ms", "{\"step_time_ms\":nan, \"step\": 4}", &ms), PARSE_BAD);
  CHECK_INT(jparse("step_time_ms", "{\"step_time_ms\": Infinity}", &ms), PARSE_BAD);
  CHECK_INT(jparse("step_time_ms", "{\"step_time_ms\" :  -Infinity }", &ms), PARSE_BAD);
  CHECK_INT(jparse("timing.step_ms", "{\"timing\": {\"step_ms\": NaN}}", &ms), PARSE_BAD);
  /* NaN in another field: the metric is not on this line as far as we can tell. */
  CHECK_INT(jparse("step_time_ms", "{\"loss\": NaN, \"step\": 4}", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "{\"loss\": NaN, \"step_time_ms\": 5}", &ms), PARSE_NONE);
  CHECK_INT(jparse("step_time_ms", "{\"step_time_ms\": Nonsense}", &ms), PARSE_NONE);
  CHECK_NEAR(ms, 99, 0);
}

TEST(json_scale) {
  metric_spec m = json_spec("step_time_s", 1000);
  const char *s = "{\"step_time_s\": 0.4123}";
  double ms = 0;
  CHECK_INT(parse_step(&m, s, strlen(s), &ms), PARSE_STEP);
  CHECK_NEAR(ms, 412.3, 1e-9);
  /* 100000 s is more than a day once scaled. */
  const char *big = "{\"step_time_s\": 100000}";
  CHECK_INT(parse_step(&m, big, strlen(big), &ms), PARSE_BAD);
}

TEST(json_hostile_bytes) {
  metric_spec m = json_spec("t", 0);
  double ms = 0;
  /* NUL inside: the bytes after it are part of the line, so it is not one clean object. */
  const char nul[] = "{\"t\": 5}\0garbage";
  CHECK_INT(parse_step(&m, nul, sizeof nul - 1, &ms), PARSE_NONE);
  /* LEN ends before the NUL: just the object. */
  CHECK_INT(parse_step(&m, nul, strlen(nul), &ms), PARSE_STEP);
  CHECK_NEAR(ms, 5, 0);
  /* cJSON would skip a NUL as whitespace; a metric line never holds one. */
  const char nul2[] = "{\"t\": \0 5}";
  CHECK_INT(parse_step(&m, nul2, sizeof nul2 - 1, &ms), PARSE_NONE);
  /* Invalid UTF-8 in another field does not hide the metric. */
  const char *utf = "{\"name\": \"\xff\xfe\xc3\", \"t\": 6}";
  CHECK_INT(parse_step(&m, utf, strlen(utf), &ms), PARSE_STEP);
  CHECK_NEAR(ms, 6, 0);
  /* An unterminated heap copy: ASan catches any read past LEN. */
  const char *s = "{\"t\": 7}";
  size_t n = strlen(s);
  char *heap = malloc(n);
  memcpy(heap, s, n);
  CHECK_INT(parse_step(&m, heap, n, &ms), PARSE_STEP);
  CHECK_NEAR(ms, 7, 0);
  CHECK_INT(parse_step(&m, heap, n - 1, &ms), PARSE_NONE);
  free(heap);
  const char *nan_cut = "{\"t\": NaN}";
  char *h2 = malloc(8);
  memcpy(h2, nan_cut, 8); /* ends inside "NaN" */
  CHECK_INT(parse_step(&m, h2, 8, &ms), PARSE_NONE);
  free(h2);
  unsigned char junk[256];
  for (int i = 0; i < 256; i++) junk[i] = (unsigned char)(255 - i);
  junk[0] = '{';
  CHECK_INT(parse_step(&m, (const char *)junk, sizeof junk, &ms), PARSE_NONE);
}

TEST(json_huge_line_is_not_a_metric) {
  size_t n = (1u << 20) + 64;
  char *big = malloc(n);
  memset(big, ' ', n);
  const char *obj = "{\"t\": 5}";
  memcpy(big, obj, strlen(obj));
  metric_spec m = json_spec("t", 0);
  double ms = 0;
  CHECK_INT(parse_step(&m, big, n, &ms), PARSE_NONE);
  /* Just under the limit, the same padded object is read. */
  CHECK_INT(parse_step(&m, big, 1u << 20, &ms), PARSE_STEP);
  free(big);
}

/* A fake pattern matcher: reads the number after "step_ms=" and counts its calls. */
static int fake_match(void *ctx, const char *line, size_t len, double *out) {
  (*(int *)ctx)++;
  const char *key = "step_ms=";
  size_t k = strlen(key);
  for (size_t i = 0; i + k <= len; i++) {
    if (memcmp(line + i, key, k) != 0) continue;
    char num[32] = {0};
    size_t j = 0;
    for (i += k; i < len && j < sizeof num - 1 && line[i] != ' '; i++) num[j++] = line[i];
    char *end;
    *out = strtod(num, &end);
    return end != num;
  }
  return 0;
}

TEST(pattern_metrics) {
  int calls = 0;
  metric_spec m = {0};
  m.kind = METRIC_PATTERN;
  m.match = fake_match;
  m.match_ctx = &calls;
  double ms = 0;
  const char *a = "step 3 step_ms=412.3 loss=2";
  CHECK_INT(parse_step(&m, a, strlen(a), &ms), PARSE_STEP);
  CHECK_NEAR(ms, 412.3, 1e-12);
  CHECK_INT(parse_step(&m, "loss=2", 6, &ms), PARSE_NONE);
  CHECK_INT(parse_step(&m, "step_ms=-1", 10, &ms), PARSE_BAD);
  CHECK_INT(parse_step(&m, "step_ms=nan", 11, &ms), PARSE_BAD);
  CHECK_INT(parse_step(&m, "step_ms=inf", 11, &ms), PARSE_BAD);
  CHECK_INT(parse_step(&m, "step_ms=0", 9, &ms), PARSE_BAD);
  CHECK_INT(calls, 6);
  m.scale = 0.001; /* microseconds in, milliseconds out */
  CHECK_INT(parse_step(&m, "step_ms=2500", 12, &ms), PARSE_STEP);
  CHECK_NEAR(ms, 2.5, 1e-12);
  /* JSON lines are not JSON-parsed for a pattern metric, and a missing matcher is no metric. */
  m.match = NULL;
  CHECK_INT(parse_step(&m, "step_ms=5", 9, &ms), PARSE_NONE);
  CHECK_INT(parse_step(NULL, "x", 1, &ms), PARSE_NONE);
}
