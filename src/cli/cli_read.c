/* The read commands: sweeps, show, best, export and query. Each opens the database
 * read-only and prints a listing as an aligned table or --json; reads only through store's
 * listing functions (and store_query for `query`); never writes the database or runs a
 * trial. Shares cli_impl.h with the rest of the command line (cli.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_impl.h"
#include "diag.h"
#include "hardware.h"
#include "importance.h"
#include "json.h"
#include "listing.h"
#include "metric.h"
#include "outfile.h"
#include "report.h"
#include "store.h"

static int print_export(const cJSON *sweep_obj, const cJSON *best, export_format fmt, FILE *out,
                        int unsafe_env, char **err);

static int open_store(const args *a, store **s, char **err) {
  return store_open(cli_db_path(a), STORE_READONLY, s, err);
}

/* Columns that hold JSON text in the database (docs/SCHEMA.md): in --json output their
 * values are objects and arrays, not JSON strings inside JSON. The names stay the columns'. */
static int json_column(const char *key) {
  static const char *const cols[] = {"config",       "env",    "command", "options_json",
                                     "command_json", "losses", NULL};
  for (int i = 0; key && cols[i]; i++)
    if (strcmp(key, cols[i]) == 0) return 1;
  return 0;
}

/* Replaces, everywhere in J, a JSON column's text by the value it holds. Text that does not
 * parse (it cannot: the tables CHECK json_valid) stays a string. */
static void nest_json_columns(cJSON *j) {
  cJSON *next;
  for (cJSON *it = j ? j->child : NULL; it; it = next) {
    next = it->next; /* `it` is freed when replaced */
    if (cJSON_IsString(it) && json_column(it->string)) {
      cJSON *v = cJSON_Parse(it->valuestring);
      if (v) cJSON_ReplaceItemInObjectCaseSensitive(j, it->string, v); /* keeps the key */
    } else if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
      nest_json_columns(it);
    }
  }
}

static void print_json_as_is(const cJSON *j) {
  char *s = json_print_text(j, 1);
  printf("%s\n", s);
  free(s);
}

/* A listing as --json prints it (nested; J is changed). `query --json` prints its values as
 * SQLite returns them (print_json_as_is): there the user chose the columns. */
static void print_json(cJSON *j) {
  nest_json_columns(j);
  print_json_as_is(j);
}

/* ---- sweeps ---- */

/* Rows of `sweeps` and `best` carry no options: a row whose sweep reads a rate
 * (metric.better = "higher") gets "better": "higher", so the text shows rates and --json says
 * what its values are (costs, 1000 / rate: docs/SCHEMA.md). */
static void mark_better(store *s, cJSON *list, const char *id_key) {
  cJSON *row;
  cJSON_ArrayForEach(row, list) {
    char ref[32], *e = NULL;
    snprintf(ref, sizeof ref, "%.0f", listing_num(row, id_key));
    store_sweep sw = {0};
    if (store_sweep_get(s, ref, &sw, &e) == 0 && metric_higher(sw.options_json))
      cJSON_AddStringToObject(row, "better", "higher");
    free(e);
    store_sweep_clear(&sw);
  }
}

/* A `running` sweep row (a listing's, or show's) whose orchestrator is known to be gone (it
 * ran here and its process is not alive: killed -9, the machine rebooted) gets
 * "orchestrator_gone": true, any other running row false: the listings then say so, not
 * "running" (store_holder_gone). */
static void mark_gone(cJSON *row) {
  const char *status = listing_str(row, "status"), *host = listing_str(row, "host");
  if (!status || strcmp(status, "running") != 0) return;
  double pid = listing_num(row, "pid"), start = listing_num(row, "pid_start");
  int gone = !isnan(pid) && store_holder_gone(host, (int)pid, isnan(start) ? 0 : (long long)start);
  cJSON_AddBoolToObject(row, "orchestrator_gone", gone);
}

