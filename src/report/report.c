/* `flagtune report SWEEP... -o report.html`: one self-contained HTML file (inline CSS and
 * SVG, no script, nothing fetched) with the sweeps' best-so-far curves, step time by value of
 * each parameter with failures marked, the OOM map of the two parameters that matter most,
 * parameter importance, the top configurations against the baseline with intervals, and the
 * export snippet. Owns the report's content, drawn from what src/report/report_load.c read of each
 * sweep (its listing, its aggregates, a bounded sample of its trials), the per-parameter
 * panels in src/report/report_plot.c; opens no database. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify.h"
#include "diag.h"
#include "importance.h"
#include "listing.h"
#include "metric.h"
#include "outfile.h"
#include "report_impl.h"
#include "stats.h"
#include "store.h"
#include "trialcfg.h"
#include "units.h"

/* ---- small helpers ---- */

/* A stored value as the sweep's user reads it: "412.30&nbsp;ms", or a rate "2.24/s". */
static void put_ms(FILE *f, double v, int higher) {
  double shown = metric_shown(v, higher);
  if (isnan(shown))
    fputs("&ndash;", f);
  else
    fprintf(f, higher ? "%.2f/s" : "%.2f&nbsp;ms", shown);
}

/* ---- best so far ---- */

typedef struct {
  double *x, *y; /* where the best so far changes: the trial number or minutes, the value */
  int n;
  double xmax; /* the last search trial's x */
} series;

static const okrow *sort_ok; /* qsort's context */

/* By finishing time, then number. */
static int by_finish(const void *a, const void *b) {
  const okrow *x = &sort_ok[*(const int *)a], *y = &sort_ok[*(const int *)b];
  if (x->fin != y->fin) return x->fin < y->fin ? -1 : 1;
  return (x->number > y->number) - (x->number < y->number);
}

/* The best-so-far of the search (baseline and confirmation left out) against the trial
 * number (BY_TIME 0) or the minutes since the sweep's first trial started: its change points
 * only (a curve of 60,000 trials changes a few dozen times). */
static series best_series(const report_sweep *r, int by_time) {
  const report_data *d = r->data;
  int *idx = xcalloc((size_t)d->n_ok + 1, sizeof *idx), n = 0;
  for (int i = 0; i < d->n_ok; i++) {
    const okrow *t = &d->ok[i];
    if (!t->search || !report_at_full(d, t) || (by_time && isnan(t->fin))) continue;
    idx[n++] = i;
  }
  /* Points in the order they became known: by number (the candidates' order), or by finish. */
  sort_ok = d->ok;
  int sorted = 1; /* trials run one at a time finish in number order: no sort then */
  for (int k = 1; by_time && sorted && k < n; k++) sorted = by_finish(&idx[k - 1], &idx[k]) <= 0;
  if (!sorted) qsort(idx, (size_t)n, sizeof *idx, by_finish);
  series s = {xcalloc((size_t)n + 1, sizeof(double)), xcalloc((size_t)n + 1, sizeof(double)), 0, 0};
  for (int k = 0; k < n; k++) {
    const okrow *t = &d->ok[idx[k]];
    double x = by_time ? (t->fin - d->t0) / 60 : t->number;
    if (s.n == 0 || t->value < s.y[s.n - 1]) s.x[s.n] = x, s.y[s.n++] = t->value;
    if (x > s.xmax) s.xmax = x;
  }
  /* The candidates hold every change point, not every trial: the curve runs on to the last. */
  double end = by_time ? d->xmax_time : d->xmax_number;
  if (end > s.xmax) s.xmax = end;
  free(idx);
  return s;
}

/* Whether the I-th trial of R's sample is a result at the full budget (a dot of the history). */
static int sample_result(const report_sweep *r, int i) {
  const importance_trial *t = &r->data->sample[i];
  double b = t->steps_budget;
  return t->outcome == OUTCOME_OK && !isnan(t->value) && (isnan(b) || b <= 0 || b >= r->data->full);
}

/* By trial number: every trial of the sample (every trial of a sweep of at most
 * REPORT_SAMPLE) under the best-so-far curve: an ok result as a faint dot, so the history shows
 * the spread the curve is the lower (for a rate, the upper) edge of, a failure in the band
 * above the frame (a cross: OOM; a ring in the sweep's colour: another outcome, its reason on
 * hover). */
