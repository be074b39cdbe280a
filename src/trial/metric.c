/* A sweep's metric as its user reads it. flagtune stores and ranks a cost, lower is better:
 * a step time in ms, or for metric.better = "higher" a rate's cost, 1000 / rate (parse.c
 * makes the conversion as it reads a line). Speedups are cost ratios, so they need no
 * conversion; only the numbers shown to people go back to the rate here. Must not read the
 * database or decide a ranking. */
#include "metric.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int metric_higher(const char *options_json) {
  cJSON *o = options_json ? cJSON_Parse(options_json) : NULL;
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "better");
  int higher = cJSON_IsString(b) && strcmp(b->valuestring, "higher") == 0;
  cJSON_Delete(o);
  return higher;
}

double metric_shown(double value, int higher) {
  if (!higher || isnan(value)) return value;
  return value > 0 ? 1000.0 / value : NAN;
}

void metric_format(char *buf, size_t n, double value, int higher) {
  double v = metric_shown(value, higher);
  if (isnan(v))
    snprintf(buf, n, "-");
  else if (higher)
    snprintf(buf, n, "%.2f/s", v);
  else
    snprintf(buf, n, "%.2f ms", v);
}
