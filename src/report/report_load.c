/* Loading a sweep for `report` and `compare`: a reference (id, name, or DB:SWEEP) to its
 * listing without a trial table, its best's and baseline's step times as numbers, and for the
 * report what schema 13 keeps of every trial (the curves' candidates, span and tails, the
 * repeated configurations), a bounded sample for the plots and importance (runs of
 * consecutive trials, as plain rows), then the top table's trials and pooled steps. Also the
 * flags and variables a trial sets. Reads only through the store's read API, with a small page
 * cache; must not write the database, and must not hold every trial. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "classify.h"
#include "diag.h"
#include "importance.h"
#include "listing.h"
#include "report_impl.h"
#include "stats.h"
#include "store.h"

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

/* Appends a trial to the plots' sample, its configuration parsed (an empty one when it is
 * unreadable, as the listing's was). */
static void sample_add(report_data *d, int number, const char *status, double value, double budget,
                       const char *config, const char *reason) {
  if (d->n_sample == d->cap_sample) {
    d->cap_sample = d->cap_sample ? 2 * d->cap_sample : REPORT_SAMPLE + TOP_CONFIGS + 1;
    d->sample = xrealloc(d->sample, (size_t)d->cap_sample * sizeof *d->sample);
    d->number = xrealloc(d->number, (size_t)d->cap_sample * sizeof *d->number);
    d->reason = xrealloc(d->reason, (size_t)d->cap_sample * sizeof *d->reason);
  }
  cJSON *cfg = cJSON_Parse(config ? config : "{}");
  d->reason[d->n_sample] = reason && *reason ? xstrdup(reason) : NULL;
  d->number[d->n_sample] = number;
  d->sample[d->n_sample++] =
      (importance_trial){status ? outcome_from_name(status) : -1, value, budget > 0 ? budget : NAN,
                         cfg ? cfg : cJSON_CreateObject()};
}

static int is_search(const char *role) {
  return !role || (strcmp(role, "baseline") != 0 && strcmp(role, "confirm") != 0);
}

static int budget_full(const report_data *d, int budget) {
  return budget <= 0 || budget >= d->full;
}

/* report_span's row: the full budget and the earliest start. */
static int on_span(const store_report_row *r, void *ud) {
  report_data *d = ud;
  d->rows_read++;
  if (r->steps_budget > d->full) d->full = r->steps_budget;
  double st = iso_seconds(r->started_at);
  if (st < d->t0) d->t0 = st;
  return 0;
}

/* report_tail's rows: where the curves end (the last search trial at the full budget). */
static int on_tail(const store_report_row *r, void *ud) {
  report_data *d = ud;
  d->rows_read++;
  if (!budget_full(d, r->steps_budget)) return 0;
  if (r->number > d->xmax_number) d->xmax_number = r->number;
  double x = (iso_seconds(r->finished_at) - d->t0) / 60;
  if (x > d->xmax_time) d->xmax_time = x;
  return 0;
}

/* report_curve's rows: the curves' candidates, by number. */
static int on_curve(const store_report_row *r, void *ud) {
  report_data *d = ud;
  d->rows_read++;
  if (d->n_ok == d->cap_ok)
    d->ok = xrealloc(d->ok, (size_t)(d->cap_ok = d->cap_ok ? d->cap_ok * 2 : 64) * sizeof *d->ok);
  d->ok[d->n_ok++] = (okrow){r->id,     r->value,        iso_seconds(r->finished_at),
                             r->number, r->steps_budget, is_search(r->role)};
  return 0;
}

/* The sample's rows. */
static int on_sample(const store_report_row *r, void *ud) {
  report_data *d = ud;
  d->rows_read++;
  sample_add(d, r->number, r->status, r->value, r->steps_budget, r->config, r->error);
  d->n_sampled++;
  return 0;
}

/* The top table's candidates as they are read: the fastest configurations run once, then the
 * repeated ones (by configuration, then number) that can rank among them. */
typedef struct {
  report_data *d;
  const char *config; /* the current repeated configuration's */
  double *v;          /* its values at the full budget */
  int nv, cap_v, cap_ids, singles;
  double last; /* the value of the TOP_CONFIGS-th run once; NaN: fewer */
} top_read;

static cgroup *new_group(report_data *d, const char *config) {
  if (d->ng == d->cap_g)
    d->g = xrealloc(d->g, (size_t)(d->cap_g = d->cap_g ? d->cap_g * 2 : 32) * sizeof *d->g);
  cgroup *g = &d->g[d->ng++];
  *g = (cgroup){xstrdup(config), 0, NAN, 0, 0, NULL};
  return g;
}

