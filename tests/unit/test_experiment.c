/* Unit tests for src/luahost/experiment.c and lua/dsl.lua: experiment texts loaded as strings with
 * made-up paths, the C struct they produce, and the exact "path:line: message" a user reads
 * for each kind of mistake. Every case ends with no live Lua refs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "experiment.h"
#include "lhost.h"
#include "test.h"

/* The first three lines of a valid experiment; what a case adds starts on line 4. */
#define HEAD                                     \
  "return experiment {\n"                        \
  "  command = { \"python3\", \"train.py\" },\n" \
  "  metric = { json = \"step_ms\" },\n"

static lhost *host(void) {
  lhost *h = NULL;
  char *err = NULL;
  if (lhost_new(&h, &err) != 0) {
    fprintf(stderr, "lhost_new: %s\n", err ? err : "?");
    free(err);
    return NULL;
  }
  return h;
}

/* Loads TEXT as PATH and expects success; the caller frees E and H. */
static experiment *load_ok(lhost *h, const char *path, const char *text) {
  experiment *e = NULL;
  char *err = NULL;
  int rc = experiment_load(h, path, text, &e, &err);
  if (rc != 0) fprintf(stderr, "unexpected error: %s\n", err ? err : "?");
  CHECK_INT(rc, 0);
  CHECK(e != NULL);
  free(err);
  return e;
}

/* Loads TEXT as PATH, expects FT_EINPUT with exactly WANT, and no ref left behind. */
static void expect_error(const char *path, const char *text, const char *want) {
  lhost *h = host();
  if (!h) {
    CHECK(0);
    return;
  }
  experiment *e = NULL;
  char *err = NULL;
  int rc = experiment_load(h, path, text, &e, &err);
  CHECK_INT(rc, FT_EINPUT);
  CHECK(e == NULL);
  CHECK_STR(err, want);
  free(err);
  experiment_free(e);
  CHECK_LHOST_END(h);
}

static void done(lhost *h, experiment *e) {
  experiment_free(e);
  CHECK_LHOST_END(h);
}

TEST(full_example) {
  lhost *h = host();
  experiment *e =
      load_ok(h, "experiments/llama.lua",
              "-- a comment\n"
              "return experiment {\n"
              "  name = \"llama2-7b-fsdp\",\n"
              "  model = \"llama2-7b\",\n"
              "  hardware = \"8xH100\",\n"
              "  command = { \"python3\", \"train.py\", \"--steps\", \"{steps}\", \"--bs\", 8 },\n"
              "  env = { PYTHONUNBUFFERED = \"1\", OMP_NUM_THREADS = 4 },\n"
              "  metric = { json = \"step_time_ms\", skip = 3, reduce = \"mean\", unit = \"s\" },\n"
              "  flags = {\n"
              "    xla_gpu_enable_latency_hiding_scheduler = bool(),\n"
              "    xla_gpu_all_gather_combine_threshold_bytes = pow2(\"1MiB\", \"8GiB\"),\n"
              "  },\n"
              "  fixed_flags = { xla_gpu_enable_triton_gemm = false },\n"
              "  vars = {\n"
              "    XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.70, 0.95, 0.05),\n"
              "    NCCL_PROTO = choice { \"LL,LL128,SIMPLE\", \"SIMPLE\" },\n"
              "  },\n"
              "  strategy = random { },\n"
              "  budget = { trials = 100, hours = 8, steps = 50 },\n"
              "  parallel = 2, gpus_per_trial = 4,\n"
              "  timeout = \"20m\", grace = 5, seed = 7,\n"
              "  oom_patterns = { \"CUDA out of memory\" },\n"
              "  invalid_patterns = { \"bad flag\", \"refused\" },\n"
              "  workdir = \"../src\",\n"
              "}\n");
  if (!e) return;
  CHECK_STR(e->path, "experiments/llama.lua");
  CHECK_STR(e->name, "llama2-7b-fsdp");
  CHECK_STR(e->model, "llama2-7b");
  CHECK_STR(e->hardware, "8xH100");
  CHECK_STR(e->command[0], "python3");
  CHECK_STR(e->command[3], "{steps}");
  CHECK_STR(e->command[5], "8");
  CHECK(e->command[6] == NULL);
  CHECK_STR(e->workdir, "experiments/../src");
  CHECK_INT(e->metric, METRIC_JSON);
  CHECK_STR(e->metric_field, "step_time_ms");
  CHECK(e->metric_pattern == NULL);
  CHECK_INT(e->metric_skip, 3);
  CHECK_INT(e->metric_reduce, REDUCE_MEAN);
  CHECK_NEAR(e->metric_scale, 1000, 0);
  CHECK_INT(e->min_steps, 4);
  CHECK_INT(e->budget_trials, 100);
  CHECK_NEAR(e->budget_hours, 8, 0);
  CHECK_INT(e->budget_steps, 50);
  CHECK_INT(e->parallel, 2);
  CHECK_INT(e->gpus_per_trial, 4);
  CHECK_NEAR(e->timeout_s, 1200, 0);
  CHECK_NEAR(e->grace_s, 5, 0);
  CHECK_INT(e->has_seed, 1);
  CHECK_INT(e->seed, 7);
  CHECK_INT(e->n_oom_patterns, 1);
  CHECK_STR(e->oom_patterns[0], "CUDA out of memory");
  CHECK_INT(e->n_invalid_patterns, 2);
  CHECK_STR(e->invalid_patterns[1], "refused");
  CHECK(e->invalid_patterns[2] == NULL);
  CHECK_STR(e->strategy_name, "random");
  CHECK_STR(e->strategy_desc, "random{}");
  CHECK_INT(e->n_params, 4);
  CHECK_NEAR(e->space_size, 2.0 * 14 * 6 * 2, 0);
  CHECK_INT(lhost_live_refs(h), 1); /* the spec; json metrics need no matcher */
  done(h, e);
}

