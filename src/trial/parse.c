/* Reading one step time out of one output line: JSON metric lines (cJSON, dotted field
 * paths, numbers or numeric strings) or a caller-supplied pattern matcher, then the unit
 * scale and the sanity bounds. Must be safe on any bytes (NUL inside, invalid UTF-8, no
 * terminator) and must not allocate more than one bounded copy of the line, keep state,
 * or know about trials, processes or Lua. */
#include "parse.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "diag.h"

/* A JSON metric line is one small object; anything longer is data, not a step time, and
 * copying it for cJSON would only cost memory. */
#define PARSE_MAX_JSON (1u << 20)

/* What a value read from the line means once scaled: a step time must be a finite number of
 * milliseconds from 1 ns to a day; any finite value will do for M->any_value (a loss). */
static int judge(const metric_spec *m, double v, double *ms) {
  double x = v * (m->scale > 0 ? m->scale : 1);
  /* The one place a rate becomes a cost: everything past here ranks lower-is-better. */
  if (m->rate && !m->any_value) x = x > 0 ? 1000.0 / x : -1;
  if (!isfinite(x)) return PARSE_BAD;
  if (!m->any_value && (x < PARSE_MIN_MS || x > PARSE_MAX_MS)) return PARSE_BAD;
  *ms = x;
  return PARSE_STEP;
}

/* True when S[0..n) is NaN or Infinity however spelled (nan, NaN, inf, Infinity, signed).
 * Python's json module writes NaN and Infinity; strtod would read them as numbers. */
static int is_nonfinite_word(const char *s, size_t n) {
  if (n > 0 && (*s == '-' || *s == '+')) {
    s++;
    n--;
  }
  static const char *const words[] = {"nan", "inf", "infinity"};
  for (int i = 0; i < 3; i++)
    if (n == strlen(words[i]) && strncasecmp(s, words[i], n) == 0) return 1;
  return 0;
}

/* A JSON string that should hold a number ("412.5", " 3e2 "). */
static int judge_string(const metric_spec *m, const char *s, double *ms) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
  if (n == 0 || is_nonfinite_word(s, n)) return PARSE_BAD;
  /* Only decimal notation: strtod would also take hex ("0x1p3"), which no logger means. */
  for (size_t i = 0; i < n; i++)
    if (!strchr("0123456789+-.eE", s[i])) return PARSE_BAD;
  char *end;
  double v = strtod(s, &end);
  if (end != s + n) return PARSE_BAD;
  return judge(m, v, ms);
}

/* The item at dotted PATH inside OBJ; a literal key with dots is tried when the walk fails,
 * so {"timing.step_ms": 3} works as well as {"timing": {"step_ms": 3}}. */
static const cJSON *find_field(const cJSON *obj, const char *path) {
  const cJSON *cur = obj;
  const char *p = path;
  char key[256];
  while (cur && *p) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (n >= sizeof key || !cJSON_IsObject(cur)) {
      cur = NULL;
      break;
    }
    memcpy(key, p, n);
    key[n] = '\0';
    cur = cJSON_GetObjectItemCaseSensitive(cur, key);
    p = dot ? dot + 1 : p + n;
  }
  if (cur) return cur;
  return strchr(path, '.') ? cJSON_GetObjectItemCaseSensitive(obj, path) : NULL;
}

/* True when the quoted key KEY[0..kn) appears in LINE at or after *FROM; moves *FROM past it. */
static int find_key(const char *line, size_t len, size_t *from, const char *key, size_t kn) {
  char quoted[260];
  if (kn + 2 > sizeof quoted) return 0;
  quoted[0] = '"';
  memcpy(quoted + 1, key, kn);
  quoted[kn + 1] = '"';
  /* A bounded byte search, not strstr: the line may hold NULs and has no terminator. */
  for (size_t i = *from; i + kn + 2 <= len; i++) {
    if (memcmp(line + i, quoted, kn + 2) == 0) {
      *from = i + kn + 2;
      return 1;
    }
  }
  return 0;
}

/* cJSON cannot represent NaN, so {"step_time_ms": NaN} fails to parse. Such a line still
 * carries the metric, with a bad value: find the field's key(s) in order and a NaN or
 * Infinity token after its colon. */
static int nonfinite_field(const char *line, size_t len, const char *path) {
  size_t at = 0;
  for (const char *p = path; *p;) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (!find_key(line, len, &at, p, n)) return 0;
    p = dot ? dot + 1 : p + n;
  }
  while (at < len && isspace((unsigned char)line[at])) at++;
  if (at >= len || line[at] != ':') return 0;
  at++;
  while (at < len && isspace((unsigned char)line[at])) at++;
  size_t end = at;
  while (end < len && (isalpha((unsigned char)line[end]) || line[end] == '-' || line[end] == '+'))
    end++;
  return end > at && is_nonfinite_word(line + at, end - at);
}

static int parse_json_line(const metric_spec *m, const char *line, size_t len, double *ms) {
  if (!m->field || !*m->field || len > PARSE_MAX_JSON) return PARSE_NONE;
  size_t start = 0;
  while (start < len && isspace((unsigned char)line[start])) start++;
  if (start >= len || line[start] != '{') return PARSE_NONE;
  /* No logger writes NUL into a JSON line, and cJSON would skip one as whitespace. */
  if (memchr(line + start, '\0', len - start)) return PARSE_NONE;
  /* cJSON wants a terminated buffer, and LINE may have none. */
  char *buf = xmalloc(len - start + 1);
  memcpy(buf, line + start, len - start);
  buf[len - start] = '\0';
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(buf, len - start, &end, 0);
  int rc = PARSE_NONE;
  if (!root) {
    if (nonfinite_field(line, len, m->field)) rc = PARSE_BAD;
    goto cleanup;
  }
  /* The whole line must be the object: trailing bytes mean it is something else. */
  for (; end && end < buf + (len - start); end++)
    if (!isspace((unsigned char)*end)) goto cleanup;
  const cJSON *item = cJSON_IsObject(root) ? find_field(root, m->field) : NULL;
  if (!item) goto cleanup;
  if (cJSON_IsNumber(item))
    rc = judge(m, item->valuedouble, ms);
  else if (cJSON_IsString(item))
    rc = judge_string(m, item->valuestring, ms);
  else
    rc = PARSE_BAD; /* the metric is there but null, a bool or a container */
cleanup:
  cJSON_Delete(root);
  free(buf);
  return rc;
}

int parse_step(const metric_spec *m, const char *line, size_t len, double *ms) {
  if (!m || !line || !ms) return PARSE_NONE;
  if (m->kind == METRIC_JSON) return parse_json_line(m, line, len, ms);
  if (m->kind != METRIC_PATTERN || !m->match) return PARSE_NONE;
  double v;
  if (!m->match(m->match_ctx, line, len, &v)) return PARSE_NONE;
  return judge(m, v, ms);
}
