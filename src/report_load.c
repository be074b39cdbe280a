/* Loading a sweep for `report` and `compare`: a reference (id, name, or DB:SWEEP) to its
 * listing without a trial table, its best's and baseline's step times as numbers, and for the
 * report one pass over its trials (store_report_each) kept as what the page aggregates: the ok
 * trials' values and times, the distinct configurations (a hash table, for the top table), a
 * bounded sample for the plots and importance; then the top table's trials and pooled steps.
 * Also the flags and variables a trial sets. Reads only through the store's read API; must
 * not write the database, and must not hold every trial. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "importance.h"
#include "report_impl.h"
#include "stats.h"
#include "store.h"
#include "view.h"

/* Whether the part of REF before its last ':' names a database: an existing file, or a path
 * by its look (so a mistyped one is an error about the file, not "no sweep 'x.db:3'"). */
static int split_ref(const char *ref, char **db, const char **sweep) {
  const char *colon = strrchr(ref, ':');
  if (!colon || colon == ref || !colon[1]) return 0;
  char *path = xstrndup(ref, (size_t)(colon - ref));
  struct stat st;
  size_t n = strlen(path);
  if (stat(path, &st) == 0 || strchr(path, '/') || (n > 3 && strcmp(path + n - 3, ".db") == 0)) {
    *db = path;
    *sweep = colon + 1;
    return 1;
  }
  free(path);
  return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400, yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* The digits at *S as a number (at most 9 of them), *S moved past them; -1 when none. */
static long digits(const char **s) {
  long v = 0;
  int n = 0;
  for (; **s >= '0' && **s <= '9' && n < 9; (*s)++, n++) v = v * 10 + (**s - '0');
  return n ? v : -1;
}

/* "2026-11-25T19:46:07.550Z" in seconds since the epoch; NaN when unreadable. Read by hand:
 * a 60,000-trial sweep has 120,000 of them, and strtol and strtod were a sixth of a report. */
static double iso_seconds(const char *s) {
  long f[6];
  const char sep[6] = {'-', '-', 'T', ':', ':', 0};
  if (!s) return NAN;
  for (int i = 0; i < 6; i++) {
    f[i] = digits(&s);
    if (f[i] < 0 || (i < 5 && *s++ != sep[i])) return NAN;
  }
  double sec = (double)f[5];
  if (*s == '.') {
    double scale = 0.1;
    for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10) sec += (*s - '0') * scale;
  }
  return (double)days_from_civil(f[0], f[1], f[2]) * 86400 + f[3] * 3600 + f[4] * 60 + sec;
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The index of configuration CONFIG among D's groups, added when new. */
static int group_of(report_data *d, const char *config) {
  uint64_t h = fnv1a(config);
  if (2 * (d->ng + 1) > d->n_slot) { /* grow the table and place every group again */
    d->n_slot = d->n_slot ? d->n_slot * 2 : 1024;
    d->slot = xrealloc(d->slot, (size_t)d->n_slot * sizeof *d->slot);
    for (int i = 0; i < d->n_slot; i++) d->slot[i] = -1;
    for (int j = 0; j < d->ng; j++) {
      size_t k = (size_t)d->g[j].hash & (size_t)(d->n_slot - 1);
      while (d->slot[k] >= 0) k = (k + 1) & (size_t)(d->n_slot - 1);
      d->slot[k] = j;
    }
  }
  size_t k = (size_t)h & (size_t)(d->n_slot - 1);
  for (; d->slot[k] >= 0; k = (k + 1) & (size_t)(d->n_slot - 1)) {
    const cgroup *g = &d->g[d->slot[k]];
    if (g->hash == h && strcmp(g->config, config) == 0) return d->slot[k];
  }
  if (d->ng == d->cap_g)
    d->g = xrealloc(d->g, (size_t)(d->cap_g = d->cap_g ? d->cap_g * 2 : 256) * sizeof *d->g);
  d->g[d->ng] = (cgroup){xstrdup(config), h, 0, NAN, 0, 0};
  d->slot[k] = d->ng;
  return d->ng++;
}

static void num_or_null(cJSON *o, const char *key, double v) {
  if (isnan(v))
    cJSON_AddNullToObject(o, key);
  else
    cJSON_AddNumberToObject(o, key, v);
}

/* A trial shaped as a listing's (what the plots and importance read), with "cfg". */
static cJSON *sample_row(int number, const char *role, const char *status, double value,
                         double budget, const char *config) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "number", number);
  cJSON_AddStringToObject(o, "role", role ? role : "");
  cJSON_AddStringToObject(o, "status", status ? status : "");
  num_or_null(o, "value", value);
  num_or_null(o, "steps_budget", budget > 0 ? budget : NAN);
  cJSON_AddStringToObject(o, "config", config ? config : "{}");
  cJSON *cfg = cJSON_Parse(config ? config : "{}");
  cJSON_AddItemToObject(o, "cfg", cfg ? cfg : cJSON_CreateObject());
  return o;
}

