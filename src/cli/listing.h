/* A stored sweep's listing read and said in text (see listing.c). Every function takes a cJSON
 * object as the store's listings give it (store_show_sweep_page), already made terminal-safe by the
 * caller. */
#ifndef FLAGTUNE_LISTING_H
#define FLAGTUNE_LISTING_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "store.h"
#include "trialcfg.h"

/* A string or number field of O, or NULL / NaN when it is missing or of another type. */
const char *listing_str(const cJSON *o, const char *key);
double listing_num(const cJSON *o, const char *key);
/* V printed with FMT into BUF (N bytes), or "-" when V is NaN. */
void listing_cell(char *buf, size_t n, double v, const char *fmt);
/* V as printf's "%.Df" writes it (D = DECIMALS), into BUF (N bytes): without printf for
 * D 0 to 2 and |V| < 1e15 (show --all's table writes five numbers a row). */
void listing_fixed(char *buf, size_t n, double v, int decimals);

/* 1 when the sweep object's metric is a rate (metric.better = "higher", in options_json):
 * its values are costs, shown through metric_shown / metric_format. */
int listing_higher(const cJSON *sweep_obj);

/* The numbers a sweep reports: its confirmed winner's pooled values and interval when the
 * sweep has one, else the best single trial against the baseline trial, with an interval
 * from their step times. Returns 0 when a speedup could be computed. */
typedef struct {
  double value, baseline, lo, hi;
  int pooled; /* trials pooled for the winner, 0 for a single trial */
} verdict;

/* Fills *V for the sweep object SW (store_show_sweep_page). Returns 0 when a speedup could be
 * computed. */
int listing_verdict(const cJSON *sw, verdict *v);
/* "1.104x, 95% CI 1.09-1.12" for a confirmed winner; a single run's is marked "not confirmed"
 * and its interval (from its steps) named as such. Into BUF. */
void listing_format_speedup(const verdict *v, char *buf, size_t n);

/* The verdict as one line for an export's comment, the same in `export`, the end-of-run
 * summary and the report: "step 412.30 ms vs baseline 455.10 ms (1.104x, 95% CI ...), trial
 * 57, confirmed" (a rate: "rate 2.24/s vs ..."). BEST is the sweep's "best" or a row of
 * `best`. A new string. */
char *listing_verdict_comment(const cJSON *sweep_obj, const cJSON *best);

/* The lines of `show` and of the end-of-run summary, on stdout. */
void listing_header(const cJSON *sw);
/* "cost: ...": what the sweep's trials cost in wall time, compile counted (nothing when the
 * listing has no "cost"). */
void listing_cost(const cJSON *sw);
void listing_counts(const cJSON *sw);
void listing_log_failures(const cJSON *sw);
void listing_best_line(const cJSON *sw);
void listing_trials(const cJSON *sw);
/* listing_trials in two parts, for a table printed as its rows are read (show --all): the
 * column header, then one trial row (with its error's first line under a failed one). */
void listing_trials_header(int higher);
void listing_trial_row(const cJSON *trial, int higher);
/* listing_trial_row from a row read for the table alone (store_each_trial_line), made
 * terminal-safe here (json_terminal_text), as the caller does for a listing. */
void listing_trial_line(const store_trial_line *t, int higher);
/* "importance: NAME 61%, ..." from the sweep's "importance" (importance_attach): the few
 * parameters that explain most, or why there is no estimate yet. */
void listing_importance(const cJSON *sw);

/* A trial row's export (its xla_flags, tpu_args and env object) under N_COMMENTS comment
 * lines: `info` points into ROW, COMMENTS and the parsed env, all valid until
 * listing_export_clear. What cli's export, the report and minimize print. */
typedef struct {
  export_info info;
  cJSON *env;
  const char **names, **values;
} listing_export;
void listing_export_init(listing_export *x, const cJSON *row, const char *const *comments,
                         int n_comments);
void listing_export_clear(listing_export *x);

#endif
