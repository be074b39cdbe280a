/* check --sample: the experiment's metric over a captured log, line by line through the same
 * parse_step a trial uses, so what it prints is what a trial would record. Owns the report
 * of what was read and why nothing was; must not run anything or touch the store. */
#include "sample.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "json.h"
#include "metric.h"
#include "parse.h"
#include "stats.h"

#define SAMPLE_SHOWN 20 /* step lines printed at each end */
#define SAMPLE_KEYS 24  /* JSON keys named when none is the metric's */
#define SAMPLE_LIKE 3   /* lines quoted that look like steps */

typedef struct {
  double *v;
  int *line;
  int n, cap;
} series;

static void series_add(series *s, double v, int line) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    s->line = xrealloc(s->line, (size_t)s->cap * sizeof *s->line);
  }
  s->v[s->n] = v;
  s->line[s->n++] = line;
}

typedef struct {
  series steps, losses;
  int n_lines, n_bad, first_bad;
  char *bad_text;          /* the first line whose metric value was bad */
  char *keys[SAMPLE_KEYS]; /* top-level keys of the JSON lines, in order of appearance */
  int n_keys, n_json;
  char *like[SAMPLE_LIKE]; /* lines that look like steps ("step", "it/s", "ms") */
  int n_like;
} reading;

static void add_keys(reading *r, const char *line) {
  cJSON *j = cJSON_Parse(line);
  if (cJSON_IsObject(j)) {
    r->n_json++;
    const cJSON *it;
    cJSON_ArrayForEach(it, j) {
      int seen = 0;
      for (int i = 0; i < r->n_keys && !seen; i++) seen = strcmp(r->keys[i], it->string) == 0;
      if (!seen && r->n_keys < SAMPLE_KEYS)
        r->keys[r->n_keys++] = json_terminal_text(it->string, NULL);
    }
  }
  cJSON_Delete(j);
}

static void note_like(reading *r, const char *line, size_t len) {
  static const char *const words[] = {"step", "it/s", "ms", "/s", "time", "loss"};
  if (r->n_like == SAMPLE_LIKE || len == 0) return;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strstr(line, words[i])) {
      char *cut = xstrndup(line, len > 160 ? 160 : len);
      r->like[r->n_like++] = json_terminal_text(cut, NULL); /* a log may hold any bytes */
      free(cut);
      return;
    }
}

static int read_log(experiment *e, const char *path, reading *r, char **err) {
  FILE *f = fopen(path, "r");
  if (!f) return diag_set(err, FT_EINPUT, "%s: cannot read the sample: %s", path, strerror(errno));
  metric_spec m = experiment_metric(e), c = experiment_check_metric(e);
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) >= 0) {
    r->n_lines++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    double v;
    int rc = parse_step(&m, line, (size_t)len, &v);
    if (rc == PARSE_STEP) {
      series_add(&r->steps, v, r->n_lines);
    } else if (rc == PARSE_BAD) {
      if (r->n_bad++ == 0) {
        char *cut = xstrndup(line, 160);
        r->first_bad = r->n_lines;
        r->bad_text = json_terminal_text(cut, NULL);
        free(cut);
      }
    } else {
      if (e->metric == METRIC_JSON) add_keys(r, line);
      note_like(r, line, (size_t)len);
    }
    if (e->check_on && parse_step(&c, line, (size_t)len, &v) == PARSE_STEP)
      series_add(&r->losses, v, r->n_lines);
  }
  free(line);
  int bad = ferror(f), read_errno = errno;
  fclose(f);
  if (bad)
    return diag_set(err, FT_EINPUT, "%s: cannot read the sample: %s", path, strerror(read_errno));
  return 0;
}

static void reading_free(reading *r) {
  free(r->steps.v);
  free(r->steps.line);
  free(r->losses.v);
  free(r->losses.line);
  free(r->bad_text);
  for (int i = 0; i < r->n_keys; i++) free(r->keys[i]);
  for (int i = 0; i < r->n_like; i++) free(r->like[i]);
}

/* Why the metric read nothing, naming what the log holds instead. */
static int nothing_read(experiment *e, const char *path, const reading *r, char **err) {
  char *what = NULL;
  if (e->metric == METRIC_JSON && r->n_keys > 0) {
    size_t n = 1;
    for (int i = 0; i < r->n_keys; i++) n += strlen(r->keys[i]) + 4;
    what = xcalloc(n, 1);
    for (int i = 0; i < r->n_keys; i++) {
      if (i) strcat(what, ", ");
      strcat(what, "'");
      strcat(what, r->keys[i]);
      strcat(what, "'");
    }
    char *msg = xasprintf(
        "%s: the metric read no step time: no line is a JSON object with the key '%s'; its %d "
        "JSON line%s hold the keys %s",
        path, e->metric_field, r->n_json, r->n_json == 1 ? "" : "s", what);
    free(what);
    int rc = diag_set(err, FT_EINPUT, "%s", msg);
    free(msg);
    return rc;
  }
  size_t n = 1;
  for (int i = 0; i < r->n_like; i++) n += strlen(r->like[i]) + 8;
  what = xcalloc(n, 1);
  for (int i = 0; i < r->n_like; i++) {
    strcat(what, "\n  ");
    strcat(what, r->like[i]);
  }
  int rc =
      diag_set(err, FT_EINPUT, "%s: the metric read no step time from its %d line%s: %s'%s'%s%s",
               path, r->n_lines, r->n_lines == 1 ? "" : "s",
               e->metric == METRIC_JSON ? "no line is a JSON object with the key "
                                        : "no line matches the pattern ",
               e->metric == METRIC_JSON ? e->metric_field : e->metric_pattern,
               r->n_like ? "; lines that look like steps:" : "", what);
  free(what);
  return rc;
}