TEST(defaults) {
  lhost *h = host();
  experiment *e = load_ok(h, "dir/sub/my-exp.lua", HEAD "  vars = { A = bool() },\n}\n");
  if (!e) return;
  CHECK_STR(e->name, "my-exp");
  CHECK_STR(e->model, "my-exp");
  CHECK_STR(e->hardware, "auto");
  CHECK(e->workdir == NULL);
  CHECK_INT(e->metric_skip, 0);
  CHECK_INT(e->metric_reduce, REDUCE_MEDIAN);
  CHECK_NEAR(e->metric_scale, 1, 0);
  CHECK_INT(e->min_steps, 1);
  CHECK_INT(e->budget_trials, 20);
  CHECK_NEAR(e->budget_hours, 0, 0);
  CHECK_INT(e->budget_steps, 0);
  CHECK_INT(e->parallel, 1);
  CHECK_INT(e->gpus_per_trial, 0);
  CHECK_NEAR(e->timeout_s, 0, 0);
  CHECK_NEAR(e->grace_s, 10, 0);
  CHECK_INT(e->has_seed, 0);
  CHECK_INT(e->n_oom_patterns, 0);
  CHECK(e->oom_patterns != NULL && e->oom_patterns[0] == NULL);
  CHECK_INT(e->n_invalid_patterns, 0);
  CHECK_STR(e->strategy_name, "random");
  CHECK_INT(e->n_params, 1);
  CHECK_NEAR(e->space_size, 2, 0);
  done(h, e);
}

TEST(hash_is_fnv1a) {
  lhost *h = host();
  const char *text = HEAD "  vars = { A = bool() },\n}\n";
  experiment *e = load_ok(h, "x.lua", text);
  if (!e) return;
  uint64_t v = 1469598103934665603ULL;
  for (const char *p = text; *p; p++) v = (v ^ (unsigned char)*p) * 1099511628211ULL;
  char want[17];
  snprintf(want, sizeof want, "%016llx", (unsigned long long)v);
  CHECK_STR(e->hash, want);
  CHECK_INT(strlen(e->hash), 16);
  CHECK_STR(e->text, text);
  done(h, e);
}

TEST(reads_file) {
  char path[] = "/tmp/ft_exp_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  const char *text = HEAD "  flags = { xla_gpu_autotune_level = int(1, 10, 3) },\n}\n";
  CHECK_INT(write(fd, text, strlen(text)), (long long)strlen(text));
  close(fd);
  lhost *h = host();
  experiment *e = load_ok(h, path, NULL);
  unlink(path);
  if (!e) return;
  CHECK_STR(e->text, text);
  CHECK_NEAR(e->space_size, 4, 0);
  done(h, e);
}

TEST(missing_file) {
  lhost *h = host();
  experiment *e = NULL;
  char *err = NULL;
  CHECK_INT(experiment_load(h, "/nonexistent/x.lua", NULL, &e, &err), FT_EINPUT);
  CHECK_STR(err, "cannot read /nonexistent/x.lua: No such file or directory");
  free(err);
  CHECK_LHOST_END(h);
}

