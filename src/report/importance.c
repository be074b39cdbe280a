/* Parameter importance from the trials already run (see importance.h): per parameter, a
 * one-way analysis of variance of log step time over its values, corrected for the number of
 * values (epsilon squared), so a parameter that does nothing scores about 0 however many
 * values it has. A marginal, main-effect estimate: it sees what each parameter does on
 * average over the others, not interactions. Pure: must not open the database. */
#include "importance.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "diag.h"
#include "units.h"

/* One scored trial: its log step time and its parsed configuration (not owned). */
typedef struct {
  double y;
  const cJSON *config;
} scored;

static const char *str_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Whether outcome O is the configuration's own doing (scored at the penalty). */
static int fails_by_config(outcome o) {
  return o == OUTCOME_OOM || o == OUTCOME_INVALID || o == OUTCOME_WRONG || o == OUTCOME_TIMEOUT ||
         o == OUTCOME_PRUNED;
}

/* The full step budget: the largest any trial ran with (halving's short rungs ran fewer). */
static double full_budget(const importance_trial *t, int n) {
  double full = 0;
  for (int i = 0; i < n; i++)
    if (!isnan(t[i].steps_budget) && t[i].steps_budget > full) full = t[i].steps_budget;
  return full;
}

/* cJSON's own unformatted text of V where it is quick to write (an integral number, printed
 * by cJSON as "%d" of its valueint; true; false), without its printer's buffers and
 * sprintf; NULL otherwise. Caller frees. */
static char *quick_text(const cJSON *v) {
  if (cJSON_IsNumber(v) && v->valuedouble == (double)v->valueint) {
    char buf[16], *p = buf + sizeof buf;
    long long a = v->valueint < 0 ? -(long long)v->valueint : v->valueint;
    *--p = '\0';
    do *--p = (char)('0' + a % 10), a /= 10;
    while (a);
    if (v->valueint < 0) *--p = '-';
    return xstrdup(p);
  }
  if (cJSON_IsTrue(v)) return xstrdup("true");
  if (cJSON_IsFalse(v)) return xstrdup("false");
  return NULL;
}

/* Collects the scored trials of T into *OUT (caller frees the array). */
static int collect(const importance_trial *t, int nt, double full, scored **out, int *n_failed) {
  int n = 0;
  double worst = -INFINITY;
  if (!(full > 0)) full = full_budget(t, nt);
  scored *s = xcalloc((size_t)nt + 1, sizeof *s);
  *n_failed = 0;
  for (int i = 0; i < nt; i++) {
    int o = t[i].outcome;
    double v = t[i].value, b = t[i].steps_budget;
    int ok = o == OUTCOME_OK && v > 0 && (isnan(b) || b <= 0 || b >= full);
    if (!cJSON_IsObject(t[i].config) || (!ok && (o < 0 || !fails_by_config((outcome)o)))) continue;
    s[n].config = t[i].config;
    s[n].y = ok ? log(v) : NAN; /* failures get the penalty once the worst is known */
    if (ok && s[n].y > worst) worst = s[n].y;
    *n_failed += !ok;
    n++;
  }
  double penalty = isfinite(worst) ? worst + log(IMPORTANCE_FAIL_PENALTY) : 0;
  for (int i = 0; i < n; i++)
    if (isnan(s[i].y)) s[i].y = penalty;
  *out = s;
  return n;
}

/* The value of KEY in a configuration as canonical text; "" for absent (the default). */
static char *level_of(const cJSON *config, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, key);
  char *quick = v ? quick_text(v) : NULL;
  return quick ? quick : v ? cJSON_PrintUnformatted(v) : xstrdup("");
}

/* Epsilon squared of KEY over the N scored trials whose mean is MEAN and total sum of
 * squares SST; *LEVELS receives the number of distinct values. The values are grouped by
 * sorting their texts: O(N log N), however many distinct values (a 60,000-trial sweep of an
 * int(0, 1000000) has nearly as many). */
typedef struct {
  char *text;
  double y;
} leveled;

static int by_text(const void *a, const void *b) {
  return strcmp(((const leveled *)a)->text, ((const leveled *)b)->text);
}

static double effect(const scored *s, int n, const char *key, double mean, double sst,
                     int *levels) {
  leveled *l = xcalloc((size_t)n + 1, sizeof *l);
  for (int i = 0; i < n; i++) l[i] = (leveled){level_of(s[i].config, key), s[i].y};
  qsort(l, (size_t)n, sizeof *l, by_text);
  double ssb = 0;
  int g = 0;
  for (int i = 0; i < n;) {
    int j = i;
    double sum = 0;
    while (j < n && strcmp(l[j].text, l[i].text) == 0) sum += l[j++].y;
    double d = sum / (j - i) - mean;
    ssb += (j - i) * d * d;
    g++;
    i = j;
  }
  for (int i = 0; i < n; i++) free(l[i].text);
  free(l);
  *levels = g;
  /* With as many values as trials nothing is left to measure the noise by. */
  if (g < 2 || n <= g || !(sst > 0)) return 0;
  double msw = (sst - ssb) / (n - g);
  double eps = (ssb - (g - 1) * msw) / sst;
  return eps < 0 ? 0 : eps > 1 ? 1 : eps;
}