static void history_dots(FILE *f, const svg_plot *p, const report_sweep *r, int si) {
  const report_data *d = r->data;
  int higher = listing_higher(r->obj);
  for (int i = 0; i < d->n_sample; i++) {
    int o = d->sample[i].outcome;
    double x = svg_x(p, d->number[i]), band = p->top - 10;
    if (sample_result(r, i)) {
      double v = metric_shown(d->sample[i].value, higher);
      fprintf(f,
              "<circle class=\"trial\" fill=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\"><title>trial "
              "%d: %.2f%s</title></circle>\n",
              svg_color(si), x, svg_y(p, v), d->number[i], v, higher ? "/s" : " ms");
      continue;
    }
    if (o < 0 || o == OUTCOME_OK || o == OUTCOME_RUNNING) continue;
    if (o == OUTCOME_OOM)
      fprintf(f, "<path class=\"oom\" d=\"M%.1f %.1f l6 6 m0 -6 l-6 6\"><title>trial %d: OOM",
              x - 3, band - 3, d->number[i]);
    else
      fprintf(f,
              "<circle class=\"failed\" style=\"stroke:%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\">"
              "<title>trial %d: %s",
              svg_color(si), x, band, d->number[i], outcome_name((outcome)o));
    if (d->reason[i]) fputs(": ", f), report_html(f, d->reason[i]);
    fputs(o == OUTCOME_OOM ? "</title></path>\n" : "</title></circle>\n", f);
  }
}

static void best_plot(FILE *f, report_sweep *rs, int n, int by_time) {
  series s[REPORT_MAX_SWEEPS];
  /* a band above the frame for the failures by trial number (the same frame by time) */
  svg_plot p = {.x0 = 0, .x1 = 0, .y0 = INFINITY, .y1 = -INFINITY, .top = 26};
  int higher = n > 0 && listing_higher(rs[0].obj);
  for (int i = 0; i < n; i++) {
    s[i] = best_series(&rs[i], by_time);
    /* Drawn as the user's metric reads: a rate sweep's best so far climbs. */
    int hi_i = listing_higher(rs[i].obj);
    for (int k = 0; k < s[i].n; k++) s[i].y[k] = metric_shown(s[i].y[k], hi_i);
    double base = metric_shown(
        listing_num(cJSON_GetObjectItemCaseSensitive(rs[i].obj, "baseline"), "value"), hi_i);
    if (s[i].n > 0 && s[i].xmax > p.x1) p.x1 = s[i].xmax;
    for (int k = 0; k < s[i].n; k++) {
      if (s[i].y[k] < p.y0) p.y0 = s[i].y[k];
      if (s[i].y[k] > p.y1) p.y1 = s[i].y[k];
    }
    if (base < p.y0) p.y0 = base;
    if (base > p.y1) p.y1 = base;
    for (int k = 0; !by_time && rs[i].data && k < rs[i].data->n_sample; k++) {
      if (rs[i].data->number[k] > p.x1) p.x1 = rs[i].data->number[k];
      if (!sample_result(&rs[i], k)) continue;
      double v = metric_shown(rs[i].data->sample[k].value, hi_i);
      if (v < p.y0) p.y0 = v;
      if (v > p.y1) p.y1 = v;
    }
  }
  if (!isfinite(p.y0)) p.y0 = 0, p.y1 = 1;
  double pad = (p.y1 - p.y0) * 0.08 + 1e-9;
  p.y0 -= pad, p.y1 += pad;
  /* Wall clock in the unit that reads best: seconds for a short sweep, hours for a night. */
  double scale = 1;
  const char *unit = "minutes";
  if (by_time && p.x1 < 2)
    scale = 60, unit = "seconds";
  else if (by_time && p.x1 > 180)
    scale = 1 / 60.0, unit = "hours";
  for (int i = 0; i < n; i++)
    for (int k = 0; k < s[i].n; k++) s[i].x[k] *= scale;
  p.x1 = p.x1 * scale * 1.02;
  char xlabel[64];
  snprintf(xlabel, sizeof xlabel, "%s since the first trial started", unit);
  const char *id = by_time ? "best-by-time" : "best-by-trial";
  svg_begin(&p, f, id, 560, 300,
            by_time  ? (higher ? "best rate so far against wall clock"
                               : "best step time so far against wall clock")
            : higher ? "best rate so far against trial number"
                     : "best step time so far against trial number");
  svg_axes(&p, by_time ? xlabel : "trial number",
           higher ? "best rate so far (per second)" : "best step time so far (ms)", 1);
  if (!by_time)
    fprintf(f, "<text class=\"band\" x=\"%d\" y=\"%d\" text-anchor=\"end\">failed</text>\n",
            p.left - 4, p.top - 7);
  for (int i = 0; i < n && !by_time; i++)
    if (rs[i].data) history_dots(f, &p, &rs[i], i);
  for (int i = 0; i < n; i++) {
    int hi_i = listing_higher(rs[i].obj);
    const char *vunit = hi_i ? "/s" : " ms";
    double base = metric_shown(
        listing_num(cJSON_GetObjectItemCaseSensitive(rs[i].obj, "baseline"), "value"), hi_i);
    if (!isnan(base))
      fprintf(f,
              "<line class=\"baseline\" stroke=\"%s\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
              "y2=\"%.1f\"><title>baseline %.2f%s</title></line>\n",
              svg_color(i), p.left, p.w - p.right, svg_y(&p, base), svg_y(&p, base), base, vunit);
    if (s[i].n > 0) {
      fprintf(f, "<path class=\"series\" stroke=\"%s\" d=\"M%.1f %.1f", svg_color(i),
              svg_x(&p, s[i].x[0]), svg_y(&p, s[i].y[0]));
      for (int k = 1; k < s[i].n; k++)
        fprintf(f, " H%.1f V%.1f", svg_x(&p, s[i].x[k]), svg_y(&p, s[i].y[k]));
      fprintf(f, " H%.1f\"/>\n", svg_x(&p, p.x1));
    }
    for (int k = 0; k < s[i].n; k++)
      fprintf(f,
              "<circle fill=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%.2f%s at %g"
              "</title></circle>\n",
              svg_color(i), svg_x(&p, s[i].x[k]), svg_y(&p, s[i].y[k]), s[i].y[k], vunit,
              s[i].x[k]);
    free(s[i].x);
    free(s[i].y);
  }
  svg_end(&p);
}