/* The pass: one row at a time, keeping what the report aggregates. */
static int on_row(const store_report_row *r, void *ud) {
  report_data *d = ud;
  d->n_trials++;
  if (r->steps_budget > d->full) d->full = r->steps_budget;
  /* The earliest start: a time in the same format (the same length) that sorts after the
   * earliest's text is not earlier, and needs no reading. */
  size_t len = r->started_at ? strlen(r->started_at) : 0;
  if (len && (len != strlen(d->t0_text) || strcmp(r->started_at, d->t0_text) < 0)) {
    double st = iso_seconds(r->started_at);
    if (st < d->t0 && len < sizeof d->t0_text) {
      d->t0 = st;
      memcpy(d->t0_text, r->started_at, len + 1);
    } else if (st < d->t0) {
      d->t0 = st;
    }
  }
  if (r->number % d->step == 0) {
    cJSON_AddItemToArray(
        d->sample, sample_row(r->number, r->role, r->status, r->value, r->steps_budget, r->config));
    d->n_sampled++;
  }
  if (!r->status || strcmp(r->status, "ok") != 0 || isnan(r->value)) return 0;
  if (d->n_ok == d->cap_ok)
    d->ok = xrealloc(d->ok, (size_t)(d->cap_ok = d->cap_ok ? d->cap_ok * 2 : 1024) * sizeof *d->ok);
  int search = !r->role || (strcmp(r->role, "baseline") != 0 && strcmp(r->role, "confirm") != 0);
  d->ok[d->n_ok++] = (okrow){r->id,     r->value,        iso_seconds(r->finished_at),
                             r->number, r->steps_budget, group_of(d, r->config ? r->config : "{}"),
                             search};
  return 0;
}

static const report_data *sort_data; /* qsort's context */

/* By configuration, then value. */
static int by_group(const void *a, const void *b) {
  const okrow *x = &sort_data->ok[*(const int *)a], *y = &sort_data->ok[*(const int *)b];
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  return (x->value > y->value) - (x->value < y->value);
}

/* Whether configuration X ranks before Y: by median, then its fastest trial's number. */
static int ranks_before(const cgroup *x, const cgroup *y) {
  return x->value < y->value || (x->value == y->value && x->best_number < y->best_number);
}

/* Appends to *V the step times after SKIP of every ok full-budget trial of group G. */
static int pool_steps(store *s, const report_data *d, int g, int skip, double **v, int *nv,
                      char **err) {
  int cap = *nv;
  for (int i = 0; i < d->n_ok; i++) {
    const okrow *t = &d->ok[i];
    if (t->group != g || !report_at_full(d, t)) continue;
    double *st = NULL;
    int ns = 0, rc = store_report_steps(s, t->id, &st, &ns, err);
    if (rc) return rc;
    if (ns > skip) {
      if (*nv + ns - skip > cap) *v = xrealloc(*v, (size_t)(cap = 2 * (*nv + ns)) * sizeof **v);
      memcpy(*v + *nv, st + skip, (size_t)(ns - skip) * sizeof **v);
      *nv += ns - skip;
    }
    free(st);
  }
  if (!*v) *v = xcalloc(1, sizeof **v);
  return 0;
}

/* The top table: the distinct ok configurations at the full budget by median; the TOP_CONFIGS
 * fastest besides the baseline's ("{}"), each with its fastest trial's settings and its
 * pooled step times, and the baseline's pooled step times. Linear in the ok trials but for
 * the configurations run more than once (sorted to find their medians); reads only the
 * shown configurations' steps. */