int cli_cmd_sweeps(args *a) {
  store *s = NULL;
  cJSON *list = NULL;
  char *err = NULL;
  int rc = open_store(a, &s, &err);
  if (rc == 0) rc = store_list_sweeps(s, &list, &err);
  if (rc == 0) mark_better(s, list, "id");
  store_close(s);
  if (rc != 0) return cli_fail(rc, err);
  cJSON *row;
  cJSON_ArrayForEach(row, list) mark_gone(row);
  if (a->json) {
    print_json(list);
  } else {
    json_terminal_safe(list, NULL); /* names come from experiment files and trials' output */
    printf("%4s  %-24s %-16s %-22s %-11s %6s %5s %10s %10s %8s\n", "ID", "NAME", "MODEL",
           "HARDWARE", "STATUS", "TRIALS", "OK", "BEST", "BASELINE", "SPEEDUP");
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
      char best[32], base[32], sp[32];
      int higher = listing_higher(it);
      /* a rate as N/s; a step time's ms are the column's */
      const char *fmt = higher ? "%.2f/s" : "%.2f";
      listing_cell(best, sizeof best, metric_shown(listing_num(it, "best_ms"), higher), fmt);
      listing_cell(base, sizeof base, metric_shown(listing_num(it, "baseline_ms"), higher), fmt);
      listing_cell(sp, sizeof sp, listing_num(it, "speedup"), "%.3fx");
      printf("%4.0f  %-24.24s %-16.16s %-22.22s %-11s %6.0f %5.0f %10s %10s %8s\n",
             listing_num(it, "id"), listing_str(it, "name"), listing_str(it, "model"),
             listing_str(it, "hardware"),
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "orchestrator_gone"))
                 ? "died"
                 : listing_str(it, "status"),
             listing_num(it, "n_trials"), listing_num(it, "ok"), best, base, sp);
    }
  }
  cJSON_Delete(list);
  return 0;
}

/* Loads sweep REF with its trial table limited to LIMIT (store_show_sweep_page); the best's
 * and the baseline's step times only for JSON: the text prints no unconfirmed run's interval
 * (listing_format_speedup), so it needs none (store_show_sweep_brief). */
static int load_sweep(const args *a, const char *ref, int limit, store **s, cJSON **obj,
                      char **err) {
  store_sweep sw = {0};
  int rc = open_store(a, s, err);
  if (rc == 0) rc = store_sweep_get(*s, ref, &sw, err);
  if (rc == 0)
    rc = (a->json ? store_show_sweep_page : store_show_sweep_brief)(*s, sw.id, limit, obj, err);
  if (rc == 0) mark_gone(*obj);
  if (rc == 0 && metric_higher(sw.options_json)) cJSON_AddStringToObject(*obj, "better", "higher");
  store_sweep_clear(&sw);
  return rc;
}

/* show --all prints its trial table as the rows are read: listing a 100,000-trial sweep
 * holds one row at a time, not the table (it peaked at 200 MiB for 60,000 trials). The text
 * reads only the columns it prints, into one reused line (store_each_trial_line); --json
 * every column as a row object (store_each_trial). Its importance is show's and the
 * report's (report_importance_attach, attached by cli_cmd_show). */
typedef struct {
  int json;
  int n;      /* rows printed */
  int higher; /* the sweep's metric is a rate: its values are shown as rates */
} show_stream;

static int show_line(const store_trial_line *t, void *ud) {
  listing_trial_line(t, ((show_stream *)ud)->higher);
  return 0;
}

static int show_row(cJSON *row, void *ud) {
  show_stream *ss = ud;
  /* Printed inside a wrapper shaped like the listing, so the row is indented as it would be
   * there: the text between "{\n\t"trials":\t[" and "]\n}". */
  static const char head[] = "{\n\t\"trials\":\t[", tail[] = "]\n}";
  cJSON *wrap = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(wrap, "trials");
  cJSON_AddItemToArray(arr, row);
  nest_json_columns(wrap);
  char *text = json_print_text(wrap, 1);
  cJSON_DetachItemFromArray(arr, 0); /* the caller deletes the row */
  cJSON_Delete(wrap);
  size_t n = strlen(text), h = sizeof head - 1, t = sizeof tail - 1;
  if (n >= h + t) printf("%s%.*s", ss->n ? ", " : "", (int)(n - h - t), text + h);
  ss->n++;
  free(text);
  return 0;
}

