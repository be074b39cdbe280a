/* `flagtune compare A B`: two sweeps side by side (the same model on two jaxlibs, two
 * clusters or two dates): their software and hardware keys, baselines, bests and speedups
 * with intervals, how B's baseline and best compare with A's, and how the winning flags
 * differ; as text or --json. Loads through report.c (report_sweep_load: each sweep's row,
 * best and baseline with their step times, no other trial); must not write the database. */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "json.h"
#include "listing.h"
#include "metric.h"
#include "report.h"
#include "stats.h"

static void add_num(cJSON *o, const char *key, double v) {
  if (isnan(v))
    cJSON_AddNullToObject(o, key);
  else
    cJSON_AddNumberToObject(o, key, round(v * 1e4) / 1e4);
}

static void add_str(cJSON *o, const char *key, const char *v) {
  if (v)
    cJSON_AddStringToObject(o, key, v);
  else
    cJSON_AddNullToObject(o, key);
}

/* One side: who the sweep is and what it found. */
static cJSON *side(const report_sweep *r) {
  const cJSON *o = r->obj, *best = cJSON_GetObjectItemCaseSensitive(o, "best");
  cJSON *j = cJSON_CreateObject();
  verdict v;
  int have = report_verdict(r, &v) == 0;
  add_num(j, "sweep_id", listing_num(o, "id"));
  add_str(j, "name", listing_str(o, "name"));
  add_str(j, "db", r->db);
  add_str(j, "model", listing_str(o, "model"));
  add_str(j, "hardware", listing_str(o, "hardware"));
  add_str(j, "software", listing_str(o, "software"));
  add_str(j, "jaxlib", listing_str(o, "jaxlib"));
  add_str(j, "host", listing_str(o, "host"));
  add_str(j, "strategy", listing_str(o, "strategy"));
  add_str(j, "status", listing_str(o, "status"));
  add_str(j, "started_at", listing_str(o, "created_at"));
  add_num(j, "trials", listing_num(o, "n_trials"));
  cJSON_AddItemToObject(j, "counts",
                        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o, "counts"), 1));
  /* the values are costs (a rate sweep's 1000 / rate, docs/SCHEMA.md); "better" says which */
  add_str(j, "better", listing_higher(o) ? "higher" : "lower");
  add_num(j, "baseline_ms", have ? v.baseline : NAN);
  add_num(j, "best_ms", v.value);
  add_num(j, "best_trial", cJSON_IsObject(best) ? listing_num(best, "number") : NAN);
  add_num(j, "speedup", have ? v.baseline / v.value : NAN);
  add_num(j, "speedup_lo", have ? v.lo : NAN);
  add_num(j, "speedup_hi", have ? v.hi : NAN);
  cJSON_AddBoolToObject(j, "confirmed", v.pooled > 0);
  return j;
}

/* How much faster B's trial KEY ("baseline" or "best") ran than A's: A's median step over
 * B's, with a 95% bootstrap interval of their step times; null when either has none. */
static cJSON *ratio(const report_sweep *a, const report_sweep *b, const char *key) {
  int base = strcmp(key, "baseline") == 0, ka = report_skip(a->obj), kb = report_skip(b->obj);
  const double *sa = base ? a->base_steps : a->best_steps,
               *sb = base ? b->base_steps : b->best_steps;
  int na = (base ? a->n_base_steps : a->n_best_steps) - ka;
  int nb = (base ? b->n_base_steps : b->n_best_steps) - kb;
  double sp, lo, hi;
  if (na <= 0 || nb <= 0 || stats_speedup_ci(sa + ka, na, sb + kb, nb, 12345, &sp, &lo, &hi) != 0)
    return cJSON_CreateNull();
  cJSON *j = cJSON_CreateObject();
  add_num(j, "speedup", sp);
  add_num(j, "lo", lo);
  add_num(j, "hi", hi);
  return j;
}

