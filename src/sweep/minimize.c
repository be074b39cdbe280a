/* Minimize as a plan. Owns the rules of `flagtune minimize`: which configurations are
 * measured (the winner with each parameter reverted alone, then a greedy pass that reverts
 * them together, least important first), in what order (interleaved with the winner, as
 * confirmation is), and when a revert is kept (the estimated speedup stays at or above the
 * low end of the winner's interval). Pure: reads trial records, knows nothing about
 * processes, the loop or SQL. */
#include "minimize.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "stats.h"

/* ---- the winner's members, as text ---- */

typedef struct {
  const char *start; /* "\"name\":value" inside the winner's text */
  size_t len;
} member;

/* The end of the JSON string starting at P (at its opening quote), or NULL. */
static const char *string_end(const char *p) {
  for (p++; *p; p++) {
    if (*p == '\\' && p[1])
      p++;
    else if (*p == '"')
      return p + 1;
  }
  return NULL;
}

/* Splits the object CONFIG into its top-level members; -1 when it is not an object. */
static int split_members(const char *config, member **out, int *n) {
  *out = NULL;
  *n = 0;
  const char *p = config;
  while (*p == ' ') p++;
  if (*p++ != '{') return -1;
  member *m = xcalloc(strlen(config) + 1, sizeof *m);
  int k = 0, depth = 0;
  const char *start = p;
  for (; *p; p++) {
    if (*p == '"') {
      const char *e = string_end(p);
      if (!e) break;
      p = e - 1;
    } else if (*p == '{' || *p == '[') {
      depth++;
    } else if ((*p == '}' || *p == ']') && depth > 0) {
      depth--;
    } else if ((*p == ',' || *p == '}') && depth == 0) {
      if (p > start) m[k++] = (member){start, (size_t)(p - start)};
      if (*p == '}') {
        *out = m;
        *n = k;
        return 0;
      }
      start = p + 1;
    }
  }
  free(m);
  return -1;
}

char *minimize_subset(const char *config, const int *drop, int n) {
  member *m = NULL;
  int k = 0;
  if (split_members(config, &m, &k) != 0 || k != n) {
    free(m);
    return xstrdup(config);
  }
  size_t len = 3;
  for (int i = 0; i < k; i++) len += m[i].len + 1;
  char *s = xmalloc(len), *w = s;
  *w++ = '{';
  for (int i = 0; i < k; i++) {
    if (drop[i]) continue;
    if (w > s + 1) *w++ = ',';
    memcpy(w, m[i].start, m[i].len);
    w += m[i].len;
  }
  *w++ = '}';
  *w = '\0';
  free(m);
  return s;
}

/* The member's name (decoded) and value (as JSON text). */
static int member_parts(const member *m, char **name, char **value) {
  const char *e = m->start[0] == '"' ? string_end(m->start) : NULL;
  if (!e || e >= m->start + m->len || *e != ':') return -1;
  char *key = xmalloc((size_t)(e - m->start) + 1);
  memcpy(key, m->start, (size_t)(e - m->start));
  key[e - m->start] = '\0';
  cJSON *j = cJSON_Parse(key);
  free(key);
  if (!cJSON_IsString(j)) {
    cJSON_Delete(j);
    return -1;
  }
  *name = xstrdup(j->valuestring);
  cJSON_Delete(j);
  size_t vlen = m->len - (size_t)(e + 1 - m->start);
  *value = xmalloc(vlen + 1);
  memcpy(*value, e + 1, vlen);
  (*value)[vlen] = '\0';
  return 0;
}

/* ---- measurements ---- */

/* The ended minimize trials of CONFIG, numbers FROM to FROM+R-1 of them in trial order:
 * how many there are (*have) and the median of the ok values among them (NaN: none); *FAILED
 * (when not NULL) the outcome of the last of them that did not end ok, -1 when none. */
static double window_of(const trial_record *t, int n, const char *config, int from, int r,
                        int *have, int *failed) {
  double *v = xcalloc((size_t)r + 1, sizeof *v);
  int seen = 0, got = 0, n_ok = 0;
  for (int i = 0; i < n && got < r; i++) {
    if (t[i].role != ROLE_MINIMIZE || !outcome_is_final(t[i].status) ||
        strcmp(t[i].config_json, config) != 0)
      continue;
    if (seen++ < from) continue;
    got++;
    if (t[i].status == OUTCOME_OK && !isnan(t[i].value))
      v[n_ok++] = t[i].value;
    else if (failed)
      *failed = (int)t[i].status;
  }
  double med = n_ok ? stats_median(v, n_ok) : NAN;
  free(v);
  *have = got;
  return med;
}

static double window(const trial_record *t, int n, const char *config, int from, int r, int *have) {
  return window_of(t, n, config, from, r, have, NULL);
}

/* Queues the rounds: round by round, each of the N configurations whose window holds fewer
 * than r+1 trials (HAVE), so a drift in the machine's speed hits all of them alike. */
static void interleave(minimize_plan *p, char *const *configs, const int *have, int n, int r) {
  p->configs = xcalloc((size_t)(n * r) + 1, sizeof(char *));
  for (int round = 0; round < r; round++)
    for (int k = 0; k < n; k++)
      if (round >= have[k]) p->configs[p->n_configs++] = xstrdup(configs[k]);
}