/* What `show` prints above its trial table (made safe for a terminal first). */
static void show_head(cJSON *obj) {
  json_terminal_safe(obj, NULL);
  listing_header(obj);
  listing_counts(obj);
  listing_best_line(obj);
  listing_importance(obj);
  listing_cost(obj);
  printf("\n");
}

static int show_all(args *a, store *s, cJSON *obj, char **err) {
  show_stream ss = {.json = a->json, .n = 0, .higher = listing_higher(obj)};
  int64_t id = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(obj, "id"));
  int rc;
  cJSON_ReplaceItemInObjectCaseSensitive(obj, "trials", cJSON_CreateArray());
  cJSON_ReplaceItemInObjectCaseSensitive(obj, "trials_listed", cJSON_CreateString("all"));
  if (a->json) {
    nest_json_columns(obj);
    char *text = json_print_text(obj, 1);
    const char *mark = "\n\t\"trials\":\t[]", *at = strstr(text, mark);
    size_t cut = at ? (size_t)(at - text) + strlen(mark) - 1 : strlen(text);
    printf("%.*s", (int)cut, text);
    fflush(stdout);
    rc = store_each_trial(s, id, show_row, &ss, err);
    printf("%s\n", text + cut);
    free(text);
    return rc;
  }
  show_head(obj);
  listing_trials_header(ss.higher);
  return store_each_trial_line(s, id, show_line, &ss, err);
}

int cli_cmd_show(args *a) {
  store *s = NULL;
  cJSON *obj = NULL;
  char *err = NULL;
  int rc = load_sweep(a, a->pos[0], a->all ? 0 : SHOW_PAGE, &s, &obj, &err);
  /* which parameters mattered: one estimate over the sweep's trials, failures included, as
   * the report's (not over the listed page of fastest ok trials) */
  if (rc == 0) rc = report_importance_attach(s, obj, &err);
  if (rc == 0 && a->all) {
    rc = show_all(a, s, obj, &err);
  } else if (rc == 0 && a->json) {
    print_json(obj);
  } else if (rc == 0) {
    show_head(obj);
    listing_trials(obj);
  }
  store_close(s);
  cJSON_Delete(obj);
  return rc != 0 ? cli_fail(rc, err) : 0;
}

/* Prints the end-of-run report: counts, log failures, best vs baseline, and the export
 * snippet. */
int cli_print_summary(const args *a, long long id) {
  store *s = NULL;
  cJSON *obj = NULL;
  char *err = NULL, ref[32];
  snprintf(ref, sizeof ref, "%lld", id);
  int rc = load_sweep(a, ref, STORE_SHOW_SUMMARY, &s, &obj, &err);
  if (rc == 0) {
    /* The lines for the terminal are escaped; the export below takes the values as stored. */
    cJSON *shown = cJSON_Duplicate(obj, 1);
    json_terminal_safe(shown, NULL);
    printf("\n");
    listing_header(shown);
    listing_counts(shown);
    listing_log_failures(shown);
    listing_best_line(shown);
    listing_cost(shown);
    cJSON_Delete(shown);
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(obj, "best");
    if (cJSON_IsObject(best)) {
      printf("\n");
      rc = print_export(obj, best, EXPORT_SH, stdout, 0, &err);
    }
  }
  store_close(s);
  cJSON_Delete(obj);
  if (rc != 0) return cli_fail(rc, err);
  return 0;
}

/* ---- best ---- */

/* A flag's meaning, default and existence change between jaxlib versions: warn when a
 * stored best was measured with another jaxlib than the one installed here. The probe
 * (python3 importing jax) runs only when some row recorded a version. */
