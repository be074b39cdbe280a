/* A stored sweep's listing (the cJSON of store_list.c) read and said in text: its fields, the
 * verdict, and how the sweep reads on a terminal: its header, outcome counts,
 * best-versus-baseline line with its 95 % interval, trial table and log failures.
 * Pure formatting: must not open the database or decide anything a listing does not say. */
#include "listing.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "json.h"
#include "metric.h"
#include "stats.h"

const char *listing_str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

double listing_num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Prints a number for a table cell, or "-" when missing. */
void listing_cell(char *buf, size_t n, double v, const char *fmt) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, fmt, v);
}

static double *steps_of(const cJSON *o, const char *key, int *n) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key);
  *n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
  double *v = xcalloc((size_t)*n + 1, sizeof(double));
  int i = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) v[i++] = it->valuedouble;
  return v;
}

/* The speedup of BEST over BASE with its 95% interval, from their stored step times
 * (the warm-up steps the experiment skips are left out). Returns 0 when computable. */
static int speedup_interval(const cJSON *best, const char *best_key, const cJSON *base,
                            const char *base_key, int skip, double *sp, double *lo, double *hi) {
  int nb, na;
  double *b = steps_of(best, best_key, &nb), *a = steps_of(base, base_key, &na);
  int rc = -1;
  if (nb > skip && na > skip)
    rc = stats_speedup_ci(a + skip, na - skip, b + skip, nb - skip, STATS_DISPLAY_SEED, sp, lo, hi);
  free(a);
  free(b);
  return rc;
}

int listing_higher(const cJSON *sweep_obj) {
  const char *b = listing_str(sweep_obj, "better");
  if (b) return strcmp(b, "higher") == 0;
  return metric_higher(listing_str(sweep_obj, "options_json"));
}

/* The experiment's skip, recorded in the sweep's options. */
static int skip_of(const cJSON *sweep_obj) {
  const char *opts = listing_str(sweep_obj, "options_json");
  cJSON *o = opts ? cJSON_Parse(opts) : NULL;
  double v = listing_num(o, "skip");
  cJSON_Delete(o);
  return isnan(v) ? 0 : (int)v;
}

int listing_verdict(const cJSON *sw, verdict *v) {
  const cJSON *best = cJSON_GetObjectItemCaseSensitive(sw, "best");
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(sw, "baseline");
  double sp;
  v->value = listing_num(sw, "winner_ms");
  if (!isnan(v->value)) {
    v->baseline = listing_num(sw, "winner_baseline_ms");
    v->lo = listing_num(sw, "speedup_lo");
    v->hi = listing_num(sw, "speedup_hi");
    v->pooled = (int)listing_num(sw, "winner_trials");
    return isnan(v->baseline) ? -1 : 0;
  }
  v->value = listing_num(best, "value");
  v->baseline = listing_num(base, "value");
  v->lo = v->hi = NAN;
  v->pooled = 0;
  if (isnan(v->baseline)) return -1;
  /* Cached when the sweep ended (store_sweep_cache_interval), if still for these two trials. */
  if (listing_num(sw, "best_ci_trial") == listing_num(best, "id") &&
      listing_num(sw, "best_ci_baseline") == listing_num(base, "id") &&
      !isnan(listing_num(sw, "best_ci_lo"))) {
    v->lo = listing_num(sw, "best_ci_lo");
    v->hi = listing_num(sw, "best_ci_hi");
    return 0;
  }
  speedup_interval(best, "steps", base, "steps", skip_of(sw), &sp, &v->lo, &v->hi);
  return 0;
}

/* "1.104x, 95% CI 1.090-1.118" for a confirmed winner (pooled over its re-measurements);
 * a single run's speedup carries no "95 % CI": its interval over its own step times says
 * nothing about a second run, so it is marked as one run. */
void listing_format_speedup(const verdict *v, char *buf, size_t n) {
  if (!v->pooled)
    snprintf(buf, n, "%.3fx, a single run, not confirmed", v->baseline / v->value);
  else if (isnan(v->lo))
    snprintf(buf, n, "%.3fx", v->baseline / v->value);
  else
    snprintf(buf, n, "%.3fx, 95%% CI %.3f-%.3f", v->baseline / v->value, v->lo, v->hi);
}

/* A trial's number: "number" in a trial row, "best_trial" in a row of `best`. */
static double trial_number(const cJSON *trial) {
  double n = listing_num(trial, "number");
  return isnan(n) ? listing_num(trial, "best_trial") : n;
}