/* The winning settings of A and B: the same, set otherwise, set on one side only. */
static cJSON *flag_diff(const report_sweep *a, const report_sweep *b) {
  const cJSON *ba = cJSON_GetObjectItemCaseSensitive(a->obj, "best");
  const cJSON *bb = cJSON_GetObjectItemCaseSensitive(b->obj, "best");
  cJSON *sa = cJSON_IsObject(ba) ? report_settings(ba) : cJSON_CreateObject();
  cJSON *sb = cJSON_IsObject(bb) ? report_settings(bb) : cJSON_CreateObject();
  cJSON *d = cJSON_CreateObject();
  cJSON *same = cJSON_AddObjectToObject(d, "same"), *differ = cJSON_AddArrayToObject(d, "differ");
  cJSON *only_a = cJSON_AddObjectToObject(d, "only_a"),
        *only_b = cJSON_AddObjectToObject(d, "only_b");
  const cJSON *it;
  cJSON_ArrayForEach(it, sa) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(sb, it->string);
    if (!o) {
      cJSON_AddStringToObject(only_a, it->string, it->valuestring);
    } else if (strcmp(o->valuestring, it->valuestring) == 0) {
      cJSON_AddStringToObject(same, it->string, it->valuestring);
    } else {
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "name", it->string);
      cJSON_AddStringToObject(x, "a", it->valuestring);
      cJSON_AddStringToObject(x, "b", o->valuestring);
      cJSON_AddItemToArray(differ, x);
    }
  }
  cJSON_ArrayForEach(it, sb) if (!cJSON_GetObjectItemCaseSensitive(sa, it->string))
      cJSON_AddStringToObject(only_b, it->string, it->valuestring);
  cJSON_Delete(sa);
  cJSON_Delete(sb);
  return d;
}

/* What a reader should know before trusting the comparison. */
static cJSON *notes(const cJSON *a, const cJSON *b) {
  cJSON *n = cJSON_CreateArray();
  const char *ba = listing_str(a, "better"), *bb = listing_str(b, "better");
  if (ba && bb && strcmp(ba, bb) != 0)
    cJSON_AddItemToArray(
        n, cJSON_CreateString("the metric differs: one sweep's is a rate (metric.better = "
                              "\"higher\"), the other's a step time; the ratios compare "
                              "1000 / rate with milliseconds"));
  const char *keys[] = {"model", "hardware", "software"};
  for (int i = 0; i < 3; i++) {
    const char *x = listing_str(a, keys[i]), *y = listing_str(b, keys[i]);
    if (x && y && strcmp(x, y) != 0) {
      char *s = xasprintf("the %s differs: %s / %s", keys[i], x, y);
      cJSON_AddItemToArray(n, cJSON_CreateString(s));
      free(s);
    } else if (!x || !y) {
      char *s = xasprintf("the %s of %s is not recorded", keys[i],
                          !x && !y ? "either sweep"
                          : !x     ? "A"
                                   : "B");
      if (i > 0) cJSON_AddItemToArray(n, cJSON_CreateString(s));
      free(s);
    }
  }
  return n;
}

static cJSON *build(const report_sweep *a, const report_sweep *b) {
  cJSON *j = cJSON_CreateObject();
  cJSON *sa = side(a), *sb = side(b);
  cJSON_AddItemToObject(j, "a", sa);
  cJSON_AddItemToObject(j, "b", sb);
  cJSON_AddItemToObject(j, "baseline_b_vs_a", ratio(a, b, "baseline"));
  cJSON_AddItemToObject(j, "best_b_vs_a", ratio(a, b, "best"));
  cJSON_AddItemToObject(j, "flags", flag_diff(a, b));
  cJSON_AddItemToObject(j, "notes", notes(sa, sb));
  return j;
}

/* ---- text ---- */

static void row(const char *what, const char *a, const char *b) {
  printf("%-10s %-38s %s\n", what, a ? a : "-", b ? b : "-");
}

/* A side's value KEY as its user reads it: "412.30 ms", or a rate sweep's "2.24/s". */
static char *ms_text(const cJSON *s, const char *key) {
  char buf[64];
  const char *better = listing_str(s, "better");
  metric_format(buf, sizeof buf, listing_num(s, key), better && strcmp(better, "higher") == 0);
  return xstrdup(buf);
}