static void warn_jaxlib_changes(const cJSON *list) {
  const cJSON *it;
  int recorded = 0;
  cJSON_ArrayForEach(it, list) recorded |= listing_str(it, "jaxlib") != NULL;
  if (!recorded) return;
  char *here = NULL;
  char *software = hardware_software(getenv("FLAGTUNE_SOFTWARE_PROBE"), &here);
  cJSON_ArrayForEach(it, list) {
    const char *then = listing_str(it, "jaxlib");
    if (then && here && strcmp(then, here) != 0)
      diag_warn(
          "the best for %s on %s was measured with jaxlib %s; this machine has jaxlib %s: "
          "measure again before trusting it",
          listing_str(it, "model"), listing_str(it, "hardware"), then, here);
  }
  free(software);
  free(here);
}

int cli_cmd_best(args *a) {
  store *s = NULL;
  cJSON *list = NULL, *known = NULL;
  char *err = NULL;
  int rc = open_store(a, &s, &err);
  /* --json carries each best's and baseline's steps; the text prints none */
  if (rc == 0)
    rc = a->json ? store_best(s, a->model, a->hardware, &list, &err)
                 : store_best_brief(s, a->model, a->hardware, &list, &err);
  /* nothing for a misspelt --model: say which there are */
  if (rc == 0 && !a->json && (a->model || a->hardware) && cJSON_GetArraySize(list) == 0)
    rc = store_best_brief(s, NULL, NULL, &known, &err);
  if (rc == 0) mark_better(s, list, "sweep_id");
  store_close(s);
  if (rc != 0) return cli_fail(rc, err);
  if (a->json) {
    int any = cJSON_GetArraySize(list) > 0;
    print_json(list);
    cJSON_Delete(list);
    return any ? 0 : 1; /* `[]`, and exit 1 as the text does */
  }
  json_terminal_safe(list, NULL);
  if (cJSON_GetArraySize(list) == 0) {
    printf("no ok trial yet%s", a->model || a->hardware ? " for that model/hardware" : "");
    json_terminal_safe(known, NULL);
    int i = 0;
    const cJSON *k;
    cJSON_ArrayForEach(k, known) {
      if (i == 5) {
        printf(", ... (`flagtune best` lists them all)");
        break;
      }
      printf("%s%s on %s", i++ ? ", " : "; there are: ", listing_str(k, "model"),
             listing_str(k, "hardware"));
    }
    printf("\n");
    cJSON_Delete(known);
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, list) {
    char val[32], base[32], sp[96];
    int higher = listing_higher(it);
    metric_format(val, sizeof val, listing_num(it, "best_ms"), higher);
    metric_format(base, sizeof base, listing_num(it, "baseline_ms"), higher);
    /* the speedup and interval as show, export and the report give them */
    double pooled = listing_num(it, "winner_trials");
    verdict v = {listing_num(it, "best_ms"), listing_num(it, "baseline_ms"),
                 listing_num(it, "speedup_lo"), listing_num(it, "speedup_hi"),
                 isnan(pooled) ? 0 : (int)pooled};
    if (isnan(v.baseline))
      snprintf(sp, sizeof sp, "-");
    else
      listing_format_speedup(&v, sp, sizeof sp);
    printf("%s on %s: %s vs baseline %s (%s), sweep %.0f \"%s\" trial %.0f%s%s\n",
           listing_str(it, "model"), listing_str(it, "hardware"), val, base, sp,
           listing_num(it, "sweep_id"), listing_str(it, "sweep_name"),
           listing_num(it, "best_trial"), listing_str(it, "software") ? ", measured with " : "",
           listing_str(it, "software") ? listing_str(it, "software") : "");
    printf("  XLA_FLAGS=%s\n", listing_str(it, "xla_flags") ? listing_str(it, "xla_flags") : "");
    /* The winning variables too: the configuration is the flags and the environment. */
    cJSON *env = cJSON_Parse(listing_str(it, "env") ? listing_str(it, "env") : "{}");
    const cJSON *var;
    cJSON_ArrayForEach(var, env) {
      if (!cJSON_IsString(var)) continue;
      char *shown = json_terminal_text(var->valuestring, NULL);
      printf("  %s=%s\n", var->string, shown);
      free(shown);
    }
    cJSON_Delete(env);
  }
  warn_jaxlib_changes(list);
  int found = cJSON_GetArraySize(list) > 0;
  cJSON_Delete(list);
  return found ? 0 : 1; /* like grep: nothing found is exit 1 */
}