TEST(pattern_metric_matches) {
  lhost *h = host();
  experiment *e = load_ok(h, "p.lua",
                          "return experiment {\n"
                          "  command = { \"./bench\" },\n"
                          "  metric = { pattern = \"step %d+: ([%d.]+) ms\", skip = 2 },\n"
                          "  vars = { A = bool() },\n"
                          "}\n");
  if (!e) return;
  CHECK_INT(e->metric, METRIC_PATTERN);
  CHECK_STR(e->metric_pattern, "step %d+: ([%d.]+) ms");
  CHECK_INT(e->min_steps, 3);
  CHECK_INT(lhost_live_refs(h), 2); /* spec and matcher */
  metric_spec m = experiment_metric(e);
  CHECK_INT(m.kind, METRIC_PATTERN);
  CHECK(m.match != NULL);
  double v = 0;
  const char *line = "step 12: 41.25 ms (loss 2.1)";
  CHECK_INT(m.match(m.match_ctx, line, strlen(line), &v), 1);
  CHECK_NEAR(v, 41.25, 1e-12);
  /* LEN is honoured: the same bytes cut before " ms" no longer match. */
  CHECK_INT(m.match(m.match_ctx, line, 14, &v), 0);
  CHECK_INT(m.match(m.match_ctx, "loss 2.1", 8, &v), 0);
  /* A capture that is not a number is no step time. */
  const char *dots = "step 1: ... ms";
  CHECK_INT(m.match(m.match_ctx, dots, strlen(dots), &v), 0);
  /* Embedded NULs do not cut the line short for Lua. */
  const char bin[] = "x\0step 3: 7 ms";
  CHECK_INT(m.match(m.match_ctx, bin, sizeof bin - 1, &v), 1);
  CHECK_NEAR(v, 7, 0);
  CHECK_INT(lua_gettop(lhost_state(h)), 0);
  done(h, e);
}

TEST(json_metric_spec) {
  lhost *h = host();
  experiment *e = load_ok(h, "j.lua", HEAD "  vars = { A = bool() },\n}\n");
  if (!e) return;
  metric_spec m = experiment_metric(e);
  CHECK_INT(m.kind, METRIC_JSON);
  CHECK_STR(m.field, "step_ms");
  CHECK(m.match == NULL);
  CHECK_NEAR(m.scale, 1, 0);
  done(h, e);
}

TEST(strategy_spec) {
  lhost *h = host();
  experiment *e = load_ok(h, "s.lua", HEAD "  vars = { A = bool() },\n  strategy = \"grid\",\n}\n");
  if (!e) return;
  CHECK_STR(e->strategy_name, "grid");
  CHECK_STR(e->strategy_desc, "grid{}");
  done(h, e);
  h = host();
  e = load_ok(h, "s.lua",
              HEAD "  vars = { A = bool() },\n  strategy = random { note = \"x\", n = 3 },\n}\n");
  if (!e) return;
  CHECK_STR(e->strategy_desc, "random{n=3,note=\"x\"}");
  done(h, e);
}

TEST(err_unknown_key_did_you_mean) {
  expect_error("experiments/x.lua",
               HEAD
               "  vars = { A = bool() },\n"
               "  budget = { trials = 5 },\n"
               "  tiemout = \"20m\",\n"
               "}\n",
               "experiments/x.lua:6: unknown key 'tiemout' (did you mean 'timeout'?)");
}

TEST(err_unknown_key_no_hint) {
  expect_error("x.lua", HEAD "  vars = { A = bool() },\n  colour = 3,\n}\n",
               "x.lua:5: unknown key 'colour'");
}

TEST(err_wrong_type_duration) {
  expect_error("x.lua", HEAD "  vars = { A = bool() },\n  timeout = true,\n}\n",
               "x.lua:5: 'timeout' must be a duration like \"20m\" or a number of seconds, "
               "got boolean");
}

TEST(err_bad_duration_unit) {
  expect_error("x.lua", HEAD "  vars = { A = bool() },\n  grace = \"10 parsecs\",\n}\n",
               "x.lua:5: 'grace': cannot read \"10 parsecs\" as a duration: unknown unit "
               "(use ms, s, m, h or d)");
}

