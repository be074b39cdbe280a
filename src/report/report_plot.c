/* The report's per-parameter panels: step time by each parameter's value (every sampled
 * trial a mark, failures in a band on top) and the OOM map of the two parameters that matter
 * most, both over the sweep's sample (src/report/report_load.c) with each parameter's values along
 * one axis (its distinct values, or equal ranges when there are many). Called by
 * src/report/report.c for each sweep's section; opens no database and keeps nothing between calls.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "diag.h"
#include "importance.h"
#include "listing.h"
#include "metric.h"
#include "report_impl.h"
#include "units.h"

/* ---- small helpers ---- */

/* Whether sampled trial T is a result: ok, with a value, at the full step budget. */
static int counts_as_result(const importance_trial *t, double full) {
  double b = t->steps_budget;
  return t->outcome == OUTCOME_OK && !isnan(t->value) && (isnan(b) || b <= 0 || b >= full);
}

/* Appends V as printf's "%.<D>f" (D 0 to 2) writes it at P (room for FIXED_MAX characters);
 * returns the end. Printf's exact decimal conversion was most of a large report's page; it is
 * needed only near a rounding tie, or for large values. */
#define FIXED_MAX 320 /* "%.2f" of the largest double: 309 digits, a sign, a point and 2 */
static char *fixed(char *p, double v, int d) {
  static const double scale[] = {1, 10, 100};
  double t = v * scale[d], fl = floor(t), frac = t - fl;
  if (!(fabs(t) < 1e9) || fabs(frac - 0.5) < 1e-6 || (signbit(v) && t > -0.5))
    return p + snprintf(p, FIXED_MAX, "%.*f", d, v);
  long long r = (long long)fl + (frac > 0.5), a = r < 0 ? -r : r;
  char buf[40], *e = buf + sizeof buf, *q = e;
  for (int k = 0; k < d; k++, a /= 10) *--q = (char)('0' + a % 10);
  if (d) *--q = '.';
  do *--q = (char)('0' + a % 10), a /= 10;
  while (a);
  if (r < 0) *--q = '-';
  memcpy(p, q, (size_t)(e - q));
  return p + (e - q);
}

/* Appends S at P; returns the end. */
static char *lit(char *p, const char *s) {
  size_t n = strlen(s);
  memcpy(p, s, n);
  return p + n;
}

/* ---- step time by value ---- */

typedef struct {
  char *text;
  double num; /* the JSON number, NaN for another type */
} level;

static int by_level(const void *a, const void *b) {
  const level *x = a, *y = b;
  if (!isnan(x->num) && !isnan(y->num)) return (x->num > y->num) - (x->num < y->num);
  return strcmp(x->text, y->text);
}

static int by_level_text(const void *a, const void *b) {
  return strcmp(((const level *)a)->text, ((const level *)b)->text);
}

/* How a parameter's values sit along a plot's x axis: its distinct values in order, or, for
 * more than REPORT_MAX_LEVELS numbers, REPORT_BINS ranges of equal width. */
typedef struct {
  level *l; /* what is shown, in order (the ranges' texts for bins) */
  int n;
  level *by_text; /* the distinct values by text, each .num its index in l (not binned) */
  int n_text;
  int binned, logscale;
  double lo, width; /* the bins: the first's start and the width, in log10 when LOGSCALE */
} axis;

static double axis_t(const axis *a, double v) {
  return a->logscale ? log10(v) : v;
}

static void bin_edge(char *buf, size_t n, double v, const char *name) {
  size_t len = strlen(name);
  if (len > 6 && strcmp(name + len - 6, "_bytes") == 0 && v >= 1024 && v < 9e18)
    units_format_bytes((int64_t)llround(v), buf, (int)n);
  else if (fabs(v) >= 100)
    snprintf(buf, n, "%.0f", v);
  else
    snprintf(buf, n, "%.3g", v);
}