/* ---- the summary table ---- */

static void put_counts(FILE *f, const cJSON *obj) {
  const cJSON *it;
  int first = 1;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(obj, "counts")) {
    fprintf(f, "%s<span class=\"st-%s\">", first ? "" : ", ", "x");
    report_html(f, it->string);
    fprintf(f, " %d</span>", it->valueint);
    first = 0;
  }
}

static void put_text(FILE *f, const char *tag, const char *s) {
  fprintf(f, "<%s>", tag);
  report_html(f, s ? s : "");
  fprintf(f, "</%s>", tag);
}

/* A verdict's speedup and interval as one cell's text, or a dash without one. */
static void put_speedup(FILE *f, const verdict *v) {
  if (!v) {
    fputs("&ndash;", f);
    return;
  }
  char sp[96];
  listing_format_speedup(v, sp, sizeof sp);
  report_html(f, sp);
}
static void summary_table(FILE *f, report_sweep *rs, int n) {
  fputs(
      "<table id=\"summary\"><thead><tr><th></th><th>sweep</th><th>model</th>"
      "<th>hardware</th><th>software</th><th>strategy</th><th>status</th><th>trials</th>"
      "<th>baseline</th><th>best</th><th>speedup (95% CI)</th>",
      f);
  if (n > 1) fputs("<th>best vs sweep A</th>", f);
  fputs("</tr></thead><tbody>\n", f);
  verdict first = {NAN, NAN, NAN, NAN, 0};
  for (int i = 0; i < n; i++) {
    const cJSON *o = rs[i].obj;
    verdict v;
    int have = report_verdict(&rs[i], &v) == 0;
    if (i == 0) first = v;
    fprintf(f, "<tr><td><span class=\"swatch\" style=\"background:%s\"></span>%c</td><td>",
            svg_color(i), 'A' + i);
    fprintf(f, "%.0f ", listing_num(o, "id"));
    report_html(f, listing_str(o, "name"));
    fputs(" <small>(", f);
    report_html(f, rs[i].db);
    fputs(")</small></td>", f);
    put_text(f, "td", listing_str(o, "model"));
    put_text(f, "td", listing_str(o, "hardware"));
    put_text(f, "td", listing_str(o, "software"));
    put_text(f, "td", listing_str(o, "strategy"));
    put_text(f, "td", listing_str(o, "status"));
    fprintf(f, "<td>%.0f: ", listing_num(o, "n_trials"));
    put_counts(f, o);
    fputs("</td><td>", f);
    put_ms(f, have ? v.baseline : NAN, listing_higher(o));
    fputs("</td><td>", f);
    put_ms(f, v.value, listing_higher(o));
    if (v.pooled) fprintf(f, " <small>(median of %d)</small>", v.pooled);
    fputs("</td><td>", f);
    put_speedup(f, have ? &v : NULL);
    fputs("</td>", f);
    if (n > 1) {
      if (!isnan(first.value) && !isnan(v.value))
        fprintf(f, "<td>%.3fx</td>", first.value / v.value);
      else
        fputs("<td>&ndash;</td>", f);
    }
    fputs("</tr>\n", f);
  }
  fputs("</tbody></table>\n", f);
}

