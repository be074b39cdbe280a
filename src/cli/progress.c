/* The live view of a running sweep: the per-trial lines and, on a terminal, the status area
 * redrawn in place under them. Owns the wording and layout of both, the abbreviation of
 * labels, the terminal's width, colours (NO_COLOR) and the timestamps of plain output. Must
 * not read the sweep, the store or a trial: sweep.c hands it what to show. */
#include "progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "json.h"
#include "metric.h"
#include "units.h"

#define GREEN "\033[32m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

enum { MAX_RUNNING_SHOWN = 6 };

static int status_lines; /* lines of the status area now on the terminal */

progress_mode progress_detect(void) {
  progress_mode m = {.verbose = diag_verbose, .quiet = diag_quiet};
  m.tty = isatty(STDERR_FILENO);
  const char *no_color = getenv("NO_COLOR");
  m.color = m.tty && !(no_color && *no_color);
  if (m.tty) {
    struct winsize ws;
    const char *cols = getenv("COLUMNS");
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
      m.width = ws.ws_col;
    else
      m.width = cols && atoi(cols) > 0 ? atoi(cols) : 80;
  }
  return m;
}

/* ---- a growing string ---- */

typedef struct {
  char *s;
  size_t len, cap;
  size_t visible; /* columns taken (escape sequences take none) */
} buf;

