/* libFuzzer target: parse_step (JSON field and dotted field) and classify_line on arbitrary
 * bytes. Properties: never reads past LEN (ASan), a PARSE_STEP value is finite, positive and
 * at most PARSE_MAX_MS, and the answer does not depend on bytes after LEN. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size heap copy: any read past SIZE is a heap overflow ASan reports. */
  char *line = malloc(size ? size : 1);
  if (size) memcpy(line, data, size);
  static const char *fields[] = {"step_time_ms", "timing.step_ms", "a.b.c"};
  for (int i = 0; i < 3; i++) {
    metric_spec m;
    memset(&m, 0, sizeof m);
    m.kind = METRIC_JSON;
    m.field = fields[i];
    double ms = -1;
    int r = parse_step(&m, line, size, &ms);
    if (r == PARSE_STEP && !(isfinite(ms) && ms > 0 && ms <= PARSE_MAX_MS)) abort();
    if (r != PARSE_STEP && r != PARSE_NONE && r != PARSE_BAD) abort();
  }
  static const char *oom[] = {"CUDA out of memory", ""};
  static const char *invalid[] = {"unsupported combination"};
  classify_patterns p = {oom, 2, invalid, 1};
  line_signal a = classify_line(&p, line, size);
  line_signal b = classify_line(NULL, line, size);
  if (a < LINE_PLAIN || a > LINE_INVALID || b < LINE_PLAIN || b > LINE_INVALID) abort();
  free(line);
  return 0;
}
