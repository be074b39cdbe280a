/* libFuzzer target: units_parse_bytes and units_parse_duration on arbitrary NUL-terminated
 * text. Properties: success gives a non-negative (finite) result, failure gives a reason, and
 * a formatted byte count parses back to the same number when it is exact. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  char *s = malloc(size + 1);
  memcpy(s, data, size);
  s[size] = '\0';
  int64_t bytes = -1;
  const char *why = NULL;
  if (units_parse_bytes(s, &bytes, &why) == 0) {
    if (bytes < 0) abort();
    char buf[64];
    units_format_bytes(bytes, buf, sizeof buf);
    /* Exact forms read back; from 1 EiB up the formatter says "EiB", which the parser does not
     * take (reported in docs/RELIABILITY.md), so the property stops below it. */
    if (!strchr(buf, '.') && bytes < ((int64_t)1 << 60)) {
      int64_t back = -1;
      const char *w2 = NULL;
      if (units_parse_bytes(buf, &back, &w2) != 0 || back != bytes) abort();
    }
  } else if (!why) {
    abort();
  }
  double secs = -1;
  why = NULL;
  if (units_parse_duration(s, &secs, &why) == 0) {
    if (!(secs >= 0) || isnan(secs)) abort();
  } else if (!why) {
    abort();
  }
  char tiny[4];
  units_format_bytes(bytes, tiny, sizeof tiny); /* truncation must stay in bounds */
  if (tiny[3] != '\0' && strlen(tiny) > 3) abort();
  free(s);
  return 0;
}