/* ---- importance ---- */

static void importance_section(FILE *f, const report_sweep *r, int si) {
  const cJSON *imp = cJSON_GetObjectItemCaseSensitive(r->obj, "importance"), *p;
  fprintf(f,
          "<table class=\"importance\" id=\"importance-%d\"><thead><tr><th>parameter</th>"
          "<th>share</th><th></th><th>variance explained alone</th><th>values</th></tr>"
          "</thead><tbody>\n",
          si + 1);
  cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(imp, "params")) {
    fputs("<tr>", f);
    put_text(f, "td", listing_str(p, "name"));
    fprintf(
        f,
        "<td>%.0f%%</td><td><svg width=\"160\" height=\"12\"><rect class=\"bar\" width=\"%.1f\" "
        "height=\"12\"/></svg></td><td>%.1f%%</td><td>%.0f</td></tr>\n",
        100 * listing_num(p, "share"), 160 * listing_num(p, "share"),
        100 * listing_num(p, "explained"), listing_num(p, "levels"));
  }
  fputs("</tbody></table>\n", f);
  if (cJSON_IsObject(imp))
    fprintf(f,
            "<p class=\"note\">Over %.0f trials (%.0f failed by their configuration, scored "
            "slower than the slowest ok trial). The share of the variance of log step time "
            "each parameter's values explain alone, corrected for the number of values "
            "(epsilon squared); a marginal estimate that does not see interactions.</p>\n",
            listing_num(imp, "trials"), listing_num(imp, "failed"));
  else
    fputs("<p class=\"note\">Too few finished trials to estimate importance.</p>\n", f);
}

/* ---- the top configurations ---- */

/* A byte count's setting (a *bytes*, *threshold* or *BUFFSIZE* name, a whole number of at
 * least 1 KiB) in human units into BUF ("64MiB"); 0 when V is not one. */
static int human_bytes(const char *name, const char *v, char *buf, int n) {
  if (!strstr(name, "bytes") && !strstr(name, "threshold") && !strstr(name, "BUFFSIZE")) return 0;
  char *end = NULL;
  long long b = strtoll(v, &end, 10);
  if (!*v || *end || b < 1024) return 0;
  units_format_bytes(b, buf, n);
  return 1;
}

/* What TRIAL sets that the baseline does not (or sets otherwise); byte counts in human units,
 * the exact value in the title (the export below has it too). */
static void put_differences(FILE *f, const cJSON *trial, const cJSON *base) {
  cJSON *a = report_settings(trial), *b = report_settings(base);
  const cJSON *it;
  int n = 0;
  cJSON_ArrayForEach(it, a) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(b, it->string);
    if (cJSON_IsString(o) && strcmp(o->valuestring, it->valuestring) == 0) continue;
    char human[32];
    int h = human_bytes(it->string, it->valuestring, human, sizeof human);
    fputs(n++ ? " <code" : "<code", f);
    if (h) {
      fputs(" title=\"", f);
      report_html(f, it->valuestring);
      fputs("\"", f);
    }
    fputs(">", f);
    report_html(f, it->string);
    fputs("=", f);
    report_html(f, h ? human : it->valuestring);
    fputs("</code>", f);
  }
  if (n == 0) fputs("<em>the baseline's settings</em>", f);
  cJSON_Delete(a);
  cJSON_Delete(b);
}