/* Less important first: the higher speedup without it, then the name. */
static int by_alone(const minimize_param *x, const minimize_param *y) {
  if (x->alone != y->alone) return x->alone > y->alone ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Sorts the parameter indexes IDX (N) least important first: the highest speedup without
 * it, then by name. */
static void order_params(const minimize_param *ps, int *idx, int n) {
  for (int i = 1; i < n; i++) { /* insertion sort: a handful of parameters */
    int x = idx[i], j = i - 1;
    while (j >= 0 && by_alone(&ps[idx[j]], &ps[x]) > 0) {
      idx[j + 1] = idx[j];
      j--;
    }
    idx[j + 1] = x;
  }
}

/* Stage 0: the winner and each parameter reverted alone. Returns 1 when trials are missing
 * (queued in P). */
static int ablation(const trial_record *t, int n, const minimize_input *in, minimize_plan *p) {
  int k = p->n_params, r = in->repeats;
  char **configs = xcalloc((size_t)k + 1, sizeof(char *));
  int *have = xcalloc((size_t)k + 1, sizeof(int)), *drop = xcalloc((size_t)k, sizeof(int));
  double *med = xcalloc((size_t)k + 1, sizeof(double));
  int missing = 0, *failed = xcalloc((size_t)k + 1, sizeof(int));
  configs[0] = xstrdup(in->winner);
  for (int i = 0; i < k; i++) {
    drop[i] = 1;
    configs[i + 1] = minimize_subset(in->winner, drop, k);
    drop[i] = 0;
  }
  for (int i = 0; i <= k; i++) {
    failed[i] = -1;
    med[i] = window_of(t, n, configs[i], 0, r, &have[i], &failed[i]);
    missing |= have[i] < r;
  }
  if (missing) {
    interleave(p, configs, have, k + 1, r);
    p->stage = xasprintf("the winner and each of its %d parameter%s reverted alone, %d time%s each",
                         k, k == 1 ? "" : "s", r, r == 1 ? "" : "s");
  }
  for (int i = 0; i < k; i++) {
    p->params[i].alone = in->speedup * med[0] / med[i + 1]; /* NaN when either failed */
    p->params[i].matters = !(p->params[i].alone >= in->lo);
    p->params[i].alone_failed = isnan(med[i + 1]) ? failed[i + 1] : -1;
  }
  free(failed);
  for (int i = 0; i <= k; i++) free(configs[i]);
  free(configs);
  free(have);
  free(drop);
  free(med);
  return missing;
}

/* The greedy pass: reverts the parameters that do not matter alone, least important first,
 * each kept when the configuration without it (and without those reverted before it),
 * measured interleaved with a fresh block of the winner's trials, stays at or above the
 * interval's low end. Returns 1 when trials are missing (queued in P). */
static int greedy(const trial_record *t, int n, const minimize_input *in, minimize_plan *p) {
  int k = p->n_params, r = in->repeats, n_order = 0, block = 1, n_dropped = 0, missing = 0;
  int *order = xcalloc((size_t)k + 1, sizeof(int)), *drop = xcalloc((size_t)k + 1, sizeof(int));
  for (int i = 0; i < k; i++)
    if (!p->params[i].matters) order[n_order++] = i;
  order_params(p->params, order, n_order);
  for (int o = 0; o < n_order && !missing; o++) {
    int i = order[o];
    double sp;
    drop[i] = 1;
    if (n_dropped == 0) {
      sp = p->params[i].alone; /* measured alone already, and it does not matter */
    } else {
      char *c = minimize_subset(in->winner, drop, k);
      int have[2];
      double mw = window(t, n, in->winner, block * r, r, &have[0]);
      double mc = window(t, n, c, 0, r, &have[1]);
      if (have[0] < r || have[1] < r) {
        char *pair[2] = {(char *)in->winner, c};
        interleave(p, pair, have, 2, r);
        p->stage = xasprintf("without %s and the %d parameter%s reverted before it",
                             p->params[i].name, n_dropped, n_dropped == 1 ? "" : "s");
        missing = 1;
        drop[i] = 0;
      }
      free(c);
      sp = in->speedup * mw / mc;
      block++;
    }
    if (missing) break;
    p->params[i].tried = 1;
    if (sp >= in->lo) {
      p->params[i].dropped = 1;
      p->minimal_speedup = sp;
      n_dropped++;
    } else {
      drop[i] = 0;
    }
  }
  free(p->minimal);
  p->minimal = minimize_subset(in->winner, drop, k);
  free(order);
  free(drop);
  return missing;
}

int minimize_plan_make(const trial_record *t, int n, const minimize_input *in, minimize_plan *out,
                       char **err) {
  memset(out, 0, sizeof *out);
  member *m = NULL;
  int k = 0;
  if (split_members(in->winner, &m, &k) != 0 || k == 0) {
    free(m);
    return diag_set(err, FT_EINPUT, "the winner %s sets no searched parameter: nothing to minimize",
                    in->winner);
  }
  out->params = xcalloc((size_t)k, sizeof *out->params);
  out->n_params = k;
  for (int i = 0; i < k; i++) {
    out->params[i].alone = NAN;
    out->params[i].alone_failed = -1;
    if (member_parts(&m[i], &out->params[i].name, &out->params[i].value) != 0) {
      free(m);
      minimize_plan_free(out);
      return diag_set(err, FT_EINPUT, "the winner's configuration %s is not a JSON object",
                      in->winner);
    }
  }
  free(m);
  out->minimal = xstrdup(in->winner);
  out->minimal_speedup = in->speedup;
  if (ablation(t, n, in, out)) return 0;
  if (greedy(t, n, in, out)) return 0;
  out->done = 1;
  return 0;
}

void minimize_plan_free(minimize_plan *p) {
  for (int i = 0; i < p->n_params; i++) {
    free(p->params[i].name);
    free(p->params[i].value);
  }
  free(p->params);
  for (int i = 0; i < p->n_configs; i++) free(p->configs[i]);
  free(p->configs);
  free(p->stage);
  free(p->minimal);
  memset(p, 0, sizeof *p);
}
