/* Units a user writes in an experiment file: byte sizes and durations, parsed exactly.
 * Owns the suffix tables and the rules for what is a whole number of bytes. Must not
 * allocate, print or know about experiments: callers turn WHY into a located message. */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A decimal number as its digits: VALUE = whole + frac / 10^frac_digits, kept in integers
 * so "1.5GiB" can be checked for being a whole number of bytes without rounding. */
typedef struct {
  uint64_t whole;
  uint64_t frac;
  int frac_digits;
} decimal;

static int fail(const char **why, const char *reason) {
  if (why) *why = reason;
  return -1;
}

static const char *skip_space(const char *p) {
  while (*p && isspace((unsigned char)*p)) p++;
  return p;
}

/* Reads "123", "1.5" or "0.25" at *P (no sign, no exponent). Returns 0 or -1 with WHY. */
static int read_decimal(const char **p, decimal *d, const char **why) {
  const char *s = *p;
  memset(d, 0, sizeof *d);
  if (!isdigit((unsigned char)*s)) return fail(why, "expected a number");
  for (; isdigit((unsigned char)*s); s++) {
    if (d->whole > (UINT64_MAX - 9) / 10) return fail(why, "number too large");
    d->whole = d->whole * 10 + (uint64_t)(*s - '0');
  }
  if (*s == '.') {
    s++;
    if (!isdigit((unsigned char)*s)) return fail(why, "expected digits after '.'");
    for (; isdigit((unsigned char)*s); s++) {
      if (d->frac_digits == 18) return fail(why, "too many decimal digits");
      d->frac = d->frac * 10 + (uint64_t)(*s - '0');
      d->frac_digits++;
    }
    /* Trailing zeros carry no value; dropping them keeps "1.50" as exact as "1.5". */
    while (d->frac_digits > 0 && d->frac % 10 == 0) {
      d->frac /= 10;
      d->frac_digits--;
    }
  }
  *p = s;
  return 0;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static uint64_t pow10_u64(int n) {
  uint64_t r = 1;
  while (n-- > 0) r *= 10;
  return r;
}

/* Multiplier for a byte suffix ("", "B", "KB", "KiB", ... case-insensitive), 0 if unknown. */
static uint64_t byte_multiplier(const char *suffix) {
  static const struct {
    const char *name;
    uint64_t mult;
  } table[] = {
      {"", 1},
      {"b", 1},
      {"kb", 1000ull},
      {"mb", 1000ull * 1000},
      {"gb", 1000ull * 1000 * 1000},
      {"tb", 1000ull * 1000 * 1000 * 1000},
      {"pb", 1000ull * 1000 * 1000 * 1000 * 1000},
      {"eb", 1000ull * 1000 * 1000 * 1000 * 1000 * 1000},
      {"kib", 1ull << 10},
      {"mib", 1ull << 20},
      {"gib", 1ull << 30},
      {"tib", 1ull << 40},
      /* units_format_bytes writes these for the largest values, so they parse back. */
      {"pib", 1ull << 50},
      {"eib", 1ull << 60},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcasecmp(suffix, table[i].name) == 0) return table[i].mult;
  return 0;
}

/* D * MULT as an exact integer no larger than INT64_MAX. */
static int scale_exact(const decimal *d, uint64_t mult, int64_t *out, const char **why) {
  const uint64_t limit = (uint64_t)INT64_MAX;
  if (d->whole != 0 && d->whole > limit / mult) return fail(why, "too large");
  uint64_t total = d->whole * mult;
  if (d->frac_digits > 0) {
    /* frac * mult / 10^k is whole only if frac is a multiple of 10^k / gcd(mult, 10^k). */
    uint64_t den = pow10_u64(d->frac_digits);
    uint64_t g = gcd_u64(mult, den);
    uint64_t need = den / g;
    if (d->frac % need != 0) return fail(why, "not a whole number of bytes");
    uint64_t part = d->frac / need;
    if (part > (limit - total) / (mult / g)) return fail(why, "too large");
    total += part * (mult / g);
  }
  *out = (int64_t)total;
  return 0;
}

int units_parse_bytes(const char *s, int64_t *bytes, const char **why) {
  if (!s) return fail(why, "empty size");
  const char *p = skip_space(s);
  if (*p == '\0') return fail(why, "empty size");
  if (*p == '-') return fail(why, "negative size");
  decimal d;
  if (read_decimal(&p, &d, why) != 0) return -1;
  p = skip_space(p);
  char suffix[8];
  size_t n = 0;
  while (p[n] && !isspace((unsigned char)p[n])) n++;
  if (n >= sizeof suffix || *skip_space(p + n) != '\0')
    return fail(why, "unknown unit (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, PiB or EiB)");
  memcpy(suffix, p, n);
  suffix[n] = '\0';
  uint64_t mult = byte_multiplier(suffix);
  if (mult == 0)
    return fail(why, "unknown unit (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, PiB or EiB)");
  int64_t v;
  if (scale_exact(&d, mult, &v, why) != 0) return -1;
  *bytes = v;
  return 0;
}

/* Seconds per duration unit at P; sets *len to the unit's length. 0 when none is there.
 * "ms" is tried before "m" so "500ms" is not read as minutes followed by junk. */
static double duration_unit(const char *p, size_t *len) {
  static const struct {
    const char *name;
    double secs;
  } table[] = {{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    size_t n = strlen(table[i].name);
    if (strncmp(p, table[i].name, n) == 0 && !isalpha((unsigned char)p[n])) {
      *len = n;
      return table[i].secs;
    }
  }
  return 0;
}

int units_parse_duration(const char *s, double *seconds, const char **why) {
  if (!s) return fail(why, "empty duration");
  const char *p = skip_space(s);
  if (*p == '\0') return fail(why, "empty duration");
  if (*p == '-') return fail(why, "negative duration");
  double total = 0, last_unit = INFINITY;
  int parts = 0;
  while (*p) {
    decimal d;
    if (read_decimal(&p, &d, why) != 0) return -1;
    double num = (double)d.whole + (double)d.frac / (double)pow10_u64(d.frac_digits);
    p = skip_space(p);
    size_t len = 0;
    double unit = duration_unit(p, &len);
    if (unit == 0) {
      /* A bare number means seconds, but only on its own: "2h30" is ambiguous. */
      if (*p != '\0' || parts > 0) return fail(why, "unknown unit (use ms, s, m, h or d)");
      unit = 1;
    }
    /* Units must shrink ("2h30m", not "30m2h" or "1h1h"): anything else is a typo. */
    if (!(unit < last_unit)) return fail(why, "units out of order (write e.g. 2h30m)");
    last_unit = unit;
    total += num * unit;
    parts++;
    p = skip_space(p + len);
  }
  if (!isfinite(total)) return fail(why, "too large");
  *seconds = total;
  return 0;
}

void units_format_bytes(int64_t bytes, char *buf, int n) {
  static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (!buf || n <= 0) return;
  /* Work on the magnitude as unsigned so INT64_MIN does not overflow. */
  uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
  const char *sign = bytes < 0 ? "-" : "";
  int i = 0;
  while (i < 6 && mag >= (1ull << (10 * (i + 1)))) i++;
  uint64_t unit = 1ull << (10 * i);
  if (mag % unit == 0)
    snprintf(buf, (size_t)n, "%s%llu%s", sign, (unsigned long long)(mag / unit), names[i]);
  else
    snprintf(buf, (size_t)n, "%s%.1f%s", sign, (double)mag / (double)unit, names[i]);
}