char *listing_verdict_comment(const cJSON *sweep_obj, const cJSON *best) {
  verdict v;
  char sp[96], val[48], base[48];
  int have = listing_verdict(sweep_obj, &v) == 0, higher = listing_higher(sweep_obj);
  const char *what = higher ? "rate" : "step";
  metric_format(val, sizeof val, v.value, higher);
  metric_format(base, sizeof base, v.baseline, higher);
  if (!have)
    return xasprintf("%s %s (no baseline measurement), trial %.0f", what, val, trial_number(best));
  listing_format_speedup(&v, sp, sizeof sp);
  return xasprintf("%s %s vs baseline %s (%s), trial %.0f%s", what, val, base, sp,
                   trial_number(best), v.pooled ? ", confirmed" : "");
}

/* ---- show ---- */

void listing_counts(const cJSON *sw) {
  const cJSON *counts = cJSON_GetObjectItemCaseSensitive(sw, "counts"), *it;
  printf("outcomes:");
  cJSON_ArrayForEach(it, counts) printf(" %s %d", it->string, it->valueint);
  printf("\n");
}

void listing_best_line(const cJSON *sw) {
  const cJSON *best = cJSON_GetObjectItemCaseSensitive(sw, "best");
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(sw, "baseline");
  if (!cJSON_IsObject(best)) {
    /* Say how the baseline ended: "failed" misleads after a Ctrl-C (interrupted). */
    const char *st = listing_str(base, "status");
    if (!isnan(listing_num(base, "value")))
      printf("best: none (no trial ended ok)\n");
    else if (st && !strcmp(st, "running"))
      printf("best: none (no trial ended ok yet; the baseline is running)\n");
    else if (st && *st)
      printf("best: none (no trial ended ok; the baseline ended %s)\n", st);
    else
      printf("best: none (no trial ended ok; no baseline was run)\n");
    return;
  }
  verdict v;
  char sp[96], val[48], bval[48];
  int have = listing_verdict(sw, &v) == 0, higher = listing_higher(sw);
  metric_format(val, sizeof val, v.value, higher);
  metric_format(bval, sizeof bval, v.baseline, higher);
  printf("best: trial %.0f, %s", listing_num(best, "number"), val);
  if (v.pooled) printf(" (median of %d trials)", v.pooled);
  listing_format_speedup(&v, sp, sizeof sp);
  if (have)
    printf(" vs baseline %s: %s", bval, sp);
  else
    printf(" (the baseline did not end ok: no speedup)");
  printf("\n  %s\n", listing_str(best, "label") ? listing_str(best, "label") : "");
  /* The confirmation's answer when it is not its pooled winner (confirm_guard). */
  const char *kind = listing_str(sw, "winner_kind");
  if (kind && !strcmp(kind, "recipe"))
    printf("  the public recipe is the answer: no configuration was confirmed faster than it\n");
  else if (kind && !strcmp(kind, "baseline"))
    printf("  the baseline is the answer: no configuration was confirmed faster than it\n");
}

/* What a trial costs in wall time (the listing's "cost", over the sweep's last 1000 finished
 * trials at most): on average, its start to first step (process start, import, compile) and
 * its steps, then the trials that ended before a first step. Nothing before the first
 * finished trial. */
void listing_cost(const cJSON *sw) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(sw, "cost");
  if (!cJSON_IsObject(c)) return;
  double n = listing_num(c, "trials"), none = listing_num(c, "no_step_trials");
  if (!(n > 0) && !(none > 0)) return; /* trials stored before schema 16 */
  printf("cost:");
  if (n > 0)
    printf(
        " a trial costs %.1f s of which %.1f s compile (start to first step), then %.0f steps "
        "of %.2f ms (mean of %.0f)",
        listing_num(c, "trial_s"), listing_num(c, "first_step_s"), listing_num(c, "steps"),
        listing_num(c, "step_ms"), n);
  if (none > 0)
    printf("%s %.0f ended before a first step, %.1f s each", n > 0 ? ";" : "", none,
           listing_num(c, "no_step_trial_s"));
  if (listing_num(c, "sampled") >= 1000) printf(" (the last 1000 trials)");
  printf("\n");
}

/* The length of S's first line. A listing made terminal-safe (json_terminal_safe) shows a
 * line break as the four characters "\x0a", so that ends the line too. */
static size_t first_line_len(const char *s) {
  size_t n = strcspn(s, "\n");
  const char *esc = strstr(s, "\\x0a");
  return esc && (size_t)(esc - s) < n ? (size_t)(esc - s) : n;
}

void listing_trials_header(int higher) {
  printf("%5s  %-8s %-11s %10s %6s %8s %9s  %s\n", "TRIAL", "ROLE", "STATUS",
         higher ? "PER_SECOND" : "VALUE_MS", "STEPS", "SECONDS", "COMPILE_S", "CONFIGURATION");
}

