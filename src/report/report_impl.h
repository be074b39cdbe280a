/* The report's inside, shared by src/report/report_load.c (reading a sweep: its listing, schema
 * 13's aggregates, the sample's runs, the top table's trials), src/report/report.c (drawing the
 * page) and src/report/report_plot.c (its per-parameter panels), and by nothing else. */
#ifndef FLAGTUNE_REPORT_IMPL_H
#define FLAGTUNE_REPORT_IMPL_H

#include <stdint.h>

#include "importance.h"
#include "report.h"

#define TOP_CONFIGS 10

/* The plots show at most about this many trials of one sweep: every one of a sweep of at
 * most REPORT_SAMPLE, else runs of REPORT_RUN consecutive trials by number, one run every
 * k x REPORT_RUN (k the least that leaves at most this many: as many as every k-th trial,
 * read as a range a run, where every k-th trial was a row on a page of its own), plus the top
 * table's trials. Importance is over the same runs. */
#define REPORT_SAMPLE 2000
#define REPORT_RUN 20
/* A parameter with more numeric values than this among the plotted trials is drawn in
 * REPORT_BINS ranges of equal width (logarithmic when its values span 100x or more). */
#define REPORT_MAX_LEVELS 24
#define REPORT_BINS 12
/* The page cache of a report's or a compare's connection, in pages (256 KiB at SQLite's 4 KiB
 * pages): the b-trees' inner pages, which every read passes through again, stay. */
#define REPORT_CACHE_PAGES 64

/* A candidate of the best-so-far curves (schema 13's report_curve): an ok search trial. */
typedef struct {
  int64_t id;
  double value, fin; /* fin: finished_at in seconds since the epoch, NaN unknown */
  int number, budget;
  int search; /* on the best-so-far curves: not the baseline, not a confirmation */
} okrow;

/* A configuration in the running for the top table: one run (found in value order) or
 * repeated (schema 13's report_repeats), with its ok trials at the full budget. */
typedef struct {
  char *config;
  int n;           /* its ok trials at the full budget */
  double value;    /* their median */
  int best_number; /* the fastest of them (the lowest number among equals) */
  int64_t best_id;
  int64_t *ids; /* its ok full-budget trials by number */
} cgroup;

/* The per-step curves: the baseline and the top table's first configurations (the winner
 * first), each its fastest trial's step times in step order. */
#define REPORT_CURVES 5
typedef struct {
  int number; /* the trial's */
  int row;    /* 0: the baseline; K: the top table's K-th row */
  double *ms; /* as stored (a rate sweep's cost); owned */
  int n;
} stepcurve;

/* A row of the top table, read once the candidates are ranked. */
typedef struct {
  double value;
  int n, best_number;
  cJSON *best;   /* the fastest trial's settings (store_report_trial) */
  double *steps; /* its configuration's pooled step times after the skip */
  int n_steps;
} topcfg;

struct report_data {
  int64_t n_trials; /* trials in the sweep */
  int step, run;    /* the sample: runs of RUN consecutive trials by number, one every STEP x RUN
                     * (RUN 1, STEP 1: every trial) */
  double full, t0;  /* the largest step budget; the earliest start */
  double xmax_number, xmax_time; /* where the curves end: the last search trial's number, its
                                  * latest finish in minutes after t0 (NaN: none) */
  okrow *ok;                     /* the curves' candidates by number */
  int n_ok, cap_ok;
  cgroup *g; /* the top table's candidates (the repeats, then the fastest run once) */
  int ng, cap_g;
  int base;                 /* index in g of the baseline's configuration "{}", -1 when none */
  importance_trial *sample; /* the plots' trials: outcome, value, budget, parsed configuration
                             * (owned), as importance reads them */
  int *number;              /* their numbers */
  char **reason;            /* a failure's first error line (a pruned trial's why), or NULL */
  int n_sample, cap_sample;
  int n_sampled; /* of them, the runs' (the rest: the top table's) */
  importance_result imp;
  topcfg top[TOP_CONFIGS];
  int n_top;
  double *base_steps; /* the baseline configuration's pooled steps; NULL: no ok baseline */
  int n_base_steps, have_base;
  stepcurve curve[REPORT_CURVES + 1]; /* the baseline's first, when it has steps */
  int n_curves;
  int64_t rows_read; /* trial rows its store_report_ reads passed (the page's last note) */
};

/* Whether ok trial T ran with the full step budget (halving's short rungs are not results). */
static inline int report_at_full(const report_data *d, const okrow *t) {
  return t->budget <= 0 || t->budget >= d->full;
}

/* report_sweep_load with the report's aggregates (R->data): schema 13's kept aggregates and a
 * bounded sample (never a pass over every trial), then the top table's trials and steps. */
int report_sweep_load_data(const char *db, const char *ref, report_sweep *out, char **err);

/* Sweep R's (the page's SI-th) "Step time by value", "Parallel coordinates" and "OOM map"
 * sections (src/report/report_plot.c). */
void report_value_sections(FILE *f, const report_sweep *r, int si);

/* Sweep R's "Step times" section, its per-step curves (src/report/report_steps.c). */
void report_steps_section(FILE *f, const report_sweep *r, int si);
/* Sweep R's "Failed trials" table: the sample's failures, each with its outcome and reason
 * (src/report/report_steps.c). */
void report_failures_section(FILE *f, const report_sweep *r, int si);
/* The colour of a value U in 0..1 (0 the best) on the report's scale, as "#rrggbb" in BUF. */
void report_scale_color(double u, char buf[8]);

#endif