/* The values of NAME the sampled trials set, ordered (numbers by value, others by text),
 * sorted and deduplicated: O(N log N) in the trials. */
static axis axis_of(const report_data *d, const char *name) {
  int n = 0;
  level *all = xcalloc((size_t)d->n_sample + 1, sizeof *all);
  for (int i = 0; i < d->n_sample; i++) {
    const cJSON *cfg = d->sample[i].config;
    char *text = importance_value_text(cfg, name);
    if (!text) continue;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, name);
    all[n++] = (level){text, cJSON_IsNumber(v) ? v->valuedouble : NAN};
  }
  qsort(all, (size_t)n, sizeof *all, by_level_text);
  int m = 0, all_num = 1;
  for (int i = 0; i < n; i++) {
    if (m > 0 && strcmp(all[m - 1].text, all[i].text) == 0) {
      free(all[i].text);
      continue;
    }
    all[m++] = all[i];
    all_num &= !isnan(all[i].num);
  }
  axis a = {.by_text = all, .n_text = m};
  if (m > REPORT_MAX_LEVELS && all_num) {
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < m; i++) lo = fmin(lo, all[i].num), hi = fmax(hi, all[i].num);
    a.binned = 1;
    a.logscale = lo > 0 && hi >= 100 * lo;
    a.lo = axis_t(&a, lo);
    a.width = (axis_t(&a, hi) - a.lo) / REPORT_BINS;
    a.n = REPORT_BINS;
    a.l = xcalloc(REPORT_BINS, sizeof *a.l);
    for (int k = 0; k < REPORT_BINS; k++) {
      double e0 = a.lo + k * a.width, e1 = a.lo + (k + 1) * a.width;
      if (a.logscale) e0 = pow(10, e0), e1 = pow(10, e1);
      char x[32], y[32];
      bin_edge(x, sizeof x, k == 0 ? lo : e0, name);
      bin_edge(y, sizeof y, k == REPORT_BINS - 1 ? hi : e1, name);
      a.l[k] = (level){xasprintf("%s\xe2\x80\x93%s", x, y), NAN};
    }
    return a;
  }
  a.n = m;
  a.l = xcalloc((size_t)m + 1, sizeof *a.l);
  for (int i = 0; i < m; i++) a.l[i] = (level){xstrdup(all[i].text), all_num ? all[i].num : NAN};
  qsort(a.l, (size_t)m, sizeof *a.l, by_level);
  /* Each distinct text's place in the shown order, for axis_index's binary search. */
  for (int i = 0; i < m; i++) {
    level key = {all[i].text, all_num ? all[i].num : NAN};
    const level *at = NULL;
    for (int lo = 0, hi = m - 1; lo <= hi && !at;) {
      int mid = (lo + hi) / 2, c = by_level(&key, &a.l[mid]);
      if (c == 0)
        at = &a.l[mid];
      else if (c < 0)
        hi = mid - 1;
      else
        lo = mid + 1;
    }
    all[i].num = at ? (double)(at - a.l) : -1;
  }
  return a;
}

static void axis_free(axis *a) {
  for (int j = 0; j < a->n; j++) free(a->l[j].text);
  for (int j = 0; j < a->n_text; j++) free(a->by_text[j].text);
  free(a->l);
  free(a->by_text);
}

/* The place of trial T's value of NAME on A, or -1 when it leaves NAME at its default. */
static int axis_index(const axis *a, const importance_trial *t, const char *name) {
  const cJSON *cfg = t->config;
  if (a->binned) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, name);
    if (!cJSON_IsNumber(v)) return -1;
    int k = a->width > 0 ? (int)floor((axis_t(a, v->valuedouble) - a->lo) / a->width) : 0;
    return k < 0 ? 0 : k >= a->n ? a->n - 1 : k;
  }
  char *text = importance_value_text(cfg, name);
  if (!text) return -1;
  level key = {text, NAN};
  const level *at = bsearch(&key, a->by_text, (size_t)a->n_text, sizeof key, by_level_text);
  free(text);
  return at ? (int)at->num : -1;
}