/* The top table's intervals (STATS_RESAMPLES resampled medians a side, as stats_speedup_ci
 * draws): the baseline's resampled medians are drawn once from the stream STATS_DISPLAY_SEED,
 * and each row's from ranks drawn once per sample size from another stream (TOP_ROW_SEED), so
 * a row is independent of the baseline whatever their sizes, and ten rows cost about two
 * draws, not twenty (stats.h, stats_boot). */
#define TOP_ROW_SEED (STATS_DISPLAY_SEED + 1)

/* The index in D's top table of the winner's configuration (the listing's "best"), -1 when it
 * is not there. */
static int winner_row(const report_data *d, const cJSON *win) {
  const char *cfg = listing_str(win, "config");
  for (int j = 0; cfg && j < d->n_top; j++) {
    const char *c = listing_str(d->top[j].best, "config");
    if (c && strcmp(c, cfg) == 0) return j;
  }
  return -1;
}

/* The top table's first row: the sweep's winner as show, best, export and the summary above
 * give it (its number, its value, its speedup and interval: report_verdict), whatever its rank
 * by median among the others. */
static void winner_first(FILE *f, const report_sweep *r) {
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(r->obj, "best");
  verdict v;
  int have = report_verdict(r, &v) == 0;
  fprintf(f, "<tr class=\"winner\"><td>1</td><td>%.0f</td><td>", listing_num(win, "number"));
  put_ms(f, v.value, listing_higher(r->obj));
  /* its value is the pooled median of the confirmed, else that one trial's */
  fprintf(f, "</td><td>%d</td><td>", v.pooled ? v.pooled : 1);
  put_speedup(f, have ? &v : NULL);
  fputs("</td><td>", f);
  put_differences(f, win, cJSON_GetObjectItemCaseSensitive(r->obj, "baseline"));
  fputs(" <small>(the winner)</small></td></tr>\n", f);
}

/* Sweep R's top table; adds the resampled medians it draws to *DRAWS. */
static void top_table(FILE *f, const report_sweep *r, int si, long long *draws) {
  const report_data *d = r->data;
  const cJSON *base_trial = cJSON_GetObjectItemCaseSensitive(r->obj, "baseline");
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(r->obj, "best");
  int wi = cJSON_IsObject(win) ? winner_row(d, win) : -1, shown = 0;
  fprintf(f,
          "<table class=\"top\" id=\"top-%d\"><thead><tr><th>#</th><th>trial</th>"
          "<th>%s</th><th>runs</th><th>speedup (95%% CI)</th>"
          "<th>differences from the baseline</th></tr></thead><tbody>\n",
          si + 1, listing_higher(r->obj) ? "rate" : "step time");
  stats_boot base = {0}, rows[TOP_CONFIGS];
  int n_rows = 0;
  double *base_med = NULL, *row_med = NULL, base_m = NAN;
  if (d->have_base && d->n_base_steps > 0 && d->n_top > 0) {
    stats_boot_draw(&base, d->n_base_steps, STATS_RESAMPLES, STATS_DISPLAY_SEED);
    *draws += STATS_RESAMPLES;
    base_med = xmalloc(STATS_RESAMPLES * sizeof *base_med);
    row_med = xmalloc(STATS_RESAMPLES * sizeof *row_med);
    base_m = stats_boot_medians(&base, d->base_steps, base_med);
  }
  if (cJSON_IsObject(win)) winner_first(f, r), shown++;
  for (int j = 0; j < d->n_top && shown < TOP_CONFIGS; j++) {
    const topcfg *t = &d->top[j];
    if (j == wi) continue;
    fprintf(f, "<tr><td>%d</td><td>%d</td><td>", ++shown, t->best_number);
    put_ms(f, t->value, listing_higher(r->obj));
    fprintf(f, "</td><td>%d</td><td>", t->n);
    if (base_med && t->n_steps > 0) {
      stats_boot *b = NULL;
      for (int i = 0; i < n_rows && !b; i++)
        if (rows[i].n == t->n_steps) b = &rows[i];
      if (!b) {
        b = &rows[n_rows++];
        stats_boot_draw(b, t->n_steps, STATS_RESAMPLES, TOP_ROW_SEED);
        *draws += STATS_RESAMPLES;
      }
      double lo, hi, sp = base_m / stats_boot_medians(b, t->steps, row_med);
      stats_ratio_ci(base_med, row_med, STATS_RESAMPLES, &lo, &hi);
      fprintf(f, "%.3fx (%.3f&ndash;%.3f)", sp, lo, hi);
    } else {
      fputs("&ndash;", f);
    }
    fputs("</td><td>", f);
    put_differences(f, t->best, base_trial);
    fputs("</td></tr>\n", f);
  }
  if (shown == 0) fputs("<tr><td colspan=\"6\">no ok trial yet</td></tr>\n", f);
  fputs("</tbody></table>\n", f);
  for (int i = 0; i < n_rows; i++) stats_boot_free(&rows[i]);
  if (base_med) stats_boot_free(&base);
  free(base_med);
  free(row_med);
}