/* S as json_terminal_text gives it: S itself when every byte is printable ASCII (no
 * allocation: the common case), else a new string in *TMP (the caller frees it). */
static const char *terminal_safe(const char *s, char **tmp) {
  const unsigned char *u = (const unsigned char *)s;
  if (!s) return NULL;
  while (*u >= 0x20 && *u < 0x7F) u++;
  if (*u == '\0') return s;
  return *tmp = json_terminal_text(s, NULL);
}

void listing_fixed(char *buf, size_t n, double v, int decimals) {
#if LDBL_MANT_DIG >= 64
  /* |V| * 10^D needs at most 50 + 7 bits: exact in a long double, so its fraction decides the
   * rounding as printf's exact decimal expansion does (to nearest, ties to even). */
  static const long double scale[] = {1, 10, 100};
  if (isfinite(v) && fabs(v) < 1e15 && decimals >= 0 && decimals <= 2 && n >= 24) {
    long double x = fabsl((long double)v) * scale[decimals], whole = floorl(x);
    unsigned long long q = (unsigned long long)whole;
    if (x - whole > 0.5L || (x - whole == 0.5L && (q & 1))) q++;
    char rev[24];
    int len = 0;
    for (int d = 0; d < decimals; d++, q /= 10) rev[len++] = (char)('0' + q % 10);
    if (decimals) rev[len++] = '.';
    do rev[len++] = (char)('0' + q % 10);
    while ((q /= 10) > 0);
    size_t k = 0;
    if (signbit(v)) buf[k++] = '-';
    while (len > 0) buf[k++] = rev[--len];
    buf[k] = '\0';
    return;
  }
#endif
  snprintf(buf, n, "%.*f", decimals, v);
}

/* One line of text built in place (a trial row), written with one fwrite. */
typedef struct {
  char *p;
  size_t len, cap;
  char stack[512];
} line_buf;

static void line_put(line_buf *b, const char *s, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = (b->len + n) * 2;
    char *p = xmalloc(cap);
    memcpy(p, b->p, b->len);
    if (b->p != b->stack) free(b->p);
    b->p = p, b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

/* S padded with spaces to WIDTH, on the left (printf's %WIDTHs) or, LEFT, on the right. */
static void line_pad(line_buf *b, const char *s, int width, int left) {
  size_t n = strlen(s);
  static const char spaces[] = "                ";
  size_t pad = (size_t)width > n ? (size_t)width - n : 0;
  if (!left) line_put(b, spaces, pad);
  line_put(b, s, n);
  if (left) line_put(b, spaces, pad);
}

/* A table cell: V with DECIMALS (listing_fixed), "-" when NaN (listing_cell). */
static void cell_fixed(char *buf, size_t n, double v, int decimals) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    listing_fixed(buf, n, v, decimals);
}

void listing_trial_line(const store_trial_line *t, int higher) {
  char num[32], val[32], steps[32], dur[32], first[32], *tmp[4] = {NULL};
  const char *role = terminal_safe(t->role, &tmp[0]), *status = terminal_safe(t->status, &tmp[1]);
  const char *label = terminal_safe(t->label, &tmp[2]), *error = terminal_safe(t->error, &tmp[3]);
  listing_fixed(num, sizeof num, t->number, 0);
  cell_fixed(val, sizeof val, metric_shown(t->value, higher), 2);
  listing_fixed(steps, sizeof steps, t->n_steps, 0);
  cell_fixed(dur, sizeof dur, t->duration_s, 1);
  cell_fixed(first, sizeof first, t->first_step_ms / 1e3, 1);
  const char *config = strcmp(role, "baseline") == 0 ? "(baseline)" : label ? label : "";
  /* the columns of listing_trials_header: "%5s  %-8s %-11s %10s %6s %8s %9s  %s\n" */
  line_buf b = {.cap = sizeof b.stack};
  b.p = b.stack;
  line_pad(&b, num, 5, 0);
  line_put(&b, "  ", 2);
  line_pad(&b, role, 8, 1);
  line_put(&b, " ", 1);
  line_pad(&b, status, 11, 1);
  line_put(&b, " ", 1);
  line_pad(&b, val, 10, 0);
  line_put(&b, " ", 1);
  line_pad(&b, steps, 6, 0);
  line_put(&b, " ", 1);
  line_pad(&b, dur, 8, 0);
  line_put(&b, " ", 1);
  line_pad(&b, first, 9, 0);
  line_put(&b, "  ", 2);
  line_put(&b, config, strlen(config));
  line_put(&b, "\n", 1);
  /* A failed trial's reason under it: the first line of its stored error. */
  if (error && strcmp(status, "ok") != 0) {
    size_t n = first_line_len(error);
    line_put(&b, "       ", 7);
    line_put(&b, error, n > 160 ? 160 : n);
    line_put(&b, "\n", 1);
  }
  fwrite(b.p, 1, b.len, stdout);
  if (b.p != b.stack) free(b.p);
  for (int i = 0; i < 4; i++) free(tmp[i]);
}