static void category_labels(const svg_plot *p, const level *l, int n) {
  for (int j = 0; j < n; j++) {
    double x = svg_x(p, j);
    if (n > 6)
      fprintf(p->f,
              "<text class=\"tick\" transform=\"translate(%.1f %d) rotate(-30)\" "
              "text-anchor=\"end\">",
              x + 3, p->h - p->bottom + 12);
    else
      fprintf(p->f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x,
              p->h - p->bottom + 14);
    report_html(p->f, l[j].text);
    fputs("</text>\n", p->f);
  }
}

/* One trial's mark: a dot for an ok value, a cross in the top band for an OOM, a ring for
 * another failure (its title the outcome and REASON, the first line of its error: a pruned
 * trial's why); nothing for a short halving rung or a running trial. */
static void trial_mark(const svg_plot *p, const importance_trial *t, int number, double x,
                       double full, int higher, const char *reason) {
  double band = p->top - 10;
  char buf[4 * FIXED_MAX + 160], *q = buf; /* one write a mark: a plot has thousands */
  const char *end = NULL;
  if (counts_as_result(t, full)) {
    q = fixed(lit(q, "<circle class=\"ok\" cx=\""), x, 1);
    double shown = metric_shown(t->value, higher);
    q = fixed(lit(q, "\" cy=\""), svg_y(p, shown), 1);
    q = fixed(lit(q, "\" r=\"3\"><title>trial "), number, 0);
    q = lit(fixed(lit(q, ": "), shown, 2),
            higher ? "/s</title></circle>\n" : " ms</title></circle>\n");
  } else if (t->outcome == OUTCOME_OOM) {
    q = fixed(lit(q, "<path class=\"oom\" d=\"M"), x - 3, 1);
    q = fixed(lit(q, " "), band - 3, 1);
    q = fixed(lit(q, " l6 6 m0 -6 l-6 6\"><title>trial "), number, 0);
    q = lit(q, ": OOM");
    end = "</title></path>\n";
  } else if (t->outcome != OUTCOME_OK && t->outcome != OUTCOME_RUNNING) {
    /* (an outcome's name needs no escaping) */
    q = fixed(lit(q, "<circle class=\"failed\" cx=\""), x, 1);
    q = fixed(lit(q, "\" cy=\""), band, 1);
    q = fixed(lit(q, "\" r=\"3\"><title>trial "), number, 0);
    q = lit(lit(q, ": "), t->outcome >= 0 ? outcome_name((outcome)t->outcome) : "");
    end = "</title></circle>\n";
  } else {
    return;
  }
  fwrite(buf, 1, (size_t)(q - buf), p->f);
  if (!end) return;
  if (reason) {
    fputs(": ", p->f);
    report_html(p->f, reason);
  }
  fputs(end, p->f);
}

