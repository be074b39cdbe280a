/* Which searched parameters mattered: a cheap estimate from the trials a sweep already ran,
 * with no extra measurement. For each parameter alone, the share of the variance of log step
 * time that its values explain (a one-way analysis of variance per parameter, its effect size
 * corrected for the number of values: epsilon squared), over the sweep's finished trials.
 * Pure: reads a sweep listing (store_show_sweep_page's "trials"), never the database. */
#ifndef FLAGTUNE_IMPORTANCE_H
#define FLAGTUNE_IMPORTANCE_H

#include <cjson/cJSON.h>

/* How much worse than the slowest ok trial a failed configuration scores (log step time
 * + log 1.1): an OOM, a refused flag, a wrong result, a timeout or a pruned trial is the
 * configuration's fault, so a parameter that causes them matters. */
#define IMPORTANCE_FAIL_PENALTY 1.1

typedef struct {
  char *name;       /* the parameter as the configuration names it (owned) */
  double explained; /* its adjusted share of the variance of log step time, 0..1 */
  double share;     /* explained over the sum of every parameter's explained, 0..1 */
  int levels;       /* distinct values seen, the default (absent) counted as one */
} importance_param;

typedef struct {
  importance_param *p; /* by explained, largest first (owned) */
  int n;
  int n_trials; /* trials scored */
  int n_failed; /* of those, failed ones scored with the penalty */
} importance_result;

/* Scores TRIALS (an array of listing trial objects: status, value, config as JSON text,
 * steps_budget) and fills *OUT. Scored: ok trials run with the sweep's full step budget (a
 * short halving rung is not comparable), and the configuration's own failures (oom, invalid,
 * wrong, timeout, pruned) at the penalty; crash, no_metric, lost, interrupted and running
 * trials say nothing about their configuration and are left out. Returns 0, or -1 (with
 * *OUT empty but freeable) when fewer than 3 trials could be scored or nothing varied. */
int importance_compute(const cJSON *trials, importance_result *out);
/* importance_compute with the sweep's full step budget given (FULL > 0): TRIALS may be a
 * sample of the sweep that holds none of its full-budget trials' largest budget. FULL <= 0:
 * the largest budget in TRIALS, as importance_compute. */
int importance_compute_full(const cJSON *trials, double full, importance_result *out);
/* One trial as importance_compute_trials reads it. */
typedef struct {
  int outcome;         /* its status as classify.h's outcome; -1 for none */
  double value;        /* its step time; NaN: none */
  double steps_budget; /* NaN or <= 0: none */
  const cJSON *config; /* its parsed configuration; not an object: left out */
} importance_trial;
/* importance_compute_full over N trials already taken apart (a report's sample): the same
 * scores, without a listing's cJSON objects. */
int importance_compute_trials(const importance_trial *t, int n, double full,
                              importance_result *out);
void importance_free(importance_result *r);

/* {"trials": n, "failed": k, "params": [{"name", "explained", "share", "levels"}]}; caller
 * deletes. */
cJSON *importance_json(const importance_result *r);

/* Adds "importance" to a sweep listing (store_show_sweep_page's object): importance_json of its
 * trials, or null when they are too few to say. */
void importance_attach(cJSON *sweep_obj);

/* The value of parameter NAME in CONFIG (a parsed configuration object) as text for people:
 * strings without quotes, byte counts of a *_bytes parameter as "512MiB", NULL when the
 * configuration leaves it at its default. Caller frees. */
char *importance_value_text(const cJSON *config, const char *name);

#endif
