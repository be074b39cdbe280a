/* The experiment file on the C side. Owns reading the file, its hash, the C struct and its
 * release, the metric specs (a pattern metric matched through the Lua host) and the
 * imported flag names read from the database; the call into lua/dsl.lua (the one place that
 * knows the file's keys and rules), the copy of the validated table and the matchers are
 * src/luahost/lhost_experiment.c's, the software probe hardware.c's.
 * Must not validate anything itself (dsl.lua does, with line numbers) and must not run
 * trials or write the store: a loaded experiment is inert data plus its registry refs. */
#include "experiment.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "hardware.h"
#include "lhost_experiment.h"
#include "store.h"
#include "trialcfg.h"

/* The public struct first, so experiment_free can cast back. The match function lives
 * here rather than in experiment.h because only experiment_metric's callback needs it. */
/* A pattern metric's dsl.matcher(pattern), kept in the registry. */
typedef struct {
  lhost *h;
  int ref; /* LHOST_NOREF for json metrics */
} matcher;

typedef struct {
  experiment pub;
  matcher step, check; /* metric.pattern, metric.check.pattern */
} experiment_impl;

static char *read_all(const char *path, char **err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_set(err, FT_EINPUT, "cannot read %s: %s", path, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  size_t cap = 0, n = 0, r;
  do {
    if (n + 4096 > cap) buf = xrealloc(buf, cap = cap * 2 + 4096);
    r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
  } while (r > 0);
  int failed = ferror(f);
  int saved = errno;
  fclose(f);
  if (failed) {
    free(buf);
    diag_set(err, FT_EINPUT, "cannot read %s: %s", path, strerror(saved));
    return NULL;
  }
  buf[n] = '\0';
  return buf;
}

/* FNV-1a 64 over the bytes: a cheap, stable identity for "the same experiment text". */
static void fnv1a_hex(const char *s, size_t n, char out[17]) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ULL;
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* Warnings stop nothing, so they are printed here, once per load, in the compiler-style
 * form the errors use ("path:line: warning: ..."). */
static void print_warnings(const experiment *e) {
  for (int i = 0; i < e->n_warnings; i++) diag_error(e->warnings[i]);
}

/* lhost_software_fn over hardware_software: "jax A, jaxlib B" -> A and B. */
static void software(const char *probe, char **jax, char **jaxlib) {
  char *sw = hardware_software(probe, jaxlib);
  const char *end = sw && strncmp(sw, "jax ", 4) == 0 ? strchr(sw + 4, ',') : NULL;
  *jax = end ? xstrndup(sw + 4, (size_t)(end - sw - 4)) : NULL;
  free(sw);
}

int experiment_load(lhost *h, const char *path, const char *text, experiment **out, char **err) {
  return experiment_load_with(h, path, text, NULL, 0, out, err);
}

int experiment_load_with(lhost *h, const char *path, const char *text, const char *const *imported,
                         int n, experiment **out, char **err) {
  *out = NULL;
  char *owned = text ? xstrdup(text) : read_all(path, err);
  if (!owned) return FT_EINPUT;
  size_t len = strlen(owned);
  experiment_impl *x = xcalloc(1, sizeof *x);
  experiment *e = &x->pub;
  e->host = h;
  e->spec_ref = LHOST_NOREF;
  x->step = x->check = (matcher){.h = h, .ref = LHOST_NOREF};
  e->path = xstrdup(path);
  e->text = owned;
  fnv1a_hex(owned, len, e->hash);

  int rc = lhost_experiment_load(h, path, owned, len, imported, n, software, e, err);
  if (rc != 0) goto cleanup;
  print_warnings(e);
  if (e->metric == METRIC_PATTERN) rc = lhost_matcher_new(h, e->metric_pattern, &x->step.ref, err);
  if (rc == 0 && e->check_on && e->check_kind == METRIC_PATTERN)
    rc = lhost_matcher_new(h, e->check_pattern, &x->check.ref, err);

cleanup:
  if (rc != 0) {
    experiment_free(e);
    return rc;
  }
  *out = e;
  return 0;
}

void experiment_free(experiment *e) {
  if (!e) return;
  experiment_impl *x = (experiment_impl *)e;
  if (e->host) {
    lhost_unref(e->host, e->spec_ref);
    lhost_unref(e->host, x->step.ref);
    lhost_unref(e->host, x->check.ref);
  }
  free(e->path);
  free(e->text);
  free(e->name);
  free(e->model);
  free(e->hardware);
  trialcfg_free_strv(e->command);
  trialcfg_free_strv(e->on_done);
  free(e->workdir);
  free(e->metric_field);
  free(e->metric_pattern);
  free(e->check_field);
  free(e->check_pattern);
  trialcfg_free_strv(e->oom_patterns);
  trialcfg_free_strv(e->invalid_patterns);
  trialcfg_free_strv(e->warnings);
  free(e->strategy_name);
  free(e->strategy_desc);
  free(e->software_probe);
  trialcfg_free_strv(e->pgle_command);
  free(e->executor);
  free(e->slurm_partition);
  free(e->slurm_account);
  free(e->slurm_time);
  free(e->slurm_mode);
  trialcfg_free_strv(e->slurm_extra);
  trialcfg_free_strv(e->slurm_srun);
  free(x);
}

/* parse_step's pattern callback: the number in the pattern's one capture (string.match
 * under a small budget); any Lua error counts as "no step time here". */
static int match_line(void *ctx, const char *line, size_t len, double *out) {
  const matcher *m = ctx;
  return lhost_matcher_match(m->h, m->ref, line, len, out);
}

metric_spec experiment_metric(experiment *e) {
  metric_spec m = {.kind = e->metric,
                   .field = e->metric_field,
                   .scale = e->metric_scale,
                   .rate = e->metric_higher};
  if (e->metric == METRIC_PATTERN) {
    m.match = match_line;
    m.match_ctx = &((experiment_impl *)e)->step;
  }
  return m;
}

metric_spec experiment_check_metric(experiment *e) {
  metric_spec m = {.kind = e->check_kind, .field = e->check_field, .scale = 1, .any_value = 1};
  if (e->check_on && e->check_kind == METRIC_PATTERN) {
    m.match = match_line;
    m.match_ctx = &((experiment_impl *)e)->check;
  }
  return m;
}

void experiment_override_budget(experiment *e, int trials, double hours) {
  e->budget_trials = trials;
  e->budget_hours = hours;
}

int experiment_load_for_db(lhost *h, const char *path, const char *text, const char *db_path,
                           experiment **out, char **err) {
  store *db = NULL;
  cJSON *rows = NULL;
  const char **names = NULL;
  int k = 0;
  if (db_path && store_open(db_path, STORE_READONLY, &db, NULL) == 0 &&
      store_flags_names(db, &rows, NULL) == 0) {
    names = xcalloc((size_t)cJSON_GetArraySize(rows) + 1, sizeof(char *));
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
      const cJSON *name = cJSON_GetObjectItemCaseSensitive(row, "name");
      if (cJSON_IsString(name)) names[k++] = name->valuestring;
    }
  }
  int rc = experiment_load_with(h, path, text, names, k, out, err);
  free(names);
  cJSON_Delete(rows);
  store_close(db);
  return rc;
}
