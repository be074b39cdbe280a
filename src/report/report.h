/* `flagtune report` (one self-contained HTML file: SVG written here, no script, no network)
 * and what `compare` shares with it: loading a sweep by reference from one database or
 * another, and the flags and variables a configuration sets. Reads only through the store's
 * read API (store_show_sweep_page without its trial table, the store_report_ reads of
 * schema 13's kept tables and a bounded sample, store_report_trial, store_report_steps); must
 * not write the database. */
#ifndef FLAGTUNE_REPORT_H
#define FLAGTUNE_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "listing.h"
#include "store.h"

/* At most this many sweeps in one report (the command line's positional limit). */
#define REPORT_MAX_SWEEPS 8

/* What the report aggregates of a sweep's trials (report.c). */
typedef struct report_data report_data;

typedef struct {
  char *db;   /* the database it came from (owned) */
  cJSON *obj; /* store_show_sweep_page's listing with no trial table (LIMIT 0): the sweep, its
               * counts, its best and baseline with their steps; the report adds "importance" */
  double *best_steps, *base_steps; /* the best's and the baseline trial's step times, all of
                                    * them (read for compare, and for a report when the sweep
                                    * has no cached interval); NULL when not read or none */
  int n_best_steps, n_base_steps;
  report_data *data; /* the report's (NULL from report_sweep_load) */
} report_sweep;

/* Loads sweep REF: an id or a name in database DB, or "PATH:REF" for a sweep of the
 * database at PATH (when PATH names an existing file, or looks like one: it holds a '/' or
 * ends in ".db"). FT_EINPUT, naming the reference, for a missing database or sweep. Reads the
 * sweep's row, counts, best and baseline trials (with their step times) and no other trial:
 * what `compare` prints, at the same cost for 10 trials or 100,000. */
int report_sweep_load(const char *db, const char *ref, report_sweep *out, char **err);
void report_sweep_free(report_sweep *r);

/* listing_verdict of R's listing, its interval computed from R's step times (seed
 * STATS_DISPLAY_SEED, after the skip, as listing.c does) when the sweep has none cached. */
int report_verdict(const report_sweep *r, verdict *v);

/* What a trial listing object sets: {"name": "value"} of its XLA_FLAGS and
 * LIBTPU_INIT_ARGS ("--name=value"; a bare "--name" is "") and its env. Caller deletes. */
cJSON *report_settings(const cJSON *trial);

/* Adds "importance" to SWEEP_OBJ (a sweep listing with its id and n_trials, read from S):
 * the one estimate of a sweep, the same in show, show --all, show --json and the report:
 * importance_compute_trials over every trial of a sweep of at most REPORT_SAMPLE trials (failures
 * included, as importance.h scores them), else over the report's runs of consecutive trials;
 * null when too few trials can be scored. 0, or FT_EDB with *ERR. */
int report_importance_attach(store *s, cJSON *sweep_obj, char **err);

/* The experiment's metric.skip recorded in the sweep's options (warm-up steps left out). */
int report_skip(const cJSON *sweep_obj);

/* Writes the report of REFS (N of them, 1..REPORT_MAX_SWEEPS) to OUT_PATH atomically (a
 * temporary file renamed into place; nothing is left on failure), or to stdout when OUT_PATH
 * is NULL or "-". Every text from the database is HTML-escaped. */
int report_write(const char *db, const char *const *refs, int n, const char *out_path, char **err);

/* ---- HTML and SVG helpers (report_svg.c) ---- */

/* S with & < > " ' escaped, and control bytes (but newline and tab) as U+FFFD. */
void report_html(FILE *f, const char *s);

typedef struct {
  FILE *f;
  double x0, x1, y0, y1;        /* the data range shown */
  int w, h;                     /* the picture */
  int left, right, top, bottom; /* margins */
} svg_plot;

/* Opens <svg id=ID> of W x H pixels over the data range; TITLE is its accessible name. */
void svg_begin(svg_plot *p, FILE *f, const char *id, int w, int h, const char *title);
double svg_x(const svg_plot *p, double x);
double svg_y(const svg_plot *p, double y);
/* The frame, the y axis with about 5 ticks (and the x axis when X_TICKS), and the labels. */
void svg_axes(const svg_plot *p, const char *xlabel, const char *ylabel, int x_ticks);
void svg_end(const svg_plot *p);
/* Nice tick values for [LO, HI]: up to MAX of them into T; returns how many. */
int svg_ticks(double lo, double hi, int max, double *t);
/* The colour of the Ith sweep. */
const char *svg_color(int i);

#endif