/* ---- the export snippet ---- */

static void export_section(FILE *f, const report_sweep *r, int si) {
  const cJSON *best = cJSON_GetObjectItemCaseSensitive(r->obj, "best");
  fprintf(f, "<pre class=\"export\" id=\"export-%d\">", si + 1);
  if (!cJSON_IsObject(best)) {
    fputs("# no ok trial to export</pre>\n", f);
    return;
  }
  char *c1 = xasprintf("flagtune: sweep %.0f \"%s\", model %s on %s", listing_num(r->obj, "id"),
                       listing_str(r->obj, "name"), listing_str(r->obj, "model"),
                       listing_str(r->obj, "hardware"));
  char *c2 = listing_verdict_comment(r->obj, best);
  const char *comments[2] = {c1, c2};
  listing_export x;
  listing_export_init(&x, best, comments, 2);
  char *text = NULL, *err = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  if (m && trialcfg_export(m, EXPORT_SH, &x.info, &err) == 0) {
    fclose(m);
    report_html(f, text);
  } else {
    if (m) fclose(m);
    fputs("# cannot export: ", f);
    report_html(f, err ? err : "out of memory");
  }
  fputs("</pre>\n", f);
  free(text);
  free(err);
  listing_export_clear(&x);
  free(c1);
  free(c2);
}

/* ---- the page ---- */

static const char *const css =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}"
    "h3{font-size:15px}table{border-collapse:collapse;margin:8px 0}"
    "th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}"
    "th{background:#f5f5f5}code{background:#f3f3f3;padding:0 3px;margin-right:4px;"
    "white-space:nowrap}pre.export{background:#f6f8fa;padding:8px;overflow-x:auto;"
    "white-space:pre-wrap;word-break:break-all}.swatch{display:inline-block;width:10px;"
    "height:10px;margin-right:4px}.note{color:#555;font-size:12px;max-width:800px}"
    "svg.plot{display:block;margin:6px 0}.grid{stroke:#eee}.frame{fill:none;stroke:#999}"
    ".tick{font-size:10px;fill:#444}.label{font-size:11px;fill:#333}.band{font-size:10px;"
    "fill:#a00}.baseline{stroke-dasharray:5 "
    "4;stroke-width:1.2}.trial{fill-opacity:0.3}.series{fill:none;"
    "stroke-width:2}.ok{fill:#1f77b4;fill-opacity:.7}.oom{stroke:#d62728;stroke-width:2}"
    ".failed{fill:none;stroke:#888}.cell{stroke:#fff}.celltext{font-size:10px;fill:#111}"
    ".bar{fill:#1f77b4}.params{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0}"
    "figcaption{font-size:12px;font-family:monospace}.step{fill:none;stroke-width:1.5}"
    ".skip{stroke:#999;stroke-dasharray:2 3}.pc{fill:none;stroke-width:1;stroke-opacity:.55}"
    ".pcfail{fill:none;stroke:#999;stroke-width:1;stroke-dasharray:3 3;stroke-opacity:.6}"
    ".pcaxis{stroke:#666}.halo{paint-order:stroke;stroke:#fff;stroke-width:3px}";

/* Above the plots of a sweep larger than REPORT_SAMPLE: what they show of it. */
static void sample_note(FILE *f, const report_sweep *r, int si) {
  const report_data *d = r->data;
  if (d->step <= 1) return;
  int shown = d->n_sample;
  fprintf(f,
          "<p class=\"note sample\" id=\"sample-%d\">%d of %lld trials shown: the plots, the OOM "
          "map and the importance above are over runs of %d consecutive trials by number, one "
          "run every %d (%d trials)",
          si + 1, shown, (long long)d->n_trials, d->run, d->step * d->run, d->n_sampled);
  if (shown > d->n_sampled)
    fprintf(f, ", and the plots add the top table's %d other trial%s", shown - d->n_sampled,
            shown - d->n_sampled == 1 ? "" : "s");
  fputs(
      ". The best-so-far curves, the summary and the top configurations are over every "
      "trial.</p>\n",
      f);
}