/* The last group's median, once its trials are read; a group with none at the full budget
 * is dropped. */
static void end_group(top_read *t) {
  report_data *d = t->d;
  if (!t->config) return;
  cgroup *g = &d->g[d->ng - 1];
  if (g->n == 0) {
    free(g->config);
    free(g->ids);
    d->ng--;
  } else {
    if (g->n > 1) g->value = stats_median(t->v, t->nv);
    if (strcmp(g->config, "{}") == 0) d->base = d->ng - 1;
  }
  t->nv = 0;
  t->config = NULL;
}

static int on_repeat(const store_report_row *r, void *ud) {
  top_read *t = ud;
  t->d->rows_read++;
  report_data *d = t->d;
  const char *config = r->config ? r->config : "{}";
  if (!t->config || strcmp(t->config, config) != 0) {
    end_group(t);
    t->config = new_group(d, config)->config;
    t->cap_ids = 0;
  }
  cgroup *g = &d->g[d->ng - 1];
  if (isnan(r->value) || !budget_full(d, r->steps_budget)) return 0;
  /* the fastest, the first by number among equals (the read's order) */
  if (g->n == 0 || r->value < g->value)
    g->value = r->value, g->best_number = r->number, g->best_id = r->id;
  if (g->n == t->cap_ids)
    g->ids =
        xrealloc(g->ids, (size_t)(t->cap_ids = t->cap_ids ? 2 * t->cap_ids : 4) * sizeof *g->ids);
  g->ids[g->n++] = r->id;
  if (t->nv == t->cap_v)
    t->v = xrealloc(t->v, (size_t)(t->cap_v = t->cap_v ? 2 * t->cap_v : 16) * sizeof *t->v);
  t->v[t->nv++] = r->value;
  return 0;
}

static int on_fastest(const store_report_row *r, void *ud) {
  top_read *t = ud;
  t->d->rows_read++;
  report_data *d = t->d;
  if (!budget_full(d, r->steps_budget)) return 0;
  cgroup *g = new_group(d, r->config ? r->config : "{}");
  g->n = 1, g->value = r->value, g->best_number = r->number, g->best_id = r->id;
  g->ids = xcalloc(1, sizeof *g->ids);
  g->ids[0] = r->id;
  if (++t->singles < TOP_CONFIGS) return 0;
  t->last = r->value;
  return STORE_REPORT_STOP;
}

/* Whether configuration X ranks before Y: by median, then its fastest trial's number. */
static int ranks_before(const cgroup *x, const cgroup *y) {
  return x->value < y->value || (x->value == y->value && x->best_number < y->best_number);
}

/* The step times the listing's best and baseline trials already had read (for the summary's
 * interval): the top table's pools take them from here, not from the database again (a
 * 20,000-step baseline's were a third of a report's instructions). */
typedef struct {
  int64_t id[2];
  const double *v[2];
  int n[2];
} known_steps;