static void buf_vadd(buf *b, int escape, const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = (b->len + (size_t)n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  if (!escape) {
    for (int i = 0; i < n; i++) /* count UTF-8 lead bytes only */
      if (((unsigned char)b->s[b->len + (size_t)i] & 0xC0) != 0x80) b->visible++;
  }
  b->len += (size_t)n;
}

static void add(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vadd(b, 0, fmt, ap);
  va_end(ap);
}

/* An ANSI sequence, only in colour. */
static void esc(buf *b, int color, const char *seq) {
  if (!color) return;
  if (b->len + strlen(seq) + 1 > b->cap) {
    b->cap = (b->len + strlen(seq) + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->len, seq, strlen(seq) + 1);
  b->len += strlen(seq);
}

static char *buf_take(buf *b) {
  if (!b->s) return xstrdup("");
  return b->s;
}

/* Appends TEXT cut to at most ROOM columns (UTF-8 aware), with "..." where it was cut. */
static void add_fitted(buf *b, const char *text, int room) {
  if (room <= 0 && room != -1) return;
  size_t cols = 0, i = 0, cut = 0;
  for (; text[i]; i++)
    if (((unsigned char)text[i] & 0xC0) != 0x80) cols++;
  if (room == -1 || cols <= (size_t)room) {
    add(b, "%s", text);
    return;
  }
  if (room < 4) return;
  for (i = 0, cols = 0; text[i]; i++) {
    if (((unsigned char)text[i] & 0xC0) != 0x80) {
      if (cols == (size_t)room - 3) break;
      cols++;
    }
    cut = i + 1;
  }
  add(b, "%.*s...", (int)cut, text);
}

/* ---- labels ---- */

/* Whether NAME is a byte count's parameter. */
static int is_bytes_param(const char *name, size_t len) {
  char tmp[256];
  if (len >= sizeof tmp) len = sizeof tmp - 1;
  memcpy(tmp, name, len);
  tmp[len] = '\0';
  return strstr(tmp, "bytes") || strstr(tmp, "threshold") || strstr(tmp, "BUFFSIZE");
}

/* One "name=value" token shortened into B; SHOWN (or NULL) is the name to write. */
static void abbrev_token(buf *b, const char *tok, size_t len, const char *shown) {
  const char *eq = memchr(tok, '=', len);
  const char *name = tok;
  size_t nlen = eq ? (size_t)(eq - tok) : len;
  const char *full = tok;
  size_t flen = nlen;
  static const char *const prefixes[] = {"xla_gpu_", "xla_tpu_", "xla_", "enable_"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t pl = strlen(prefixes[i]);
    if (nlen > pl && strncmp(name, prefixes[i], pl) == 0) name += pl, nlen -= pl;
  }
  if (shown) name = shown, nlen = strlen(shown);
  if (!eq) {
    add(b, "%.*s", (int)nlen, name);
    return;
  }
  const char *v = eq + 1;
  size_t vlen = len - (size_t)(v - tok);
  if (vlen == 4 && strncmp(v, "true", 4) == 0) {
    add(b, "+%.*s", (int)nlen, name);
    return;
  }
  if (vlen == 5 && strncmp(v, "false", 5) == 0) {
    add(b, "-%.*s", (int)nlen, name);
    return;
  }
  char num[32];
  if (vlen < sizeof num && is_bytes_param(full, flen)) {
    memcpy(num, v, vlen);
    num[vlen] = '\0';
    char *end = NULL;
    long long n = strtoll(num, &end, 10);
    if (end && *end == '\0' && n >= 1024) {
      char human[32];
      units_format_bytes(n, human, sizeof human);
      add(b, "%.*s=%s", (int)nlen, name, human);
      return;
    }
  }
  add(b, "%.*s=%.*s", (int)nlen, name, (int)vlen, v);
}

char *progress_abbrev_short(const char *label, const char *const *names, const char *const *shorts,
                            int n_names) {
  buf b = {0};
  const char *p = label ? label : "";
  int first = 1;
  while (*p) {
    size_t n = strcspn(p, " ");
    if (n > 0) {
      size_t nl = strcspn(p, "= ");
      const char *shown = NULL;
      for (int i = 0; i < n_names && !shown; i++)
        if (strlen(names[i]) == nl && strncmp(names[i], p, nl) == 0) shown = shorts[i];
      if (!first) add(&b, " ");
      abbrev_token(&b, p, n, shown);
      first = 0;
    }
    p += n + (p[n] == ' ');
  }
  return buf_take(&b);
}

char *progress_abbrev(const char *label) {
  return progress_abbrev_short(label, NULL, NULL, 0);
}

char *progress_drop_defaults(const char *label, const char *const *defaults, int n) {
  buf b = {0};
  const char *p = label ? label : "";
  while (*p) {
    size_t len = strcspn(p, " ");
    int dflt = 0;
    for (int i = 0; i < n && !dflt; i++)
      dflt = strlen(defaults[i]) == len && strncmp(defaults[i], p, len) == 0;
    if (len > 0 && !dflt) add(&b, "%s%.*s", b.len ? " " : "", (int)len, p);
    p += len + (p[len] == ' ');
  }
  return buf_take(&b);
}

/* ---- a finished trial's line ---- */

static const char *status_color(outcome o) {
  switch (o) {
    case OUTCOME_OK:
      return GREEN;
    case OUTCOME_PRUNED:
    case OUTCOME_INTERRUPTED:
    case OUTCOME_LOST:
      return YELLOW;
    default:
      return RED;
  }
}

char *progress_format_line(const progress_line *l, int width, int color, int verbose) {
  buf b = {0};
  add(&b, "[%4d/%d] #%-4d ", l->done, l->total, l->number);
  const char *word = l->not_stored ? "not-stored" : outcome_name(l->status);
  esc(&b, color, l->not_stored ? RED : status_color(l->status));
  add(&b, "%-11s", word);
  esc(&b, color, RESET);
  if (!l->not_stored && l->status == OUTCOME_OK && !isnan(l->value)) {
    add(&b, l->higher ? " %9.2f/s " : " %9.2f ms", metric_shown(l->value, l->higher));
    /* The baseline's own runs are the reference: no speedup over themselves. */
    if (!l->is_baseline && !isnan(l->baseline_ms) && l->value > 0)
      add(&b, " %6.3fx", l->baseline_ms / l->value);
    else
      add(&b, "%8s", "");
  } else {
    add(&b, "%20s", "");
  }
  add(&b, "  ");
  if (l->is_baseline) {
    add(&b, "%s", l->role == ROLE_CONFIRM ? "baseline (re-measured)" : "baseline");
  } else {
    if (l->role == ROLE_CONFIRM) add(&b, "confirm: ");
    if (l->role == ROLE_RERUN) add(&b, "re-run: ");
    if (l->rung_steps > 0) add(&b, "[rung %d steps] ", l->rung_steps);
    char *diff = verbose ? xstrdup(l->label ? l->label : "")
                         : progress_drop_defaults(l->label, l->defaults, l->n_defaults);
    char *label = progress_abbrev(diff);
    int room = width > 0 && !verbose ? width - (int)b.visible : -1;
    /* Too long for the line: the short names, which say what differs, before any cut. */
    if (room >= 0 && (int)strlen(label) > room && l->n_names > 0) {
      free(label);
      label = progress_abbrev_short(diff, l->names, l->shorts, l->n_names);
    }
    add_fitted(&b, *label ? label : "(every parameter at its default)", room);
    free(label);
    free(diff);
  }
  return buf_take(&b);
}

/* ---- the status area ---- */

void progress_duration(double s, char *out, size_t n) {
  if (s < 0 || isnan(s)) s = 0;
  long t = (long)(s + 0.5);
  if (t < 60)
    snprintf(out, n, "%lds", t);
  else if (t < 3600)
    snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
  else
    snprintf(out, n, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
}

static char *counts_line(const progress_state *s) {
  buf b = {0};
  add(&b, "%d/%d done", s->done, s->total);
  for (int o = OUTCOME_OK; o < OUTCOME_COUNT; o++)
    if (s->counts[o] > 0) add(&b, "  %s %d", outcome_name((outcome)o), s->counts[o]);
  add(&b, "  running %d", s->n_running);
  char d[32];
  if (s->eta_s >= 0) {
    progress_duration(s->eta_s, d, sizeof d);
    add(&b, "  ETA %s", d);
  }
  if (s->deadline_left_s >= 0) {
    progress_duration(s->deadline_left_s, d, sizeof d);
    add(&b, "  time budget left %s", d);
  }
  return buf_take(&b);
}

static char *best_line(const progress_state *s) {
  buf b = {0};
  char v[48];
  if (isnan(s->baseline_ms)) {
    add(&b, "baseline: not measured yet");
  } else {
    metric_format(v, sizeof v, s->baseline_ms, s->higher);
    add(&b, "baseline %s", v);
  }
  if (!isnan(s->best_ms)) {
    metric_format(v, sizeof v, s->best_ms, s->higher);
    add(&b, "  best #%d %s", s->best_number, v);
    if (!isnan(s->baseline_ms) && s->best_ms > 0) add(&b, " %.3fx", s->baseline_ms / s->best_ms);
    /* One run each: the interval is over their step times, not over repeated runs. */
    if (!isnan(s->best_lo)) add(&b, " (%.3f-%.3f over its steps)", s->best_lo, s->best_hi);
  }
  return buf_take(&b);
}

static char *running_line(const progress_running *r, int width) {
  buf b = {0};
  char d[32];
  progress_duration(r->elapsed_s, d, sizeof d);
  add(&b, "  #%-4d %7s  ", r->number, d);
  if (r->profiling)
    add(&b, "PGLE profile run  ");
  else if (r->steps_budget > 0)
    add(&b, "%d/%d steps  ", r->n_steps, r->steps_budget);
  else
    add(&b, "%d steps  ", r->n_steps);
  char *label = progress_abbrev(r->label);
  add(&b, "%s", label);
  free(label);
  char *whole = buf_take(&b);
  buf out = {0};
  add_fitted(&out, whole, width > 0 ? width : -1);
  free(whole);
  return buf_take(&out);
}

char **progress_format_status(const progress_state *s, int width, int color, int *n) {
  int shown = s->n_running < MAX_RUNNING_SHOWN ? s->n_running : MAX_RUNNING_SHOWN;
  char **lines = xcalloc((size_t)shown + 4, sizeof(char *));
  int k = 0;
  (void)color; /* the status area is plain: a cut escape sequence would colour the screen */
  char *top[2] = {counts_line(s), best_line(s)};
  for (int i = 0; i < 2; i++) {
    buf b = {0};
    add_fitted(&b, top[i], width > 0 ? width : -1);
    lines[k++] = buf_take(&b);
    free(top[i]);
  }
  for (int i = 0; i < shown; i++) lines[k++] = running_line(&s->running[i], width);
  if (s->n_running > shown) lines[k++] = xasprintf("  ... and %d more", s->n_running - shown);
  *n = k;
  return lines;
}

void progress_free_lines(char **lines, int n) {
  for (int i = 0; i < n; i++) free(lines[i]);
  free(lines);
}

/* ---- printing ---- */

void progress_erase(void) {
  if (status_lines <= 0) return;
  /* Up to the status area's first line, then clear to the end of the screen. */
  fprintf(stderr, "\r\033[%dA\033[J", status_lines);
  status_lines = 0;
  fflush(stderr);
}

static void stamp(void) {
  char when[32];
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  fprintf(stderr, "%s ", when);
}

/* The short names' legend, once, before the first line that may use them: wrapped to WIDTH,
 * "short = name" items. */
static void print_legend(const progress_line *l, int width) {
  static int printed;
  if (printed || l->n_names == 0) return;
  printed = 1;
  buf b = {0};
  add(&b, "names when a line is narrow (-v: whole labels):");
  for (int i = 0; i < l->n_names; i++) {
    if (strcmp(l->names[i], l->shorts[i]) == 0) continue;
    size_t item = strlen(l->names[i]) + strlen(l->shorts[i]) + 4;
    if (width > 0 && b.visible + item > (size_t)width) {
      fprintf(stderr, "%s\n", buf_take(&b));
      free(b.s);
      b = (buf){0};
      add(&b, " ");
    }
    add(&b, "  %s = %s", l->shorts[i], l->names[i]);
  }
  fprintf(stderr, "%s\n", buf_take(&b));
  free(b.s);
}

void progress_print_line(const progress_mode *m, const progress_line *l) {
  if (m->quiet) return;
  progress_erase();
  int width = m->tty ? m->width : 0;
  if (width > 0 && !m->verbose) print_legend(l, width);
  char *line = progress_format_line(l, width, m->color, m->verbose);
  if (!m->tty) stamp();
  fprintf(stderr, "%s\n", line);
  free(line);
  /* A failed trial says why at once (the reason is also in `show` and the trial's error). */
  if (l->reason && l->status != OUTCOME_INTERRUPTED) {
    char *why = json_terminal_text(l->reason, NULL);
    buf b = {0};
    if (!m->tty) stamp();
    add(&b, "%10s", "");
    add_fitted(&b, why, m->verbose ? -1 : width > 0 ? width - 10 : 160);
    char *text = buf_take(&b);
    fprintf(stderr, "%s\n", text);
    free(text);
    free(why);
  }
  fflush(stderr);
}

void progress_print_status_line(const progress_mode *m, const progress_state *s) {
  if (m->quiet) return;
  char *counts = counts_line(s), *best = best_line(s);
  stamp();
  fprintf(stderr, "status: %s | %s\n", counts, best);
  fflush(stderr);
  free(counts);
  free(best);
}

void progress_print_status(const progress_mode *m, const progress_state *s) {
  if (m->quiet || !m->tty) return;
  progress_mode now = progress_detect(); /* the terminal may have been resized */
  int n = 0;
  char **lines =
      progress_format_status(s, now.width > 0 ? now.width - 1 : m->width - 1, m->color, &n);
  progress_erase();
  for (int i = 0; i < n; i++) fprintf(stderr, "%s\033[K\n", lines[i]);
  status_lines = n;
  fflush(stderr);
  progress_free_lines(lines, n);
}
