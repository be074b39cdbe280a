/* metric.better = "higher": parse_step turns a rate into its cost (1000 / rate, the one
 * conversion), and metric.c shows the cost as the rate again. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "parse.h"
#include "test.h"

static int rate_parse(const char *s, double scale, double *ms) {
  metric_spec m = {.kind = METRIC_JSON, .field = "it_per_s", .scale = scale, .rate = 1};
  return parse_step(&m, s, strlen(s), ms);
}

TEST(rate_becomes_cost) {
  double ms = 0;
  CHECK_INT(rate_parse("{\"it_per_s\": 4}", 0, &ms), PARSE_STEP);
  CHECK_NEAR(ms, 250, 1e-12);
  /* A faster configuration (a higher rate) has the lower cost: it ranks first. */
  double fast = 0;
  CHECK_INT(rate_parse("{\"it_per_s\": 5}", 0, &fast), PARSE_STEP);
  CHECK(fast < ms);
  /* scale brings the rate to per second first: 120 per minute is 2/s. */
  CHECK_INT(rate_parse("{\"it_per_s\": 120}", 1.0 / 60, &ms), PARSE_STEP);
  CHECK_NEAR(ms, 500, 1e-9);
}

TEST(rate_bad_values) {
  double ms = 7;
  CHECK_INT(rate_parse("{\"it_per_s\": 0}", 0, &ms), PARSE_BAD);
  CHECK_INT(rate_parse("{\"it_per_s\": -3}", 0, &ms), PARSE_BAD);
  /* Under one item a day: its cost is over the day a step may take. */
  CHECK_INT(rate_parse("{\"it_per_s\": 1e-9}", 0, &ms), PARSE_BAD);
  CHECK_NEAR(ms, 7, 0);
}

TEST(a_loss_is_never_converted) {
  metric_spec m = {.kind = METRIC_JSON, .field = "loss", .any_value = 1, .rate = 1};
  const char *s = "{\"loss\": 2.5}";
  double v = 0;
  CHECK_INT(parse_step(&m, s, strlen(s), &v), PARSE_STEP);
  CHECK_NEAR(v, 2.5, 0);
}

TEST(shown_as_the_rate) {
  char buf[32];
  CHECK_NEAR(metric_shown(250, 1), 4, 1e-12);
  CHECK_NEAR(metric_shown(250, 0), 250, 0);
  CHECK(isnan(metric_shown(NAN, 1)));
  metric_format(buf, sizeof buf, 250, 1);
  CHECK_STR(buf, "4.00/s");
  metric_format(buf, sizeof buf, 412.3, 0);
  CHECK_STR(buf, "412.30 ms");
  metric_format(buf, sizeof buf, NAN, 1);
  CHECK_STR(buf, "-");
}

TEST(options_say_higher) {
  CHECK_INT(metric_higher("{\"skip\": 2, \"better\": \"higher\"}"), 1);
  CHECK_INT(metric_higher("{\"skip\": 2}"), 0);
  CHECK_INT(metric_higher("{\"better\": \"lower\"}"), 0);
  CHECK_INT(metric_higher("not json"), 0);
  CHECK_INT(metric_higher(NULL), 0);
}