static void print_steps(FILE *o, const series *s, int skip, int higher) {
  fprintf(o, "  %5s %7s %12s\n", "STEP", "LINE", higher ? "PER_SECOND" : "VALUE_MS");
  for (int i = 0; i < s->n; i++) {
    if (s->n > 2 * SAMPLE_SHOWN && i == SAMPLE_SHOWN) {
      fprintf(o, "  %5s (%d more)\n", "...", s->n - 2 * SAMPLE_SHOWN);
      i = s->n - SAMPLE_SHOWN;
    }
    fprintf(o, "  %5d %7d %12.2f%s\n", i + 1, s->line[i], metric_shown(s->v[i], higher),
            i < skip ? "  skipped (metric.skip)" : "");
  }
}

/* Reads the log at PATH line by line as a trial's output would be read: the step times (and
 * metric.check's losses) the metric takes, which are skipped, the value a trial would record,
 * and the lines that carried the metric with a bad value. *OUT: the text to print (caller
 * frees). 0, or FT_EINPUT with *ERR when the log cannot be read or the metric reads no step
 * time from it (the message names what the log holds instead: the JSON keys found, or lines
 * that look like steps). */
static int sample_check(experiment *e, const char *path, char **out, char **err) {
  reading r = {0};
  int rc = read_log(e, path, &r, err);
  if (rc == 0 && r.steps.n == 0) {
    if (r.n_bad > 0)
      rc = diag_set(err, FT_EINPUT,
                    "%s: the metric found its value on %d line%s but none was a usable step "
                    "time (NaN, negative or absurd): line %d: %s",
                    path, r.n_bad, r.n_bad == 1 ? "" : "s", r.first_bad, r.bad_text);
    else
      rc = nothing_read(e, path, &r, err);
  }
  if (rc) {
    reading_free(&r);
    return rc;
  }
  size_t len = 0;
  FILE *o = open_memstream(out, &len);
  int skip = e->metric_skip, higher = e->metric_higher;
  fprintf(o, "%s: the metric read %d step time%s from %d line%s", path, r.steps.n,
          r.steps.n == 1 ? "" : "s", r.n_lines, r.n_lines == 1 ? "" : "s");
  if (skip > 0) fprintf(o, "; the first %d skipped (metric.skip)", skip);
  fprintf(o, "\n");
  print_steps(o, &r.steps, skip, higher);
  char v[48];
  if (r.steps.n < e->min_steps) {
    fprintf(o,
            "value: none: a trial needs %d step time%s (metric.min_steps) and would end "
            "no_metric\n",
            e->min_steps, e->min_steps == 1 ? "" : "s");
  } else {
    metric_format(v, sizeof v, stats_reduce(e->metric_reduce, r.steps.v, r.steps.n, skip), higher);
    fprintf(o, "value: %s (%s of %d step time%s)\n", v, stats_reduce_name(e->metric_reduce),
            r.steps.n - skip, r.steps.n - skip == 1 ? "" : "s");
  }
  if (r.n_bad > 0)
    fprintf(o,
            "bad: %d line%s carried the metric with a NaN, negative or absurd value (a trial "
            "counts them and ends no_metric without enough good ones); the first, line %d: %s\n",
            r.n_bad, r.n_bad == 1 ? "" : "s", r.first_bad, r.bad_text);
  if (e->check_on) {
    fprintf(o, "losses (metric.check): %d", r.losses.n);
    for (int i = 0; i < r.losses.n && i < 8; i++)
      fprintf(o, "%s%.6g", i ? " " : ": ", r.losses.v[i]);
    fprintf(o, "%s\n", r.losses.n > 8 ? " ..." : "");
  }
  fclose(o);
  reading_free(&r);
  return 0;
}

int sample_append(experiment *e, const char *path, char **summary, char **err) {
  char *read = NULL;
  int rc = sample_check(e, path, &read, err);
  if (rc == 0) {
    size_t n = strlen(read);
    if (n > 0 && read[n - 1] == '\n') read[n - 1] = '\0';
    char *both = xasprintf("%s\n%s", *summary, read);
    free(*summary);
    *summary = both;
  } else {
    free(*summary);
    *summary = NULL;
  }
  free(read);
  return rc;
}

char *sample_json_keys(const char *line) {
  cJSON *j = line ? cJSON_Parse(line) : NULL;
  char *out = NULL;
  if (cJSON_IsObject(j) && j->child) {
    size_t n = 1;
    const cJSON *it;
    cJSON_ArrayForEach(it, j) n += strlen(it->string) + 4;
    out = xcalloc(n, 1);
    cJSON_ArrayForEach(it, j) {
      if (*out) strcat(out, ", ");
      strcat(out, "'");
      strcat(out, it->string);
      strcat(out, "'");
    }
  }
  cJSON_Delete(j);
  return out;
}