/* ---- export ---- */

/* A flagfile carries XLA flags only: what else the winner sets is said on stderr, so that
 * `XLA_FLAGS=/path/flags.txt` alone is never mistaken for the whole configuration. */
static void flagfile_leftovers(const export_info *info) {
  if (info->tpu_args && *info->tpu_args)
    diag_warn("the flagfile holds XLA_FLAGS only; the winner also sets LIBTPU_INIT_ARGS=%s",
              info->tpu_args);
  if (info->n_env == 0) return;
  size_t len = 1;
  for (int i = 0; i < info->n_env; i++)
    len += strlen(info->env_names[i]) + strlen(info->env_values[i]) + 2;
  char *list = xcalloc(len, 1);
  for (int i = 0; i < info->n_env; i++) {
    if (i) strcat(list, " ");
    strcat(list, info->env_names[i]);
    strcat(list, "=");
    strcat(list, info->env_values[i]);
  }
  char *shown = json_terminal_text(list, NULL);
  diag_warn(
      "the flagfile holds XLA_FLAGS only; the winner also sets %s (write them with "
      "--format env)",
      shown);
  free(shown);
  free(list);
}

static int print_export(const cJSON *sweep_obj, const cJSON *best, export_format fmt, FILE *out,
                        int unsafe_env, char **err) {
  char *c1 = xasprintf("flagtune: sweep %.0f \"%s\", model %s on %s", listing_num(sweep_obj, "id"),
                       listing_str(sweep_obj, "name"), listing_str(sweep_obj, "model"),
                       listing_str(sweep_obj, "hardware"));
  char *c2 = listing_verdict_comment(sweep_obj, best);
  const char *comments[2] = {c1, c2};
  listing_export x;
  listing_export_init(&x, best, comments, 2);
  x.info.unsafe_env = unsafe_env;
  int rc = trialcfg_export(out, fmt, &x.info, err);
  if (rc == 0 && fmt == EXPORT_FLAGFILE) flagfile_leftovers(&x.info);
  listing_export_clear(&x);
  free(c1);
  free(c2);
  return rc;
}

/* The best of (model, hardware) across sweeps, shaped like a sweep listing for print_export. */
static int best_across(store *s, const args *a, cJSON **sweep_obj, cJSON **best, char **err) {
  cJSON *list = NULL;
  int rc = store_best_brief(s, a->model, a->hardware, &list, err); /* no steps: none printed */
  if (rc != 0) return rc;
  if (cJSON_GetArraySize(list) != 1) {
    int n = cJSON_GetArraySize(list);
    cJSON_Delete(list);
    return diag_set(err, FT_EINPUT,
                    n == 0 ? "no ok trial for model '%s' on '%s'"
                           : "several (model, hardware) pairs match '%s' / '%s': "
                             "give both --model and --hardware",
                    a->model ? a->model : "*", a->hardware ? a->hardware : "*");
  }
  cJSON *row = cJSON_DetachItemFromArray(list, 0);
  cJSON_Delete(list);
  char ref[32];
  snprintf(ref, sizeof ref, "%.0f", listing_num(row, "sweep_id"));
  store_sweep sw = {0};
  rc = store_sweep_get(s, ref, &sw, err);
  if (rc == 0) rc = store_show_sweep_brief(s, sw.id, 0, sweep_obj, err);
  store_sweep_clear(&sw);
  *best = row;
  return rc;
}

static int write_export(args *a, const cJSON *sw, const cJSON *best, char **err) {
  export_format fmt = EXPORT_SH;
  int rc = cli_parse_format(a->format, &fmt, err);
  if (rc != 0) return rc;
  outfile out;
  if ((rc = outfile_open(&out, a->output, err)) != 0) return rc;
  rc = print_export(sw, best, fmt, out.f, a->unsafe_env, err);
  int closed = outfile_close(&out, rc == 0, rc == 0 ? err : NULL);
  return rc != 0 ? rc : closed;
}