void listing_trial_row(const cJSON *it, int higher) {
  store_trial_line t = {
      listing_num(it, "number"),     listing_num(it, "value"),         listing_num(it, "n_steps"),
      listing_num(it, "duration_s"), listing_num(it, "first_step_ms"), listing_str(it, "role"),
      listing_str(it, "status"),     listing_str(it, "label"),         listing_str(it, "error")};
  listing_trial_line(&t, higher);
}

void listing_trials(const cJSON *sw) {
  const char *listed = listing_str(sw, "trials_listed");
  if (listed && strcmp(listed, "fastest") == 0)
    printf("the %d fastest ok of %.0f trials (--all lists every trial)\n",
           cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sw, "trials")),
           listing_num(sw, "n_trials"));
  int higher = listing_higher(sw);
  listing_trials_header(higher);
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sw, "trials"))
      listing_trial_row(it, higher);
}

void listing_header(const cJSON *sw) {
  printf("sweep %.0f \"%s\": model %s on %s, strategy %s, status %s\n", listing_num(sw, "id"),
         listing_str(sw, "name"), listing_str(sw, "model"), listing_str(sw, "hardware"),
         listing_str(sw, "strategy"), listing_str(sw, "status"));
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sw, "orchestrator_gone")))
    printf("its flagtune (pid %.0f on %s) is gone: `flagtune resume %.0f` continues it\n",
           listing_num(sw, "pid"), listing_str(sw, "host"), listing_num(sw, "id"));
  if (listing_str(sw, "error")) printf("error: %s\n", listing_str(sw, "error"));
}

/* The log is not the result: a trial whose log could not be written still ran, and its error
 * excerpt says so (exec.c's "flagtune: trial log ..."); the summary counts them. */
void listing_log_failures(const cJSON *sw) {
  const cJSON *it;
  double counted = listing_num(sw, "log_failures"); /* a listing without its trials counts them */
  int n = isnan(counted) ? 0 : (int)counted;
  if (isnan(counted)) cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sw, "trials")) {
      const char *e = listing_str(it, "error");
      n += e && strstr(e, "flagtune: trial log ") != NULL;
    }
  if (n > 0)
    printf("logs: %d trial%s without a complete log (see %s error excerpt)\n", n, n == 1 ? "" : "s",
           n == 1 ? "its" : "their");
}

/* The top parameters by their share of what the parameters explain one at a time; a share
 * under 1 % is not worth a line of its own. */
void listing_importance(const cJSON *sw) {
  const cJSON *imp = cJSON_GetObjectItemCaseSensitive(sw, "importance"), *p;
  if (!cJSON_IsObject(imp)) {
    printf("importance: too few finished trials to estimate\n");
    return;
  }
  int shown = 0;
  printf("importance:");
  cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(imp, "params")) {
    if (shown == 5 || !(listing_num(p, "share") >= 0.01)) break;
    printf("%s %s %.0f%%", shown++ ? "," : "", listing_str(p, "name"),
           100 * listing_num(p, "share"));
  }
  if (shown == 0) printf(" no parameter explains the differences measurably");
  printf(
      "\n  (each parameter's share of the variance of log %s explained by one "
      "parameter at a time, over %.0f trials; failures count as slowest)\n",
      listing_higher(sw) ? "rate" : "step time", listing_num(imp, "trials"));
}

void listing_export_init(listing_export *x, const cJSON *row, const char *const *comments,
                         int n_comments) {
  const char *env = listing_str(row, "env");
  x->env = cJSON_Parse(env ? env : "{}");
  int n = cJSON_GetArraySize(x->env), i = 0;
  x->names = xcalloc((size_t)n + 1, sizeof(char *));
  x->values = xcalloc((size_t)n + 1, sizeof(char *));
  const cJSON *it;
  cJSON_ArrayForEach(it, x->env) {
    x->names[i] = it->string;
    x->values[i++] = cJSON_IsString(it) ? it->valuestring : "";
  }
  x->info = (export_info){comments,
                          n_comments,
                          listing_str(row, "xla_flags"),
                          listing_str(row, "tpu_args"),
                          x->names,
                          x->values,
                          i,
                          0};
}

void listing_export_clear(listing_export *x) {
  free(x->names);
  free(x->values);
  cJSON_Delete(x->env);
}