static char *speedup_text(const cJSON *s) {
  double v = listing_num(s, "speedup"), lo = listing_num(s, "speedup_lo"),
         hi = listing_num(s, "speedup_hi");
  if (isnan(v)) return xstrdup("-");
  if (isnan(lo)) return xasprintf("%.3fx", v);
  return xasprintf("%.3fx (95%% CI %.3f-%.3f)", v, lo, hi);
}

static char *who_text(const cJSON *s) {
  return xasprintf("%.0f \"%s\" in %s", listing_num(s, "sweep_id"), listing_str(s, "name"),
                   listing_str(s, "db"));
}

static char *counts_text(const cJSON *s) {
  char buf[256];
  int n = snprintf(buf, sizeof buf, "%.0f:", listing_num(s, "trials"));
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(s, "counts")) if (n < (int)sizeof buf)
      n += snprintf(buf + n, sizeof buf - (size_t)n, " %s %d", it->string, it->valueint);
  return xstrdup(buf);
}

static void row_free(const char *what, char *a, char *b) {
  row(what, a, b);
  free(a);
  free(b);
}

static void print_ratio(const char *what, const cJSON *r) {
  if (!cJSON_IsObject(r)) {
    printf("%s: not comparable (a side has no step times)\n", what);
    return;
  }
  printf("%s: %.3fx (95%% CI %.3f-%.3f)%s\n", what, listing_num(r, "speedup"), listing_num(r, "lo"),
         listing_num(r, "hi"),
         listing_num(r, "lo") > 1   ? ", B faster"
         : listing_num(r, "hi") < 1 ? ", A faster"
                                    : ", no measurable difference");
}

static void print_text(const cJSON *j) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "a");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "b");
  row("", "A", "B");
  row_free("sweep", who_text(a), who_text(b));
  const char *keys[] = {"model",    "hardware", "software",  "host",
                        "strategy", "status",   "started_at"};
  for (int i = 0; i < 7; i++) row(keys[i], listing_str(a, keys[i]), listing_str(b, keys[i]));
  row_free("trials", counts_text(a), counts_text(b));
  row_free("baseline", ms_text(a, "baseline_ms"), ms_text(b, "baseline_ms"));
  row_free("best", ms_text(a, "best_ms"), ms_text(b, "best_ms"));
  row_free("speedup", speedup_text(a), speedup_text(b));
  printf("\n");
  print_ratio("baseline, B vs A", cJSON_GetObjectItemCaseSensitive(j, "baseline_b_vs_a"));
  print_ratio("best, B vs A", cJSON_GetObjectItemCaseSensitive(j, "best_b_vs_a"));
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "flags"), *it;
  printf("\nwinning settings:\n");
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(f, "differ"))
      printf("  differ     %s: A %s, B %s\n", listing_str(it, "name"), listing_str(it, "a"),
             listing_str(it, "b"));
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(f, "only_a"))
      printf("  only in A  %s=%s\n", it->string, it->valuestring);
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(f, "only_b"))
      printf("  only in B  %s=%s\n", it->string, it->valuestring);
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(f, "same"))
      printf("  same       %s=%s\n", it->string, it->valuestring);
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "notes"))
      printf("note: %s\n", it->valuestring);
}

int compare_main(const char *db, const char *ref_a, const char *ref_b, int json, char **err) {
  report_sweep a, b;
  int rc = report_sweep_load(db, ref_a, &a, err);
  if (rc != 0) return rc;
  rc = report_sweep_load(db, ref_b, &b, err);
  if (rc != 0) {
    report_sweep_free(&a);
    return rc;
  }
  cJSON *j = build(&a, &b);
  if (json) {
    char *s = json_print_text(j, 1);
    printf("%s\n", s);
    free(s);
  } else {
    json_terminal_safe(j, NULL); /* names and flag values are user data */
    print_text(j);
  }
  cJSON_Delete(j);
  report_sweep_free(&a);
  report_sweep_free(&b);
  return 0;
}