static void sweep_section(FILE *f, const report_sweep *r, int si, long long *draws) {
  fprintf(f, "<section class=\"sweep\" id=\"sweep-%d\"><h2>%c: sweep %.0f &ldquo;", si + 1,
          'A' + si, listing_num(r->obj, "id"));
  report_html(f, listing_str(r->obj, "name"));
  fputs("&rdquo;</h2>\n<h3>Parameter importance</h3>\n", f);
  importance_section(f, r, si);
  sample_note(f, r, si);
  report_value_sections(f, r, si);
  fputs("<h3>Top configurations</h3>\n", f);
  top_table(f, r, si, draws);
  report_steps_section(f, r, si);
  report_failures_section(f, r, si);
  fputs("<h3>Export</h3>\n", f);
  export_section(f, r, si);
  fputs("</section>\n", f);
}

static void page(FILE *f, report_sweep *rs, int n) {
  fputs(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"generator\" content=\"flagtune " FLAGTUNE_VERSION
      "\"><title>flagtune "
      "report: ",
      f);
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    report_html(f, listing_str(rs[i].obj, "name"));
  }
  fprintf(f, "</title><style>%s</style></head><body>\n<h1>flagtune report</h1>\n", css);
  time_t now = time(NULL);
  char when[64];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  fprintf(f, "<p class=\"note\">Written %s by flagtune %s from %d sweep%s.</p>\n", when,
          FLAGTUNE_VERSION, n, n == 1 ? "" : "s");
  summary_table(f, rs, n);
  fputs(
      "<h2>Best so far</h2>\n<p class=\"note\">Search trials only (the baseline and "
      "confirmation re-measurements are not search); dashed: each sweep's baseline. By trial "
      "number, every trial too: faint dots the ok results, above the frame a cross per OOM "
      "and a ring per other failure.</p>\n"
      "<div class=\"params\">\n",
      f);
  best_plot(f, rs, n, 0);
  best_plot(f, rs, n, 1);
  fputs("</div>\n", f);
  long long draws = 0, rows = 0, trials = 0;
  for (int i = 0; i < n; i++) {
    sweep_section(f, &rs[i], i, &draws);
    rows += rs[i].data->rows_read;
    trials += rs[i].data->n_trials;
  }
  /* What the page cost to make: a large sweep's report reads a bounded sample, not every
   * trial (docs/REPORT.md "Large sweeps"). */
  fprintf(f,
          "<p class=\"note\" id=\"read\">Read %lld trial rows for %lld trials (the curves, the "
          "sample and the top tables each read their own, so a trial can be read twice); the "
          "top tables' intervals from %lld resampled medians.</p>\n</body></html>\n",
          rows, trials, draws);
}

/* Writes the page of RS to PATH ("-" or NULL: stdout) as it is drawn: to a temporary file beside
 * it, renamed into place once whole (a 60,000-trial sweep's page is 0.9 MB: drawn into memory
 * first, its buffer's pages were a fifth of a report's page faults). */
static int write_page(const char *path, report_sweep *rs, int n, char **err) {
  outfile out;
  int rc = outfile_open(&out, path, err);
  if (rc != 0) return rc;
  page(out.f, rs, n);
  return outfile_close(&out, 1, err);
}

int report_write(const char *db, const char *const *refs, int n, const char *out_path, char **err) {
  if (n < 1 || n > REPORT_MAX_SWEEPS)
    return diag_set(err, FT_EINPUT, "report takes 1 to %d sweeps, got %d", REPORT_MAX_SWEEPS, n);
  report_sweep rs[REPORT_MAX_SWEEPS] = {{0}};
  int rc = 0, loaded = 0;
  for (; loaded < n && rc == 0; loaded++)
    rc = report_sweep_load_data(db, refs[loaded], &rs[loaded], err);
  if (rc == 0) rc = write_page(out_path, rs, n, err);
  for (int i = 0; i < loaded; i++) report_sweep_free(&rs[i]);
  return rc;
}
