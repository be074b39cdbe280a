/* units: byte sizes and durations as users write them, and what must be refused. */
#include <stdint.h>

#include "test.h"
#include "units.h"

static int64_t bytes_of(const char *s) {
  int64_t v = -12345;
  const char *why = NULL;
  int rc = units_parse_bytes(s, &v, &why);
  if (rc != 0) {
    fprintf(stderr, "  units_parse_bytes(\"%s\") failed: %s\n", s, why ? why : "(no reason)");
    return -1;
  }
  return v;
}

/* Returns the reason, or NULL when S was (wrongly) accepted. */
static const char *bytes_reason(const char *s) {
  int64_t v = 777;
  const char *why = NULL;
  if (units_parse_bytes(s, &v, &why) == 0) return NULL;
  return why ? why : "(rejected without a reason)";
}

TEST(bytes_plain_and_suffixes) {
  CHECK_INT(bytes_of("512"), 512);
  CHECK_INT(bytes_of("0"), 0);
  CHECK_INT(bytes_of("512B"), 512);
  CHECK_INT(bytes_of("64KiB"), 65536);
  CHECK_INT(bytes_of("436MB"), 436000000);
  CHECK_INT(bytes_of("8GiB"), 8589934592LL);
  CHECK_INT(bytes_of("1TB"), 1000000000000LL);
  CHECK_INT(bytes_of("2TiB"), 2199023255552LL);
  CHECK_INT(bytes_of("1MiB"), 1048576);
}

TEST(bytes_case_and_spaces) {
  CHECK_INT(bytes_of("8gib"), 8589934592LL);
  CHECK_INT(bytes_of("8GIB"), 8589934592LL);
  CHECK_INT(bytes_of("1.5 GiB"), 1610612736LL);
  CHECK_INT(bytes_of("  64 kb  "), 64000);
}

TEST(bytes_fractions_must_be_whole) {
  CHECK_INT(bytes_of("1.5GiB"), 1610612736LL);
  CHECK_INT(bytes_of("0.5KiB"), 512);
  CHECK_INT(bytes_of("1.25KB"), 1250);
  CHECK_INT(bytes_of("2.50MiB"), 2621440);
  CHECK_INT(bytes_of("1.0"), 1);
  CHECK(bytes_reason("1.5") != NULL);
  CHECK(bytes_reason("0.3KiB") != NULL); /* 307.2 bytes */
  CHECK(bytes_reason("1.0001KB") != NULL);
  CHECK_INT(bytes_of("0.000000001GB"), 1);
}

TEST(bytes_rejects_garbage) {
  const char *bad[] = {"",   "   ",   "-1",    "-1KiB",  "8GB/s", "1XiB", "abc", "1e3", "0x10",
                       "1.", ".5KiB", "12 34", "5 K iB", "1KiBB", "+5",   "nan", "inf"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *why = bytes_reason(bad[i]);
    if (!why) fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
    CHECK(why != NULL && why[0] != '\0');
  }
  const char *why = NULL;
  CHECK(units_parse_bytes(NULL, &(int64_t){0}, &why) == -1 && why != NULL);
}

TEST(bytes_overflow) {
  CHECK_INT(bytes_of("9223372036854775807"), INT64_MAX);
  CHECK(bytes_reason("9223372036854775808") != NULL);
  CHECK(bytes_reason("99999999999999999999999") != NULL);
  CHECK(bytes_reason("8388608TiB") != NULL); /* 2^63 */
  CHECK_INT(bytes_of("8388607TiB"), 8388607LL * (1LL << 40));
  CHECK(bytes_reason("9223372036.854775808GB") != NULL);
}

TEST(bytes_failure_leaves_output) {
  int64_t v = 42;
  const char *why = NULL;
  CHECK_INT(units_parse_bytes("1XiB", &v, &why), -1);
  CHECK_INT(v, 42);
  CHECK(why && strstr(why, "unit"));
  CHECK_INT(units_parse_bytes("1.5", &v, &why), -1);
  CHECK(why && strstr(why, "whole"));
}

static double secs_of(const char *s) {
  double v = -1;
  const char *why = NULL;
  if (units_parse_duration(s, &v, &why) != 0) {
    fprintf(stderr, "  units_parse_duration(\"%s\") failed: %s\n", s, why ? why : "?");
    return -1;
  }
  return v;
}

TEST(duration_forms) {
  CHECK_NEAR(secs_of("90"), 90, 1e-9);
  CHECK_NEAR(secs_of("90s"), 90, 1e-9);
  CHECK_NEAR(secs_of("500ms"), 0.5, 1e-12);
  CHECK_NEAR(secs_of("20m"), 1200, 1e-9);
  CHECK_NEAR(secs_of("1.5h"), 5400, 1e-9);
  CHECK_NEAR(secs_of("2h30m"), 9000, 1e-9);
  CHECK_NEAR(secs_of("2h 30m 10s"), 9010, 1e-9);
  CHECK_NEAR(secs_of("1d"), 86400, 1e-9);
  CHECK_NEAR(secs_of("1m500ms"), 60.5, 1e-9);
  CHECK_NEAR(secs_of(" 45 s "), 45, 1e-9);
  CHECK_NEAR(secs_of("0.25"), 0.25, 1e-12);
}

TEST(duration_rejects) {
  const char *bad[] = {"",    "-5",  "5x",  "2h30", "30m2h", "1h1h", "abc", "5 min",
                       "1e3", "inf", "nan", "h",    "1.5.h", "5mss", "10S", "1w"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    double v = 7;
    const char *why = NULL;
    int rc = units_parse_duration(bad[i], &v, &why);
    if (rc == 0) fprintf(stderr, "  accepted \"%s\" as %g\n", bad[i], v);
    CHECK_INT(rc, -1);
    CHECK(why != NULL);
    CHECK_NEAR(v, 7, 0);
  }
}

static void check_format(int64_t b, const char *want) {
  char buf[32];
  units_format_bytes(b, buf, sizeof buf);
  CHECK_STR(buf, want);
}

TEST(format_bytes) {
  check_format(0, "0B");
  check_format(512, "512B");
  check_format(1023, "1023B");
  check_format(65536, "64KiB");
  check_format(1536, "1.5KiB");
  check_format(436000000, "415.8MiB");
  check_format(457179136, "436MiB");
  check_format(457179136 + 1, "436.0MiB");
  check_format(8589934592LL, "8GiB");
  check_format(-2048, "-2KiB");
  check_format(INT64_MAX, "8.0EiB");
  check_format(INT64_MIN, "-8EiB");
}

TEST(format_bytes_truncates) {
  char buf[4] = {'x', 'x', 'x', 'x'};
  units_format_bytes(65536, buf, 3);
  CHECK_STR(buf, "64");
  CHECK_INT(buf[3], 'x');
  units_format_bytes(65536, buf, 0); /* must not write at all */
  CHECK_STR(buf, "64");
}

TEST(format_parses_back) {
  /* What units_format_bytes writes (labels, "flagtune show") must read back as the same
   * number of bytes, up to the largest powers of two. */
  for (int shift = 0; shift <= 62; shift++) {
    int64_t v = (int64_t)1 << shift;
    char buf[64];
    units_format_bytes(v, buf, sizeof buf);
    int64_t back = -1;
    const char *why = NULL;
    CHECK_INT(units_parse_bytes(buf, &back, &why), 0);
    CHECK_INT(back, v);
  }
}