static void param_plot(FILE *f, const report_sweep *r, int si, int k, const char *name,
                       const axis *ax) {
  const report_data *d = r->data;
  const level *l = ax->l;
  int nl = ax->n;
  double full = r->data->full;
  int higher = listing_higher(r->obj); /* drawn as the user's metric reads: a rate */
  double base = metric_shown(
      listing_num(cJSON_GetObjectItemCaseSensitive(r->obj, "baseline"), "value"), higher);
  svg_plot p = {.x0 = -0.5,
                .x1 = nl - 0.5,
                .y0 = INFINITY,
                .y1 = -INFINITY,
                .top = 26,
                .bottom = nl > 6 ? 70 : 42};
  for (int i = 0; i < d->n_sample; i++)
    if (counts_as_result(&d->sample[i], full)) {
      double v = metric_shown(d->sample[i].value, higher);
      if (v < p.y0) p.y0 = v;
      if (v > p.y1) p.y1 = v;
    }
  if (base < p.y0) p.y0 = base;
  if (base > p.y1) p.y1 = base;
  if (!isfinite(p.y0)) p.y0 = 0, p.y1 = 1;
  double pad = (p.y1 - p.y0) * 0.08 + 1e-9;
  p.y0 -= pad, p.y1 += pad;
  char id[48], *title = xasprintf("%s by value of %s", higher ? "rate" : "step time", name);
  snprintf(id, sizeof id, "param-%d-%d", si + 1, k + 1);
  int w = 120 + 56 * nl;
  svg_begin(&p, f, id, w < 320 ? 320 : w > 900 ? 900 : w, 260, title);
  free(title);
  svg_axes(&p, "", higher ? "rate (per second)" : "step time (ms)", 0);
  category_labels(&p, l, nl);
  fprintf(f, "<text class=\"band\" x=\"%d\" y=\"%d\" text-anchor=\"end\">failed</text>\n",
          p.left - 4, p.top - 7);
  if (!isnan(base))
    fprintf(f,
            "<line class=\"baseline\" stroke=\"#555\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\">"
            "<title>baseline %.2f%s</title></line>\n",
            p.left, p.w - p.right, svg_y(&p, base), svg_y(&p, base), base, higher ? "/s" : " ms");
  for (int i = 0; i < d->n_sample; i++) {
    int j = axis_index(ax, &d->sample[i], name);
    /* A deterministic spread so repeated values stay visible. */
    if (j >= 0)
      trial_mark(&p, &d->sample[i], d->number[i], svg_x(&p, j) + ((i * 7919) % 17 - 8) * 1.5, full,
                 higher, d->reason[i]);
  }
  svg_end(&p);
}

/* ---- the OOM map ---- */

typedef struct {
  int ok, oom, failed;
  double best;
} cell;

static void oom_cell(FILE *f, const cell *c, double x, double y, double lo, double hi, int higher) {
  const char *fill = "#f2f2f2";
  char green[32];
  if (c->oom && !c->ok)
    fill = "#d62728";
  else if (c->oom)
    fill = "#f4a6a6";
  else if (c->ok) {
    double u = hi > lo ? (c->best - lo) / (hi - lo) : 0; /* 0: the fastest */
    snprintf(green, sizeof green, "rgb(%d,%d,%d)", (int)(40 + 170 * u), (int)(150 + 80 * u),
             (int)(60 + 150 * u));
    fill = green;
  } else if (c->failed) {
    fill = "#bbbbbb";
  }
  fprintf(f, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"64\" height=\"28\" fill=\"%s\">",
          x, y, fill);
  fprintf(f, "<title>%d ok, %d OOM, %d other failures", c->ok, c->oom, c->failed);
  if (c->ok) fprintf(f, "; best %.2f%s", metric_shown(c->best, higher), higher ? "/s" : " ms");
  fputs("</title></rect>", f);
  if (c->ok + c->oom + c->failed > 0)
    fprintf(f, "<text class=\"celltext\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
            x + 32, y + 18,
            c->oom && !c->ok ? "OOM"
            : c->ok          ? ""
            : c->oom         ? "some OOM"
                             : "failed");
  if (c->ok)
    fprintf(f,
            "<text class=\"celltext\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f%s</text>",
            x + 32, y + 18, metric_shown(c->best, higher), c->oom ? "*" : "");
  fputc('\n', f);
}