static int find_top(store *s, report_data *d, int skip, char **err) {
  int n_rep = 0, rc = 0;
  for (int i = 0; i < d->n_ok; i++) {
    const okrow *t = &d->ok[i];
    if (!report_at_full(d, t)) continue;
    cgroup *g = &d->g[t->group];
    /* the fastest, the first by number among equals (the pass's order) */
    if (g->n == 0 || t->value < g->value)
      g->value = t->value, g->best_number = t->number, g->best_id = t->id;
    n_rep += ++g->n == 2 ? 2 : g->n > 2;
  }
  int *idx = xcalloc((size_t)n_rep + 1, sizeof *idx), n = 0;
  for (int i = 0; i < d->n_ok; i++)
    if (report_at_full(d, &d->ok[i]) && d->g[d->ok[i].group].n > 1) idx[n++] = i;
  sort_data = d;
  qsort(idx, (size_t)n, sizeof *idx, by_group);
  double *v = xcalloc((size_t)n + 1, sizeof *v);
  for (int i = 0; i < n;) {
    int j = i, grp = d->ok[idx[i]].group;
    while (j < n && d->ok[idx[j]].group == grp) v[j - i] = d->ok[idx[j]].value, j++;
    d->g[grp].value = stats_median(v, j - i);
    i = j;
  }
  free(v);
  free(idx);
  /* The fastest TOP_CONFIGS by insertion: ng groups, a table of 10. */
  int top[TOP_CONFIGS], nt = 0, base = -1;
  for (int j = 0; j < d->ng; j++) {
    const cgroup *g = &d->g[j];
    if (g->n == 0) continue;
    if (strcmp(g->config, "{}") == 0) {
      base = j;
      continue;
    }
    if (nt == TOP_CONFIGS && !ranks_before(g, &d->g[top[nt - 1]])) continue;
    int k = nt < TOP_CONFIGS ? nt++ : nt - 1;
    while (k > 0 && ranks_before(g, &d->g[top[k - 1]])) top[k] = top[k - 1], k--;
    top[k] = j;
  }
  for (int k = 0; k < nt && !rc; k++) {
    const cgroup *g = &d->g[top[k]];
    topcfg *t = &d->top[d->n_top++];
    *t = (topcfg){g->value, g->n, g->best_number, NULL, NULL, 0};
    rc = store_report_trial(s, g->best_id, &t->best, err);
    if (!rc) rc = pool_steps(s, d, top[k], skip, &t->steps, &t->n_steps, err);
  }
  if (!rc && base >= 0) {
    d->have_base = 1;
    rc = pool_steps(s, d, base, skip, &d->base_steps, &d->n_base_steps, err);
  }
  return rc;
}

/* The top table's trials that the every-k-th sample left out join the plots. */
static void add_top_to_sample(report_data *d) {
  for (int k = 0; k < d->n_top; k++) {
    const cJSON *t = d->top[k].best;
    int number = (int)view_num(t, "number");
    if (number % d->step == 0) continue;
    cJSON_AddItemToArray(d->sample, sample_row(number, view_str(t, "role"), view_str(t, "status"),
                                               view_num(t, "value"), view_num(t, "steps_budget"),
                                               view_str(t, "config")));
  }
}

static void data_free(report_data *d) {
  if (!d) return;
  free(d->ok);
  for (int j = 0; j < d->ng; j++) free(d->g[j].config);
  free(d->g);
  free(d->slot);
  cJSON_Delete(d->sample);
  importance_free(&d->imp);
  for (int k = 0; k < d->n_top; k++) {
    cJSON_Delete(d->top[k].best);
    free(d->top[k].steps);
  }
  free(d->base_steps);
  free(d);
}

/* What the report draws of sweep ID besides its listing OBJ: one pass over its trials
 * (store_report_each), then the top table's trials. */
static int load_data(store *s, int64_t id, cJSON *obj, report_data **out, char **err) {
  report_data *d = xcalloc(1, sizeof *d);
  double total = view_num(obj, "n_trials");
  d->step = total > REPORT_SAMPLE ? (int)ceil(total / REPORT_SAMPLE) : 1;
  d->t0 = INFINITY;
  d->sample = cJSON_CreateArray();
  int rc = store_report_each(s, id, on_row, d, err);
  if (!rc) {
    int imp = importance_compute_full(d->sample, d->full, &d->imp);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "importance");
    cJSON_AddItemToObject(obj, "importance",
                          imp == 0 ? importance_json(&d->imp) : cJSON_CreateNull());
    rc = find_top(s, d, report_skip(obj), err);
  }
  if (!rc) add_top_to_sample(d);
  /* The distinct configurations were for the grouping alone. */
  for (int j = 0; j < d->ng; j++) free(d->g[j].config);
  free(d->g);
  free(d->slot);
  d->g = NULL, d->slot = NULL, d->ng = d->n_slot = 0;
  if (rc) {
    data_free(d);
    return rc;
  }
  *out = d;
  return 0;
}