int cli_cmd_export(args *a) {
  store *s = NULL;
  cJSON *sw = NULL, *best_row = NULL;
  char *err = NULL;
  int rc;
  if (a->n_pos == 0 && !a->model && !a->hardware) {
    diag_error("export needs a SWEEP or --model/--hardware (see flagtune export --help)");
    return 2;
  }
  rc = open_store(a, &s, &err);
  if (rc == 0 && a->n_pos > 0) {
    store_sweep one = {0};
    rc = store_sweep_get(s, a->pos[0], &one, &err);
    if (rc == 0) rc = store_show_sweep_brief(s, one.id, 0, &sw, &err); /* prints no steps */
    store_sweep_clear(&one);
  } else if (rc == 0) {
    rc = best_across(s, a, &sw, &best_row, &err);
  }
  const cJSON *best = best_row ? best_row : cJSON_GetObjectItemCaseSensitive(sw, "best");
  if (rc == 0 && !cJSON_IsObject(best))
    rc = diag_set(&err, FT_EINPUT, "sweep %s has no ok trial to export", a->pos[0]);
  if (rc == 0) rc = write_export(a, sw, best, &err);
  cJSON_Delete(sw);
  cJSON_Delete(best_row);
  store_close(s);
  if (rc != 0) return cli_fail(rc, err);
  return 0;
}

/* ---- query ---- */

static void print_cell(const cJSON *v) {
  if (cJSON_IsNull(v))
    printf("NULL");
  else if (cJSON_IsString(v))
    printf("%s", v->valuestring); /* made terminal-safe by the caller */
  else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
           fabs(v->valuedouble) < 1e15)
    printf("%.0f", v->valuedouble);
  else if (cJSON_IsNumber(v))
    printf("%.10g", v->valuedouble);
}

/* flagtune query's output as the rows come: text (a header line, then '|'-separated
 * cells) or a JSON array of objects. A reader gone (`| head`) ends the query. */
typedef struct {
  int json, rows;
} query_out;

static int query_row(const cJSON *cols, cJSON *row, void *ud) {
  query_out *q = ud;
  const cJSON *c = cols->child;
  if (q->json) {
    if (!row) return 0;
    cJSON *o = cJSON_CreateObject();
    for (; row->child && c; c = c->next) /* the row's values move into the object */
      cJSON_AddItemToObject(o, c->valuestring, cJSON_DetachItemViaPointer(row, row->child));
    char *text = json_print_text(o, 1);
    printf("%s%s", q->rows ? ", " : "[", text);
    free(text);
    cJSON_Delete(o);
  } else if (!row) {
    /* Text keeps line breaks and tabs (an experiment's text reads back as written) but not
     * what a terminal would act on (escape sequences from a trial's output). */
    cJSON *safe = cJSON_Duplicate(cols, 1);
    json_terminal_safe(safe, "\n\t");
    for (c = safe->child; c; c = c->next)
      printf("%s%s", c == safe->child ? "" : "|", c->valuestring);
    printf("\n");
    cJSON_Delete(safe);
  } else {
    json_terminal_safe(row, "\n\t");
    for (c = row->child; c; c = c->next) {
      if (c != row->child) printf("|");
      print_cell(c);
    }
    printf("\n");
  }
  q->rows += row != NULL;
  return ferror(stdout) != 0;
}

int cli_cmd_query(args *a) {
  store *s = NULL;
  char *err = NULL;
  query_out q = {.json = a->json};
  int rc = open_store(a, &s, &err);
  if (rc == 0) rc = store_query(s, a->pos[0], query_row, &q, &err);
  store_close(s);
  /* a query stopped at a limit leaves its JSON unclosed: no parser takes it as whole */
  if (q.json && rc == 0) printf("%s\n", q.rows ? "]" : "[]");
  if (rc != 0) return cli_fail(rc, err);
  return 0;
}