static void oom_map(FILE *f, const report_sweep *r, int si, const char *a, const char *b,
                    const axis *xa, const axis *xb) {
  const report_data *d = r->data;
  const level *la = xa->l, *lb = xb->l;
  int na = xa->n, nb = xb->n;
  cell *c = xcalloc((size_t)(na * nb) + 1, sizeof *c);
  double full = r->data->full, lo = INFINITY, hi = -INFINITY;
  for (int k = 0; k < d->n_sample; k++) {
    const importance_trial *t = &d->sample[k];
    int i = axis_index(xa, t, a), j = axis_index(xb, t, b);
    if (i < 0 || j < 0) continue;
    cell *x = &c[j * na + i];
    double v = t->value;
    if (counts_as_result(t, full)) {
      if (!x->ok || v < x->best) x->best = v;
      x->ok++;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    } else if (t->outcome == OUTCOME_OOM) {
      x->oom++;
    } else if (t->outcome != OUTCOME_OK && t->outcome != OUTCOME_RUNNING) {
      x->failed++;
    }
  }
  char id[32];
  snprintf(id, sizeof id, "oommap-%d", si + 1);
  svg_plot p = {.left = 110, .top = 10, .bottom = 76, .right = 10};
  char *title = xasprintf("OOMs and best step time over %s and %s", a, b);
  /* wide enough for the caption's longer line (about 7 px a character), not only the cells */
  size_t longest = strlen(a) > strlen(b) ? strlen(a) : strlen(b);
  int w = 110 + 64 * na + 10, need = 110 + 7 * (int)(longest + 3) + 10;
  svg_begin(&p, f, id, w > need ? w : need, 10 + 28 * nb + 76, title);
  free(title);
  for (int j = 0; j < nb; j++) {
    fprintf(f, "<text class=\"tick\" x=\"104\" y=\"%d\" text-anchor=\"end\">", 10 + 28 * j + 18);
    report_html(f, lb[j].text);
    fputs("</text>\n", f);
    for (int i = 0; i < na; i++)
      oom_cell(f, &c[j * na + i], 110 + 64 * i, 10 + 28 * j, lo, hi, listing_higher(r->obj));
  }
  for (int i = 0; i < na; i++) {
    fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", 110 + 64 * i + 32,
            10 + 28 * nb + 14);
    report_html(f, la[i].text);
    fputs("</text>\n", f);
  }
  /* one line each: on one line two flag names ran past the map's edge */
  fprintf(f, "<text class=\"label\" x=\"110\" y=\"%d\">x: ", 10 + 28 * nb + 34);
  report_html(f, a);
  fprintf(f, "</text>\n<text class=\"label\" x=\"110\" y=\"%d\">y: ", 10 + 28 * nb + 52);
  report_html(f, b);
  fputs("</text>\n", f);
  svg_end(&p);
  free(c);
}

/* ---- parallel coordinates ---- */

/* At most this many parameters (the most important) get an axis. */
#define PC_AXES 8

static const importance_trial *pc_trials; /* qsort's context */

/* Slowest first, so the fastest lines are drawn last, on top (a rate sweep's too: by cost). */
static int by_value_desc(const void *a, const void *b) {
  double x = pc_trials[*(const int *)a].value, y = pc_trials[*(const int *)b].value;
  return (x < y) - (x > y);
}

/* The height of trial T's value of the K-th parameter on its axis: slot 0 the default (the
 * parameter left unset), then its values in order, bottom to top. */
static double pc_y(const svg_plot *p, const axis *a, const importance_trial *t, const char *name) {
  int j = axis_index(a, t, name);
  return p->h - p->bottom - (j + 1.0) / (a->n > 0 ? a->n : 1) * (p->h - p->top - p->bottom);
}