static int by_explained(const void *a, const void *b) {
  const importance_param *x = a, *y = b;
  if (x->explained != y->explained) return x->explained < y->explained ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* Every key any scored configuration names, once each, into R->p. */
static void gather_params(const scored *s, int n, importance_result *r) {
  int cap = 8;
  r->p = xcalloc((size_t)cap, sizeof *r->p);
  for (int i = 0; i < n; i++) {
    const cJSON *kv;
    cJSON_ArrayForEach(kv, s[i].config) {
      int j = 0;
      while (j < r->n && strcmp(r->p[j].name, kv->string) != 0) j++;
      if (j < r->n) continue;
      if (r->n == cap) r->p = xrealloc(r->p, (size_t)(cap *= 2) * sizeof *r->p);
      memset(&r->p[r->n], 0, sizeof r->p[0]);
      r->p[r->n++].name = xstrdup(kv->string);
    }
  }
}

int importance_compute(const cJSON *trials, importance_result *out) {
  return importance_compute_full(trials, 0, out);
}

/* A listing's trials as importance_trials: a trial's "cfg" when it has one parsed, else its
 * "config" text parsed here (*OWNED set). */
int importance_compute_full(const cJSON *trials, double full, importance_result *out) {
  int n = 0, cap = cJSON_GetArraySize(trials) + 1;
  importance_trial *t = xcalloc((size_t)cap, sizeof *t);
  char *owned = xcalloc((size_t)cap, 1);
  const cJSON *it;
  cJSON_ArrayForEach(it, trials) {
    const char *st = str_of(it, "status"), *cfg = str_of(it, "config");
    cJSON *c = NULL;
    if (cfg) {
      c = cJSON_GetObjectItemCaseSensitive(it, "cfg");
      if (!cJSON_IsObject(c)) c = cJSON_Parse(cfg), owned[n] = 1;
    }
    t[n++] = (importance_trial){st ? outcome_from_name(st) : -1, num_of(it, "value"),
                                num_of(it, "steps_budget"), c};
  }
  int rc = importance_compute_trials(t, n, full, out);
  for (int i = 0; i < n; i++)
    if (owned[i]) cJSON_Delete((cJSON *)t[i].config);
  free(owned);
  free(t);
  return rc;
}

int importance_compute_trials(const importance_trial *t, int nt, double full,
                              importance_result *out) {
  memset(out, 0, sizeof *out);
  scored *s = NULL;
  int n = collect(t, nt, full, &s, &out->n_failed);
  out->n_trials = n;
  double mean = 0, sst = 0, total = 0;
  for (int i = 0; i < n; i++) mean += s[i].y / n;
  for (int i = 0; i < n; i++) sst += (s[i].y - mean) * (s[i].y - mean);
  gather_params(s, n, out);
  for (int j = 0; j < out->n; j++) {
    out->p[j].explained = effect(s, n, out->p[j].name, mean, sst, &out->p[j].levels);
    total += out->p[j].explained;
  }
  for (int j = 0; j < out->n; j++) out->p[j].share = total > 0 ? out->p[j].explained / total : 0;
  if (out->n > 1) qsort(out->p, (size_t)out->n, sizeof *out->p, by_explained);
  free(s);
  return n >= 3 && out->n > 0 && sst > 0 ? 0 : -1;
}

void importance_free(importance_result *r) {
  if (!r) return;
  for (int j = 0; j < r->n; j++) free(r->p[j].name);
  free(r->p);
  memset(r, 0, sizeof *r);
}

cJSON *importance_json(const importance_result *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "trials", r->n_trials);
  cJSON_AddNumberToObject(o, "failed", r->n_failed);
  cJSON *arr = cJSON_AddArrayToObject(o, "params");
  for (int j = 0; j < r->n; j++) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", r->p[j].name);
    cJSON_AddNumberToObject(p, "explained", round(r->p[j].explained * 1e4) / 1e4);
    cJSON_AddNumberToObject(p, "share", round(r->p[j].share * 1e4) / 1e4);
    cJSON_AddNumberToObject(p, "levels", r->p[j].levels);
    cJSON_AddItemToArray(arr, p);
  }
  return o;
}

void importance_attach(cJSON *sweep_obj) {
  importance_result r;
  int rc = importance_compute(cJSON_GetObjectItemCaseSensitive(sweep_obj, "trials"), &r);
  cJSON_DeleteItemFromObjectCaseSensitive(sweep_obj, "importance");
  cJSON_AddItemToObject(sweep_obj, "importance",
                        rc == 0 ? importance_json(&r) : cJSON_CreateNull());
  importance_free(&r);
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

char *importance_value_text(const cJSON *config, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, name);
  if (!v) return NULL;
  if (cJSON_IsString(v)) return xstrdup(v->valuestring);
  if (cJSON_IsNumber(v) && ends_with(name, "_bytes") && v->valuedouble >= 1024 &&
      v->valuedouble < 9e18 && v->valuedouble == floor(v->valuedouble)) {
    char buf[32];
    units_format_bytes((int64_t)v->valuedouble, buf, sizeof buf);
    return xstrdup(buf);
  }
  char *quick = quick_text(v);
  return quick ? quick : cJSON_PrintUnformatted(v);
}