TEST(err_bad_unit_in_pow2) {
  expect_error("x.lua",
               HEAD
               "  flags = {\n"
               "    xla_gpu_enable_latency_hiding_scheduler = bool(),\n"
               "    xla_gpu_all_reduce_combine_threshold_bytes = pow2(\"1MiB\", \"8GB/s\"),\n"
               "  },\n}\n",
               "x.lua:6: pow2(lo, hi): cannot read \"8GB/s\" as a byte size: unknown unit "
               "(use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, PiB or EiB)");
}

TEST(err_empty_space) {
  expect_error("x.lua", HEAD "}\n", "x.lua:1: nothing to search: add `flags` or `vars`");
  expect_error("x.lua", HEAD "  flags = {},\n}\n",
               "x.lua:4: nothing to search: add `flags` or `vars`");
}

TEST(err_string_command) {
  expect_error("x.lua",
               "return experiment {\n"
               "  name = \"n\",\n"
               "  command = \"python3 train.py\",\n"
               "  metric = { json = \"ms\" },\n"
               "  vars = { A = bool() },\n"
               "}\n",
               "x.lua:3: command must be an argv array like { \"python3\", \"train.py\" }, "
               "not a shell string");
}

TEST(err_missing_return) {
  expect_error("x.lua", "experiment {\n  command = { \"a\" },\n}\n\n",
               "x.lua:3: the file must end with `return experiment { ... }`");
  expect_error("x.lua", "local t = { command = { \"a\" } }\nreturn t\n",
               "x.lua:2: the file must end with `return experiment { ... }`");
}

TEST(err_syntax) {
  expect_error("x.lua",
               "return experiment {\n"
               "  command = { \"a\" }\n"
               "  metric = { json = \"ms\" },\n"
               "}\n",
               "x.lua:3: '}' expected (to close '{' at line 1) near 'metric'");
}

TEST(err_runtime) {
  expect_error("x.lua",
               "local cfg = nil\n"
               "return experiment {\n"
               "  command = { \"a\", cfg.script },\n"
               "}\n",
               "x.lua:3: attempt to index a nil value (local 'cfg')");
  expect_error("x.lua", "error(\"no GPUs here\")\n", "x.lua:1: no GPUs here");
}

TEST(err_infinite_loop) {
  expect_error("x.lua", "local n = 0\nwhile true do\n  n = n + 1\nend\n",
               "x.lua:3: instruction budget of 100000000 exceeded");
}

TEST(err_pattern_without_capture) {
  expect_error("x.lua",
               "return experiment {\n"
               "  command = { \"a\" },\n"
               "  metric = { pattern = \"step %d+: [%d.]+ ms\" },\n"
               "  vars = { A = bool() },\n"
               "}\n",
               "x.lua:3: metric.pattern must have exactly one capture, the step time, like "
               "\"step %d+: ([%d.]+) ms\" (it has 0)");
}

TEST(err_pattern_malformed) {
  expect_error("x.lua",
               "return experiment {\n"
               "  command = { \"a\" },\n"
               "  metric = { pattern = \"step ([%d.+) ms\" },\n"
               "  vars = { A = bool() },\n"
               "}\n",
               "x.lua:3: metric.pattern is not a valid Lua pattern: missing ']'");
}

TEST(err_metric_unknown_key) {
  expect_error("x.lua",
               "return experiment {\n"
               "  command = { \"a\" },\n"
               "  metric = {\n"
               "    json = \"ms\",\n"
               "    skp = 3,\n"
               "  },\n"
               "  vars = { A = bool() },\n"
               "}\n",
               "x.lua:5: unknown key 'skp' in metric (did you mean 'skip'?)");
}

TEST(err_metric_json_and_pattern) {
  expect_error("x.lua",
               "return experiment {\n"
               "  command = { \"a\" },\n"
               "  metric = { json = \"ms\", pattern = \"(%d+)\" },\n"
               "  vars = { A = bool() },\n"
               "}\n",
               "x.lua:3: metric takes `json` or `pattern`, not both");
}

TEST(err_budget_trials_one) {
  expect_error("x.lua", HEAD "  vars = { A = bool() },\n  budget = { trials = 1 },\n}\n",
               "x.lua:5: budget.trials must be at least 2: the baseline takes one");
}