static int sweep_load(const char *db, const char *ref, int with_data, report_sweep *out,
                      char **err) {
  memset(out, 0, sizeof *out);
  char *own = NULL;
  const char *sweep_ref = ref;
  if (split_ref(ref, &own, &sweep_ref)) db = own;
  out->db = own ? own : xstrdup(db);
  store *s = NULL;
  store_sweep sw = {0};
  int rc = store_open(db, STORE_READONLY, &s, err);
  if (rc == 0) rc = store_sweep_get(s, sweep_ref, &sw, err);
  /* The sweep, its counts, its best and baseline; no trial table. */
  if (rc == 0) rc = store_show_sweep_brief(s, sw.id, 0, &out->obj, err);
  /* Their step times as numbers, not cJSON (a 20,000-step trial's were most of a compare),
   * for compare's ratios, or for a report's summary when no interval is cached. */
  verdict v;
  if (rc == 0 && (!with_data || (view_verdict(out->obj, &v) == 0 && !v.pooled && isnan(v.lo)))) {
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(out->obj, "best");
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(out->obj, "baseline");
    if (cJSON_IsObject(best))
      rc = store_report_steps(s, (int64_t)view_num(best, "id"), &out->best_steps,
                              &out->n_best_steps, err);
    if (rc == 0 && cJSON_IsObject(base))
      rc = store_report_steps(s, (int64_t)view_num(base, "id"), &out->base_steps,
                              &out->n_base_steps, err);
  }
  if (rc == 0 && with_data) rc = load_data(s, sw.id, out->obj, &out->data, err);
  store_sweep_clear(&sw);
  store_close(s);
  if (rc != 0) report_sweep_free(out);
  return rc;
}

int report_sweep_load(const char *db, const char *ref, report_sweep *out, char **err) {
  return sweep_load(db, ref, 0, out, err);
}

int report_sweep_load_data(const char *db, const char *ref, report_sweep *out, char **err) {
  return sweep_load(db, ref, 1, out, err);
}

void report_sweep_free(report_sweep *r) {
  if (!r) return;
  free(r->db);
  cJSON_Delete(r->obj);
  free(r->best_steps);
  free(r->base_steps);
  data_free(r->data);
  memset(r, 0, sizeof *r);
}

int report_verdict(const report_sweep *r, verdict *v) {
  int rc = view_verdict(r->obj, v), skip = report_skip(r->obj);
  double sp;
  if (rc == 0 && !v->pooled && isnan(v->lo) && r->n_best_steps > skip && r->n_base_steps > skip)
    stats_speedup_ci(r->base_steps + skip, r->n_base_steps - skip, r->best_steps + skip,
                     r->n_best_steps - skip, STATS_DISPLAY_SEED, &sp, &v->lo, &v->hi);
  return rc;
}

static void add_flags(cJSON *o, const char *flags) {
  const char *p = flags ? flags : "";
  while (*p) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, " ");
    if (n == 0) break;
    char *tok = xstrndup(p, n), *name = tok;
    while (*name == '-') name++;
    char *eq = strchr(name, '=');
    if (eq) *eq = '\0';
    cJSON_DeleteItemFromObjectCaseSensitive(o, name);
    cJSON_AddStringToObject(o, name, eq ? eq + 1 : "");
    free(tok);
    p += n;
  }
}

cJSON *report_settings(const cJSON *trial) {
  cJSON *o = cJSON_CreateObject();
  add_flags(o, view_str(trial, "xla_flags"));
  add_flags(o, view_str(trial, "tpu_args"));
  cJSON *env = cJSON_Parse(view_str(trial, "env") ? view_str(trial, "env") : "{}");
  const cJSON *it;
  cJSON_ArrayForEach(it, env) {
    if (!cJSON_IsString(it)) continue;
    cJSON_DeleteItemFromObjectCaseSensitive(o, it->string);
    cJSON_AddStringToObject(o, it->string, it->valuestring);
  }
  cJSON_Delete(env);
  return o;
}

int report_skip(const cJSON *sweep_obj) {
  const char *opts = view_str(sweep_obj, "options_json");
  cJSON *o = opts ? cJSON_Parse(opts) : NULL;
  double v = view_num(o, "skip");
  cJSON_Delete(o);
  return isnan(v) || v < 0 ? 0 : (int)v;
}