static void pc_polyline(FILE *f, const svg_plot *p, const report_sweep *r, int i, const axis *ax,
                        int na, double lo, double hi, int fail) {
  const report_data *d = r->data;
  const importance_trial *t = &d->sample[i];
  int higher = listing_higher(r->obj);
  char col[8];
  fprintf(f, "<polyline class=\"%s\"", fail ? "pcfail" : "pc");
  if (!fail) {
    report_scale_color(hi > lo ? (t->value - lo) / (hi - lo) : 0, col);
    fprintf(f, " stroke=\"%s\"", col);
  }
  fputs(" points=\"", f);
  for (int k = 0; k < na; k++)
    fprintf(f, "%s%.0f,%.0f", k ? " " : "", svg_x(p, k),
            pc_y(p, &ax[k], t, r->data->imp.p[k].name));
  double yv = fail ? p->top - 8 : svg_y(p, metric_shown(t->value, higher));
  fprintf(f, " %.0f,%.0f\"><title>trial %d: ", svg_x(p, na), yv, d->number[i]);
  if (fail) {
    fputs(t->outcome >= 0 ? outcome_name((outcome)t->outcome) : "", f);
    if (d->reason[i]) fputs(": ", f), report_html(f, d->reason[i]);
  } else {
    fprintf(f, "%.2f%s", metric_shown(t->value, higher), higher ? "/s" : " ms");
  }
  fputs("</title></polyline>\n", f);
  if (fail)
    fprintf(f,
            t->outcome == OUTCOME_OOM
                ? "<path class=\"oom\" d=\"M%.1f %.1f l6 6 m0 -6 l-6 6\"/>\n"
                : "<circle class=\"failed\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n",
            svg_x(p, na) + (t->outcome == OUTCOME_OOM ? -3 : 0),
            yv - (t->outcome == OUTCOME_OOM ? 3 : 0));
}

/* One polyline per ok trial of the sample across the most important parameters' axes to its
 * step time, coloured by it (blue the fastest, red the slowest); failed trials dashed grey,
 * ending in the band above the step-time axis with their mark. */