/* Appends to *V the step times after SKIP of group G's trials. */
static int pool_steps(store *s, const known_steps *k, const cgroup *g, int skip, double **v,
                      int *nv, char **err) {
  int cap = *nv;
  for (int i = 0; i < g->n; i++) {
    double *st = NULL;
    int ns = 0, rc = 0, j = 0;
    while (j < 2 && !(k->v[j] && k->id[j] == g->ids[i])) j++;
    if (j < 2) {
      ns = k->n[j];
      st = xmalloc((size_t)ns * sizeof *st + 1);
      memcpy(st, k->v[j], (size_t)ns * sizeof *st);
    } else {
      rc = store_report_steps(s, g->ids[i], &st, &ns, err);
    }
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
 * pooled step times, and the baseline's pooled step times. A configuration run once ranks
 * by its value, so the TOP_CONFIGS fastest of those (read in value order) and the repeated
 * ones (kept by schema 13) no slower than the last of them hold the table: reads those, not
 * every trial. */
static int find_top(store *s, const known_steps *known, int64_t id, report_data *d, int skip,
                    char **err) {
  top_read t = {.d = d, .last = NAN};
  d->base = -1;
  int rc = store_report_fastest(s, id, on_fastest, &t, err);
  /* A repeat whose fastest is slower than the tenth run once has a slower median. */
  if (!rc) rc = store_report_repeats(s, id, t.last, on_repeat, &t, err);
  if (!rc) end_group(&t);
  free(t.v);
  int top[TOP_CONFIGS], nt = 0;
  for (int j = 0; j < d->ng && !rc; j++) {
    const cgroup *g = &d->g[j];
    if (j == d->base) continue;
    if (nt == TOP_CONFIGS && !ranks_before(g, &d->g[top[nt - 1]])) continue;
    int k = nt < TOP_CONFIGS ? nt++ : nt - 1;
    while (k > 0 && ranks_before(g, &d->g[top[k - 1]])) top[k] = top[k - 1], k--;
    top[k] = j;
  }
  for (int k = 0; k < nt && !rc; k++) {
    const cgroup *g = &d->g[top[k]];
    topcfg *tc = &d->top[d->n_top++];
    *tc = (topcfg){g->value, g->n, g->best_number, NULL, NULL, 0};
    rc = store_report_trial(s, g->best_id, &tc->best, err);
    if (!rc) rc = pool_steps(s, known, g, skip, &tc->steps, &tc->n_steps, err);
  }
  if (!rc && d->base >= 0) {
    d->have_base = 1;
    rc = pool_steps(s, known, &d->g[d->base], skip, &d->base_steps, &d->n_base_steps, err);
  }
  return rc;
}

/* The per-step curves' trials: the baseline trial, the winner (the listing's best) and the
 * top table's next configurations' fastest trials, REPORT_CURVES besides the baseline. */
static int load_curves(store *s, const cJSON *obj, report_data *d, char **err) {
  const cJSON *base = cJSON_GetObjectItemCaseSensitive(obj, "baseline");
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(obj, "best");
  const cJSON *pick[REPORT_CURVES + 1];
  int row[REPORT_CURVES + 1], n = 0, shown = 0;
  if (cJSON_IsObject(base)) pick[n] = base, row[n++] = 0;
  const char *wcfg = cJSON_IsObject(win) ? listing_str(win, "config") : NULL;
  if (cJSON_IsObject(win)) pick[n] = win, row[n++] = ++shown;
  for (int k = 0; k < d->n_top && shown < REPORT_CURVES; k++) {
    const char *c = listing_str(d->top[k].best, "config");
    if (wcfg && c && strcmp(c, wcfg) == 0) continue;
    pick[n] = d->top[k].best, row[n++] = ++shown;
  }
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    stepcurve *c = &d->curve[d->n_curves];
    *c = (stepcurve){(int)listing_num(pick[k], "number"), row[k], NULL, 0};
    rc = store_report_steps(s, (int64_t)listing_num(pick[k], "id"), &c->ms, &c->n, err);
    if (!rc && c->n > 0)
      d->n_curves++;
    else
      free(c->ms), c->ms = NULL;
  }
  return rc;
}

/* The top table's trials that the sample's runs left out join the plots. */
static void add_top_to_sample(report_data *d) {
  for (int k = 0; k < d->n_top; k++) {
    const cJSON *t = d->top[k].best;
    int number = (int)listing_num(t, "number");
    if (number % (d->step * d->run) < d->run) continue;
    sample_add(d, number, listing_str(t, "status"), listing_num(t, "value"),
               listing_num(t, "steps_budget"), listing_str(t, "config"), NULL);
  }
}

static void groups_free(report_data *d) {
  for (int j = 0; j < d->ng; j++) {
    free(d->g[j].config);
    free(d->g[j].ids);
  }
  free(d->g);
  d->g = NULL, d->ng = d->cap_g = 0;
}

static void data_free(report_data *d) {
  if (!d) return;
  free(d->ok);
  groups_free(d);
  for (int i = 0; i < d->n_sample; i++) {
    cJSON_Delete((cJSON *)d->sample[i].config);
    free(d->reason[i]);
  }
  free(d->sample);
  free(d->reason);
  for (int k = 0; k < d->n_curves; k++) free(d->curve[k].ms);
  free(d->number);
  importance_free(&d->imp);
  for (int k = 0; k < d->n_top; k++) {
    cJSON_Delete(d->top[k].best);
    free(d->top[k].steps);
  }
  free(d->base_steps);
  free(d);
}

/* The sample's shape for a sweep of TOTAL trials: every trial up to REPORT_SAMPLE, else runs
 * of REPORT_RUN consecutive trials, one every STEP x RUN. */
static void sample_shape(report_data *d, double total) {
  d->step = total > REPORT_SAMPLE ? (int)ceil(total / REPORT_SAMPLE) : 1;
  d->run = d->step > 1 ? REPORT_RUN : 1;
}

/* OBJ's "importance": importance_json over the sample's trials (read so far: the runs), or
 * null when they are too few. */
static void attach_importance(report_data *d, cJSON *obj) {
  int imp = importance_compute_trials(d->sample, d->n_sample, d->full, &d->imp);
  cJSON_DeleteItemFromObjectCaseSensitive(obj, "importance");
  cJSON_AddItemToObject(obj, "importance",
                        imp == 0 ? importance_json(&d->imp) : cJSON_CreateNull());
}

int report_importance_attach(store *s, cJSON *sweep_obj, char **err) {
  report_data *d = xcalloc(1, sizeof *d);
  int64_t id = (int64_t)listing_num(sweep_obj, "id");
  sample_shape(d, listing_num(sweep_obj, "n_trials"));
  d->t0 = INFINITY;
  int rc = store_report_span(s, id, on_span, d, err);
  if (!rc) rc = store_report_runs(s, id, d->step * d->run, d->run, on_sample, d, err);
  if (!rc) attach_importance(d, sweep_obj);
  data_free(d);
  return rc;
}

/* What the report draws of sweep ID besides its listing OBJ, from schema 13's aggregates and
 * bounded reads (no pass over every trial): the full budget and time origin, the curves'
 * candidates and ends, the sample's runs, then the top table's trials. */
static int load_data(store *s, int64_t id, const known_steps *k, cJSON *obj, report_data **out,
                     char **err) {
  report_data *d = xcalloc(1, sizeof *d);
  double total = listing_num(obj, "n_trials");
  d->n_trials = isnan(total) ? 0 : (int64_t)total;
  sample_shape(d, total);
  d->t0 = INFINITY;
  int rc = store_report_span(s, id, on_span, d, err);
  if (!rc) rc = store_report_tail(s, id, on_tail, d, err);
  if (!rc) rc = store_report_curve(s, id, on_curve, d, err);
  if (!rc) rc = store_report_runs(s, id, d->step * d->run, d->run, on_sample, d, err);
  if (!rc) {
    attach_importance(d, obj);
    rc = find_top(s, k, id, d, report_skip(obj), err);
  }
  if (!rc) rc = load_curves(s, obj, d, err);
  if (!rc) add_top_to_sample(d);
  groups_free(d); /* the candidates were for the ranking alone */
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
  /* A small page cache: these reads visit most pages once, and each page SQLite's default
   * 2 MiB cache keeps is a page of new memory, a page fault (report 1 of the generated
   * database: 1,124 faults, 60 ms of CPU; with 64 pages: 707, 40 ms). */
  if (rc == 0) rc = store_report_cache(s, REPORT_CACHE_PAGES, err);
  if (rc == 0) rc = store_sweep_get(s, sweep_ref, &sw, err);
  /* The sweep, its counts, its best and baseline; no trial table. */
  if (rc == 0) rc = store_show_sweep_brief(s, sw.id, 0, &out->obj, err);
  /* Their step times as numbers, not cJSON (a 20,000-step trial's were most of a compare),
   * for compare's ratios, or for a report's summary when no interval is cached. */
  verdict v;
  if (rc == 0 && (!with_data || (listing_verdict(out->obj, &v) == 0 && !v.pooled && isnan(v.lo)))) {
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(out->obj, "best");
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(out->obj, "baseline");
    if (cJSON_IsObject(best))
      rc = store_report_steps(s, (int64_t)listing_num(best, "id"), &out->best_steps,
                              &out->n_best_steps, err);
    if (rc == 0 && cJSON_IsObject(base))
      rc = store_report_steps(s, (int64_t)listing_num(base, "id"), &out->base_steps,
                              &out->n_base_steps, err);
  }
  if (rc == 0 && with_data) {
    known_steps k = {
        {(int64_t)listing_num(cJSON_GetObjectItemCaseSensitive(out->obj, "best"), "id"),
         (int64_t)listing_num(cJSON_GetObjectItemCaseSensitive(out->obj, "baseline"), "id")},
        {out->best_steps, out->base_steps},
        {out->n_best_steps, out->n_base_steps}};
    rc = load_data(s, sw.id, &k, out->obj, &out->data, err);
  }
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
  int rc = listing_verdict(r->obj, v), skip = report_skip(r->obj);
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
  add_flags(o, listing_str(trial, "xla_flags"));
  add_flags(o, listing_str(trial, "tpu_args"));
  cJSON *env = cJSON_Parse(listing_str(trial, "env") ? listing_str(trial, "env") : "{}");
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
  const char *opts = listing_str(sweep_obj, "options_json");
  cJSON *o = opts ? cJSON_Parse(opts) : NULL;
  double v = listing_num(o, "skip");
  cJSON_Delete(o);
  return isnan(v) || v < 0 ? 0 : (int)v;
}