TEST(err_env_vars_overlap) {
  expect_error("x.lua",
               HEAD
               "  env = { NCCL_PROTO = \"SIMPLE\" },\n"
               "  vars = { NCCL_PROTO = choice { \"LL\", \"SIMPLE\" } },\n}\n",
               "x.lua:4: 'NCCL_PROTO' is in both `env` and `vars`: keep one");
}

TEST(err_steps_without_budget) {
  expect_error("x.lua",
               "return experiment {\n"
               "  command = { \"python3\", \"train.py\", \"--steps\", \"{steps}\" },\n"
               "  metric = { json = \"ms\" },\n"
               "  vars = { A = bool() },\n"
               "}\n",
               "x.lua:2: command uses {steps} but budget.steps is not set");
}

TEST(err_env_name_in_flags) {
  expect_error("x.lua",
               HEAD "  flags = {\n    NCCL_PROTO = choice { \"LL\", \"SIMPLE\" },\n  },\n}\n",
               "x.lua:5: 'NCCL_PROTO' is an environment variable: move it to `vars`");
}

TEST(err_flag_in_vars) {
  expect_error("x.lua", HEAD "  vars = { xla_gpu_autotune_level = int(0, 4) },\n}\n",
               "x.lua:4: 'xla_gpu_autotune_level' is an XLA flag: move it to `flags`");
}

TEST(err_flag_fixed_and_searched) {
  expect_error("x.lua",
               HEAD
               "  flags = { xla_a = bool() },\n"
               "  fixed_flags = { xla_a = true },\n}\n",
               "x.lua:5: 'xla_a' is in both `flags` and `fixed_flags`: keep one");
}

TEST(err_unknown_strategy) {
  expect_error("x.lua", HEAD "  vars = { A = bool() },\n  strategy = \"randon\",\n}\n",
               "x.lua:5: unknown strategy 'randon' (did you mean 'random'?)");
}

TEST(err_choice_duplicate) {
  expect_error("x.lua",
               HEAD
               "  vars = {\n    A = bool(),\n"
               "    B = choice { \"x\", \"y\", \"x\" },\n  },\n}\n",
               "x.lua:6: choice value 3 repeats \"x\"");
}

TEST(err_constructor_spans_lines) {
  /* A constructor written over several lines reports the line where it starts. */
  expect_error("x.lua", HEAD "  vars = {\n    A = int(\n      10,\n      2),\n  },\n}\n",
               "x.lua:5: int(lo, hi[, step]): lo (10) is greater than hi (2)");
}

TEST(err_single_value_flag) {
  expect_error("x.lua", HEAD "  flags = { xla_a = 3 },\n}\n",
               "x.lua:4: 'xla_a' has a single value: move it to `fixed_flags`, or search it "
               "with bool(), choice { ... }, int(lo, hi), range(lo, hi, step) or pow2(lo, hi)");
}

TEST(err_parallel_zero) {
  expect_error("x.lua", HEAD "  vars = { A = bool() },\n  parallel = 0,\n}\n",
               "x.lua:5: 'parallel' must be at least 1, got 0");
}

TEST(err_missing_command) {
  expect_error("x.lua",
               "return experiment {\n  metric = { json = \"ms\" },\n  vars = { A = bool() },\n}\n",
               "x.lua:1: command is required: command = { \"python3\", \"train.py\" }");
}

/* A flag of an imported jaxlib list is accepted by the load it is handed to, and by no other:
 * the names go with the call, not into the state. */
TEST(imported_flags_are_handed_to_one_load) {
  lhost *h = host();
  if (!h) {
    CHECK(0);
    return;
  }
  const char *text =
      "return experiment {\n"
      "  command = { \"python3\", \"train.py\" },\n"
      "  metric = { json = \"step_ms\" },\n"
      "  flags = { xla_gpu_made_up_for_the_test = bool() },\n"
      "}\n";
  const char *const names[] = {"xla_gpu_made_up_for_the_test"};
  experiment *e = NULL;
  char *err = NULL;
  CHECK_INT(experiment_load_with(h, "/tmp/imp.lua", text, names, 1, &e, &err), 0);
  CHECK(e != NULL);
  experiment_free(e);
  e = NULL;
  free(err);
  err = NULL;
  CHECK_INT(experiment_load(h, "/tmp/imp.lua", text, &e, &err), FT_EINPUT);
  CHECK(err && strstr(err, "/tmp/imp.lua:4: unknown XLA flag 'xla_gpu_made_up_for_the_test'"));
  CHECK(e == NULL);
  free(err);
  CHECK_LHOST_END(h);
}
