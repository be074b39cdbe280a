/* The report's drawing helpers: HTML escaping and a small SVG plot frame (ranges, ticks,
 * axes). Writes text to a FILE; knows nothing about sweeps. */
#include <math.h>
#include <stdio.h>

#include "report.h"

void report_html(FILE *f, const char *s) {
  if (!s) return;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '&':
        fputs("&amp;", f);
        break;
      case '<':
        fputs("&lt;", f);
        break;
      case '>':
        fputs("&gt;", f);
        break;
      case '"':
        fputs("&quot;", f);
        break;
      case '\'':
        fputs("&#39;", f);
        break;
      default:
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
          fputs("\xef\xbf\xbd", f);
        else
          fputc(*p, f);
    }
  }
}

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#bcbd22"};

const char *svg_color(int i) {
  return palette[(i < 0 ? 0 : i) % 8];
}

void svg_begin(svg_plot *p, FILE *f, const char *id, int w, int h, const char *title) {
  p->f = f;
  p->w = w;
  p->h = h;
  if (!p->left) p->left = 64;
  if (!p->right) p->right = 16;
  if (!p->top) p->top = 14;
  if (!p->bottom) p->bottom = 42;
  if (!(p->x1 > p->x0)) p->x1 = p->x0 + 1;
  if (!(p->y1 > p->y0)) p->y1 = p->y0 + 1;
  fprintf(f,
          "<svg id=\"%s\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
          "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>",
          id, w, h, w, h);
  report_html(f, title);
  fputs("</title>\n", f);
}

double svg_x(const svg_plot *p, double x) {
  return p->left + (x - p->x0) / (p->x1 - p->x0) * (p->w - p->left - p->right);
}

double svg_y(const svg_plot *p, double y) {
  return p->h - p->bottom - (y - p->y0) / (p->y1 - p->y0) * (p->h - p->top - p->bottom);
}

int svg_ticks(double lo, double hi, int max, double *t) {
  if (!(hi > lo) || max < 2) return 0;
  double raw = (hi - lo) / (max - 1), mag = pow(10, floor(log10(raw))), step = mag;
  if (raw / mag > 5)
    step = 10 * mag;
  else if (raw / mag > 2)
    step = 5 * mag;
  else if (raw / mag > 1)
    step = 2 * mag;
  int n = 0;
  for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && n < max + 1; v += step)
    t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
  return n;
}

void svg_axes(const svg_plot *p, const char *xlabel, const char *ylabel, int x_ticks) {
  FILE *f = p->f;
  double t[12];
  int n = svg_ticks(p->y0, p->y1, 6, t);
  for (int i = 0; i < n; i++) {
    double y = svg_y(p, t[i]);
    fprintf(f,
            "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
            "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
            p->left, p->w - p->right, y, y, p->left - 4, y + 3, t[i]);
  }
  if (x_ticks) {
    n = svg_ticks(p->x0, p->x1, 8, t);
    for (int i = 0; i < n; i++)
      fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
              svg_x(p, t[i]), p->h - p->bottom + 14, t[i]);
  }
  fprintf(f,
          "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n"
          "<text class=\"label\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
          p->left, p->top, p->w - p->left - p->right, p->h - p->top - p->bottom,
          (p->left + p->w - p->right) / 2.0, p->h - 4);
  report_html(f, xlabel);
  fprintf(f,
          "</text>\n<text class=\"label\" transform=\"translate(12 %.1f) rotate(-90)\" "
          "text-anchor=\"middle\">",
          (p->top + p->h - p->bottom) / 2.0);
  report_html(f, ylabel);
  fputs("</text>\n", f);
}

void svg_end(const svg_plot *p) {
  fputs("</svg>\n", p->f);
}