static void parallel_plot(FILE *f, const report_sweep *r, int si, const axis *ax, int na) {
  const report_data *d = r->data;
  int higher = listing_higher(r->obj), *order = xcalloc((size_t)d->n_sample + 1, sizeof *order);
  int n_ok = 0, n_fail = 0;
  double lo = INFINITY, hi = -INFINITY;
  /* room on the left for the first axis's value labels (about 6 px a character at 10 px) */
  size_t widest = strlen("default");
  for (int j = 0; j < ax[0].n; j++)
    if (strlen(ax[0].l[j].text) > widest) widest = strlen(ax[0].l[j].text);
  svg_plot p = {.x0 = -0.3,
                .x1 = na + 0.3,
                .y0 = INFINITY,
                .y1 = -INFINITY,
                .top = 62,
                .bottom = 16,
                .left = 12 + 6 * (int)widest,
                .right = 44};
  for (int i = 0; i < d->n_sample; i++) {
    const importance_trial *t = &d->sample[i];
    if (counts_as_result(t, d->full)) {
      order[n_ok++] = i;
      lo = fmin(lo, t->value), hi = fmax(hi, t->value);
      double v = metric_shown(t->value, higher);
      p.y0 = fmin(p.y0, v), p.y1 = fmax(p.y1, v);
    }
  }
  if (!isfinite(p.y0)) p.y0 = 0, p.y1 = 1;
  double pad = (p.y1 - p.y0) * 0.04 + 1e-9;
  p.y0 -= pad, p.y1 += pad;
  char id[32];
  snprintf(id, sizeof id, "parallel-%d", si + 1);
  svg_begin(&p, f, id, p.left + 110 + 140 * na, 350,
            "parallel coordinates: each trial's values of the searched parameters and its result");
  for (int i = 0; i < d->n_sample; i++) {
    int o = d->sample[i].outcome;
    if (o < 0 || o == OUTCOME_OK || o == OUTCOME_RUNNING) continue;
    pc_polyline(f, &p, r, i, ax, na, lo, hi, 1);
    n_fail++;
  }
  pc_trials = d->sample;
  qsort(order, (size_t)n_ok, sizeof *order, by_value_desc);
  for (int k = 0; k < n_ok; k++) pc_polyline(f, &p, r, order[k], ax, na, lo, hi, 0);
  for (int k = 0; k <= na; k++) {
    double x = svg_x(&p, k);
    /* the axes over the lines, their labels haloed; staggered names: three rows (a flag's name is
     * wider than the axes' spacing), the first axis's from its left, the last's to its right */
    const char *anchor = k == 0 ? "start" : k == na ? "end" : "middle";
    fprintf(f,
            "<line class=\"pcaxis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n"
            "<text class=\"label\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">",
            x, x, p.top, p.h - p.bottom,
            k == 0    ? x - 6
            : k == na ? x + 6
                      : x,
            14 + 14 * (k % 3), anchor);
    if (k < na)
      report_html(f, r->data->imp.p[k].name);
    else
      fputs(higher ? "rate (per second)" : "step time (ms)", f);
    fputs("</text>\n", f);
    if (k == na) {
      double t[12];
      int nt = svg_ticks(p.y0, p.y1, 6, t);
      for (int j = 0; j < nt; j++)
        fprintf(f,
                "<text class=\"tick halo\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                x - 4, svg_y(&p, t[j]) + 3, t[j]);
      fprintf(f, "<text class=\"band\" x=\"%.1f\" y=\"%d\">failed</text>\n", x + 6, p.top - 5);
      continue;
    }
    for (int j = -1; j < ax[k].n; j++) {
      double y =
          p.h - p.bottom - (j + 1.0) / (ax[k].n > 0 ? ax[k].n : 1) * (p.h - p.top - p.bottom);
      fprintf(f, "<text class=\"tick halo\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x - 4,
              y + 3);
      report_html(f, j < 0 ? "default" : ax[k].l[j].text);
      fputs("</text>\n", f);
    }
  }
  svg_end(&p);
  fprintf(f,
          "<p class=\"note\">%d ok trial%s, blue the %s, red the %s; %d failed trial%s dashed "
          "grey, ending above the %s axis (a cross: OOM).</p>\n",
          n_ok, n_ok == 1 ? "" : "s", higher ? "highest rate" : "fastest",
          higher ? "lowest" : "slowest", n_fail, n_fail == 1 ? "" : "s",
          higher ? "rate" : "step time");
  free(order);
}

/* ---- the sections ---- */

void report_value_sections(FILE *f, const report_sweep *r, int si) {
  const importance_result *imp = &r->data->imp;
  fputs(
      "<h3>Step time by value</h3>\n<p class=\"note\">Dots: ok trials; crosses in the top "
      "band: OOM; rings: other failures; dashed: the baseline.</p><div class=\"params\">\n",
      f);
  /* Each parameter's axis, made once for its plot and the OOM map. */
  axis *ax = xcalloc((size_t)imp->n + 1, sizeof *ax);
  for (int k = 0; k < imp->n; k++) {
    ax[k] = axis_of(r->data, imp->p[k].name);
    fputs("<figure><figcaption>", f);
    report_html(f, imp->p[k].name);
    fputs("</figcaption>\n", f);
    param_plot(f, r, si, k, imp->p[k].name, &ax[k]);
    fputs("</figure>\n", f);
  }
  fputs("</div>\n<h3>Parallel coordinates</h3>\n", f);
  if (imp->n >= 1)
    parallel_plot(f, r, si, ax, imp->n < PC_AXES ? imp->n : PC_AXES);
  else
    fprintf(f,
            "<p class=\"note\" id=\"parallel-%d\">Needs the importance estimate's parameters "
            "(too few finished trials to rank them).</p>\n",
            si + 1);
  fputs("<h3>OOM map</h3>\n", f);
  if (imp->n >= 2) {
    fprintf(f,
            "<p class=\"note\">The two parameters that matter most. Red: every trial OOM; pink: "
            "some (* marks a best beside an OOM); green: the best ok %s, darker is "
            "faster; grey: not tried or other failures.</p>\n",
            listing_higher(r->obj) ? "rate per second" : "step time in ms");
    oom_map(f, r, si, imp->p[0].name, imp->p[1].name, &ax[0], &ax[1]);
  } else {
    fprintf(f, "<p class=\"note\" id=\"oommap-%d\">Needs two searched parameters.</p>\n", si + 1);
  }
  for (int k = 0; k < imp->n; k++) axis_free(&ax[k]);
  free(ax);
}
