/* Parameter importance from the trials already run: on a synthetic sweep where one parameter
 * clearly matters and one does nothing, and with failures scored or left out by outcome. */
#include <stdlib.h>

#include "importance.h"
#include "test.h"

/* A listing trial object as store_show_sweep_page gives it. */
static void add_trial(cJSON *arr, const char *status, double value, int budget, const char *cfg) {
  cJSON *t = cJSON_CreateObject();
  cJSON_AddStringToObject(t, "status", status);
  if (value > 0)
    cJSON_AddNumberToObject(t, "value", value);
  else
    cJSON_AddNullToObject(t, "value");
  cJSON_AddNumberToObject(t, "steps_budget", budget);
  cJSON_AddStringToObject(t, "config", cfg);
  cJSON_AddItemToArray(arr, t);
}

/* A deterministic noise in [-1, 1]. */
static double noise(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return ((*state >> 8) & 0xffff) / 32767.5 - 1.0;
}

/* 36 trials: "a" (1, 2, 3) sets the step time (100, 120, 150 ms), "b" (x, y, z) does
 * nothing; 2 % noise. Every (a, b) pair appears 4 times, as a grid search would run it. */
static cJSON *synthetic(void) {
  cJSON *arr = cJSON_CreateArray();
  const double base[] = {100, 120, 150};
  const char *bs[] = {"x", "y", "z"};
  unsigned st = 7;
  add_trial(arr, "ok", 125, 20, "{}");
  for (int rep = 0; rep < 4; rep++)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"a\":%d,\"b\":\"%s\"}", a + 1, bs[b]);
        add_trial(arr, "ok", base[a] * (1 + 0.02 * noise(&st)), 20, cfg);
      }
  return arr;
}

TEST(the_parameter_that_matters_leads) {
  cJSON *arr = synthetic();
  importance_result r;
  CHECK_INT(importance_compute(arr, &r), 0);
  CHECK_INT(r.n, 2);
  CHECK_INT(r.n_trials, 37);
  CHECK_INT(r.n_failed, 0);
  if (r.n == 2) {
    CHECK_STR(r.p[0].name, "a");
    CHECK(r.p[0].explained > 0.9);
    CHECK(r.p[0].share > 0.95);
    CHECK_INT(r.p[0].levels, 4); /* 1, 2, 3 and the baseline's default */
    CHECK_STR(r.p[1].name, "b");
    CHECK(r.p[1].explained < 0.02);
  }
  cJSON *j = importance_json(&r);
  CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "params"), 0), "name")
                ->valuestring,
            "a");
  cJSON_Delete(j);
  importance_free(&r);
  cJSON_Delete(arr);
}

TEST(ooms_make_their_parameter_matter) {
  /* "mem" decides OOM or not; "b" does nothing; step times are equal when they run. */
  cJSON *arr = cJSON_CreateArray();
  unsigned st = 3;
  for (int rep = 0; rep < 6; rep++)
    for (int b = 0; b < 2; b++) {
      char cfg[64];
      snprintf(cfg, sizeof cfg, "{\"mem\":0.75,\"b\":%s}", b ? "true" : "false");
      add_trial(arr, "ok", 100 * (1 + 0.01 * noise(&st)), 20, cfg);
      snprintf(cfg, sizeof cfg, "{\"mem\":0.95,\"b\":%s}", b ? "true" : "false");
      add_trial(arr, "oom", 0, 20, cfg);
    }
  importance_result r;
  CHECK_INT(importance_compute(arr, &r), 0);
  CHECK_INT(r.n_failed, 12);
  CHECK_STR(r.n > 0 ? r.p[0].name : NULL, "mem");
  CHECK(r.n > 0 && r.p[0].explained > 0.9);
  CHECK(r.n > 1 && r.p[1].explained < 0.05);
  importance_free(&r);
  cJSON_Delete(arr);
}

TEST(crashes_and_short_rungs_are_left_out) {
  cJSON *arr = synthetic();
  /* A crash and a short halving rung that would make "b" look important if scored. */
  for (int i = 0; i < 6; i++) {
    add_trial(arr, "crash", 0, 20, "{\"a\":1,\"b\":\"z\"}");
    add_trial(arr, "ok", 900, 5, "{\"a\":1,\"b\":\"z\"}");
    add_trial(arr, "lost", 0, 20, "{\"a\":1,\"b\":\"z\"}");
  }
  importance_result r;
  CHECK_INT(importance_compute(arr, &r), 0);
  CHECK_INT(r.n_trials, 37);
  CHECK(r.n == 2 && strcmp(r.p[0].name, "a") == 0 && r.p[1].explained < 0.02);
  importance_free(&r);
  cJSON_Delete(arr);
}

TEST(too_few_trials_say_so) {
  cJSON *arr = cJSON_CreateArray();
  add_trial(arr, "ok", 100, 20, "{}");
  add_trial(arr, "ok", 90, 20, "{\"a\":1}");
  importance_result r;
  CHECK_INT(importance_compute(arr, &r), -1);
  importance_free(&r);
  cJSON_Delete(arr);
  arr = cJSON_CreateArray();
  importance_result e;
  CHECK_INT(importance_compute(arr, &e), -1);
  CHECK_INT(e.n, 0);
  importance_free(&e);
  cJSON_Delete(arr);
}

TEST(value_text_for_people) {
  cJSON *c =
      cJSON_Parse("{\"x_bytes\":536870912,\"s\":\"8\",\"f\":0.85,\"b\":true,\"n_bytes\":10}");
  char *v;
  CHECK_STR(v = importance_value_text(c, "x_bytes"), "512MiB");
  free(v);
  CHECK_STR(v = importance_value_text(c, "s"), "8");
  free(v);
  CHECK_STR(v = importance_value_text(c, "f"), "0.85");
  free(v);
  CHECK_STR(v = importance_value_text(c, "b"), "true");
  free(v);
  CHECK_STR(v = importance_value_text(c, "n_bytes"), "10");
  free(v);
  CHECK(importance_value_text(c, "absent") == NULL);
  cJSON_Delete(c);
}
