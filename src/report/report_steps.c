/* The report's views of single trials: the per-step curves of the baseline and the top
 * configurations (their fastest trials' step times in step order, the warm-up steps of
 * metric.skip marked) and the table of the sample's failed trials with each one's reason.
 * Draws what src/report/report_load.c read; opens no database and keeps nothing between calls. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "diag.h"
#include "listing.h"
#include "metric.h"
#include "report_impl.h"

/* At most this many points a curve: a longer one is drawn as the means of equal runs of steps. */
#define CURVE_POINTS 300
/* At most this many rows in the failed trials' table. */
#define FAILURES_SHOWN 50

void report_scale_color(double u, char buf[8]) {
  /* blue (the best) through pale yellow to red (the worst) */
  static const int stop[3][3] = {{44, 123, 182}, {230, 210, 120}, {215, 25, 28}};
  if (!(u >= 0)) u = 0;
  if (u > 1) u = 1;
  int k = u < 0.5 ? 0 : 1;
  double t = u < 0.5 ? u * 2 : (u - 0.5) * 2;
  int c[3];
  for (int i = 0; i < 3; i++) c[i] = (int)lround(stop[k][i] + t * (stop[k + 1][i] - stop[k][i]));
  snprintf(buf, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* Step I's value of curve C as the user reads it (a rate sweep's as the rate). */
static double curve_at(const stepcurve *c, int i, int higher) {
  return metric_shown(c->ms[i], higher);
}

static const char *curve_color(const stepcurve *c) {
  return c->row == 0 ? "#555" : svg_color(c->row - 1);
}

static void curve_name(FILE *f, const stepcurve *c) {
  if (c->row == 0)
    fprintf(f, "baseline, trial %d", c->number);
  else
    fprintf(f, "%d: trial %d%s", c->row, c->number, c->row == 1 ? " (the winner)" : "");
}

void report_steps_section(FILE *f, const report_sweep *r, int si) {
  const report_data *d = r->data;
  int higher = listing_higher(r->obj), skip = report_skip(r->obj), longest = 0;
  fputs("<h3>Step times</h3>\n", f);
  if (d->n_curves == 0) {
    fprintf(f, "<p class=\"note\" id=\"steps-%d\">No step times recorded.</p>\n", si + 1);
    return;
  }
  /* The range over the steps past the warm-up (a first step that compiles would flatten the
   * rest); a warm-up step outside it is drawn at the frame's edge. */
  svg_plot p = {.x0 = 0.5, .y0 = INFINITY, .y1 = -INFINITY, .left = 70, .bottom = 44};
  for (int k = 0; k < d->n_curves; k++) {
    const stepcurve *c = &d->curve[k];
    if (c->n > longest) longest = c->n;
    for (int i = c->n > skip ? skip : 0; i < c->n; i++) {
      double v = curve_at(c, i, higher);
      if (v < p.y0) p.y0 = v;
      if (v > p.y1) p.y1 = v;
    }
  }
  if (!isfinite(p.y0)) p.y0 = 0, p.y1 = 1;
  double pad = (p.y1 - p.y0) * 0.08 + 1e-9;
  p.y0 -= pad, p.y1 += pad;
  p.x1 = longest + 0.5;
  int per = (longest + CURVE_POINTS - 1) / CURVE_POINTS;
  char id[32];
  snprintf(id, sizeof id, "steps-%d", si + 1);
  svg_begin(&p, f, id, 640, 300,
            higher ? "rate of each step: the baseline and the top configurations"
                   : "step time of each step: the baseline and the top configurations");
  svg_axes(&p, per > 1 ? "step (each point the mean of a run of steps)" : "step",
           higher ? "rate (per second)" : "step time (ms)", 1);
  if (skip > 0 && skip < longest) {
    /* its label left of the line, or right of it when the line is near the frame's left */
    double x = svg_x(&p, skip + 0.5);
    int left = x - 48 >= p.left;
    fprintf(f,
            "<line class=\"skip\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
            "<text class=\"tick halo\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">warm-up</text>\n",
            x, x, p.top, p.h - p.bottom, left ? x - 4 : x + 4, p.top + 10, left ? "end" : "start");
  }
  /* The baseline first, the winner last, on top. */
  for (int o = 0; o < d->n_curves; o++) {
    const stepcurve *c = &d->curve[o == 0 ? 0 : d->n_curves - o];
    fprintf(f, "<path class=\"step%s\" stroke=\"%s\" d=\"", c->row == 0 ? " baseline" : "",
            curve_color(c));
    for (int i = 0, pt = 0; i < c->n; i += per, pt++) {
      int e = i + per < c->n ? i + per : c->n;
      double sum = 0;
      for (int j = i; j < e; j++) sum += curve_at(c, j, higher);
      double y = svg_y(&p, sum / (e - i));
      if (y < p.top) y = p.top;
      if (y > p.h - p.bottom) y = p.h - p.bottom;
      fprintf(f, "%s%.1f %.1f", pt ? " L" : "M", svg_x(&p, (i + e + 1) / 2.0), y);
    }
    fputs("\"><title>", f);
    curve_name(f, c);
    fputs("</title></path>\n", f);
  }
  svg_end(&p);
  fputs("<p class=\"note legend\">", f);
  for (int k = 0; k < d->n_curves; k++) {
    fprintf(f, "%s<span class=\"swatch\" style=\"background:%s\"></span>", k ? " &nbsp; " : "",
            curve_color(&d->curve[k]));
    curve_name(f, &d->curve[k]);
  }
  fprintf(f,
          "<br>The baseline trial and each top configuration's fastest trial "
          "(numbered as in the table above)%s.</p>\n",
          skip > 0 ? "; left of the warm-up line: the steps metric.skip leaves out" : "");
}

void report_failures_section(FILE *f, const report_sweep *r, int si) {
  const report_data *d = r->data;
  int failed = 0, shown = 0;
  for (int i = 0; i < d->n_sample; i++) {
    int o = d->sample[i].outcome;
    failed += o >= 0 && o != OUTCOME_OK && o != OUTCOME_RUNNING;
  }
  fputs("<h3>Failed trials</h3>\n", f);
  if (failed == 0) {
    fprintf(f, "<p class=\"note\" id=\"failures-%d\">No failed trial%s.</p>\n", si + 1,
            d->step > 1 ? " in the sample" : "");
    return;
  }
  fprintf(f,
          "<table class=\"failures\" id=\"failures-%d\"><thead><tr><th>trial</th><th>outcome</th>"
          "<th>why</th></tr></thead><tbody>\n",
          si + 1);
  for (int i = 0; i < d->n_sample && shown < FAILURES_SHOWN; i++) {
    int o = d->sample[i].outcome;
    if (o < 0 || o == OUTCOME_OK || o == OUTCOME_RUNNING) continue;
    shown++;
    fprintf(f, "<tr class=\"st-%s\"><td>%d</td><td>%s</td><td>", outcome_name((outcome)o),
            d->number[i], outcome_name((outcome)o));
    report_html(f, d->reason[i] ? d->reason[i] : "");
    fputs("</td></tr>\n", f);
  }
  fputs("</tbody></table>\n", f);
  if (failed > shown || d->step > 1)
    fprintf(f,
            "<p class=\"note\">The first %d of the %d failed trials%s by number; "
            "<code>flagtune show %.0f --all</code> lists every trial with its reason.</p>\n",
            shown, failed, d->step > 1 ? " of the sample" : "", listing_num(r->obj, "id"));
}
