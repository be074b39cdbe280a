/* Unit tests for src/luahost/strategy.c with lua/host.lua behind it: experiments loaded through
 * experiment_load, proposals asked and told, the baseline rendered, and user strategy
 * files in /tmp that loop forever, fail in new() or propose duplicates. Every case ends
 * with no live Lua refs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "experiment.h"
#include "lhost.h"
#include "strategy.h"
#include "test.h"

#define EXP_PATH "/tmp/flagtune_test_strategy_exp.lua"

/* 2 * 2 * 5 * 2 = 40 configurations; `strategy` is on line 13. */
static const char *const EXP_FMT =
    "return experiment {\n"
    "  command = { \"python3\", \"train.py\" },\n"
    "  metric = { json = \"step_ms\" },\n"
    "  env = { PYTHONUNBUFFERED = \"1\" },\n"
    "  flags = {\n"
    "    xla_gpu_enable_latency_hiding_scheduler = bool(),\n"
    "    xla_gpu_all_gather_combine_threshold_bytes = pow2(\"4GiB\", \"8GiB\"),\n"
    "  },\n"
    "  vars = {\n"
    "    XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05),\n"
    "    NCCL_PROTO = choice { \"LL,LL128,SIMPLE\", \"SIMPLE\" },\n"
    "  },\n"
    "  strategy = %s,\n"
    "  budget = { trials = 30, steps = 20 },\n"
    "}\n";

typedef struct {
  lhost *h;
  experiment *e;
  strategy *s;
  char *err;
  char file[64]; /* a user strategy file to remove, or "" */
} fixture;

/* Writes TEXT to a fresh /tmp/ft_strategy_XXXXXX.lua whose name lands in F->file. */
static void write_strategy(fixture *f, const char *text) {
  snprintf(f->file, sizeof f->file, "/tmp/ft_strategy_XXXXXX.lua");
  int fd = mkstemps(f->file, 4);
  CHECK(fd >= 0);
  if (fd < 0) return;
  FILE *fp = fdopen(fd, "w");
  fputs(text, fp);
  fclose(fp);
}

/* Loads the experiment with STRATEGY (Lua text) and creates its strategy; returns
 * strategy_new's code. */
static int setup(fixture *f, const char *strat, int64_t seed, const trial_record *hist, int n) {
  CHECK_INT(lhost_new(&f->h, &f->err), 0);
  char *text = xasprintf(EXP_FMT, strat);
  int rc = experiment_load(f->h, EXP_PATH, text, &f->e, &f->err);
  free(text);
  if (rc != 0) fprintf(stderr, "experiment_load: %s\n", f->err ? f->err : "?");
  CHECK_INT(rc, 0);
  if (rc != 0) return rc;
  return strategy_new(f->e, seed, hist, n, &f->s, &f->err);
}

static int setup_file(fixture *f, const char *lua_text) {
  write_strategy(f, lua_text);
  char *spec = xasprintf("strategy_file(\"%s\")", f->file);
  int rc = setup(f, spec, 1, NULL, 0);
  free(spec);
  return rc;
}

static void teardown(fixture *f) {
  strategy_free(f->s);
  experiment_free(f->e);
  CHECK_LHOST_END(f->h);
  free(f->err);
  if (f->file[0]) unlink(f->file);
  memset(f, 0, sizeof *f);
}

static void free_proposals(proposal *ps, int n) {
  for (int i = 0; i < n; i++) proposal_clear(&ps[i]);
  free(ps);
}

static int starts_with(const char *s, const char *prefix) {
  return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

TEST(ask_tell_render) {
  fixture f = {0};
  CHECK_INT(setup(&f, "random {}", 7, NULL, 0), 0);
  proposal *ps = NULL;
  int n = 0;
  CHECK_INT(strategy_ask(f.s, 5, &ps, &n, &f.err), 0);
  CHECK_INT(n, 5);
  for (int i = 0; i < n; i++) {
    CHECK(ps[i].config_json[0] == '{' && strcmp(ps[i].config_json, "{}") != 0);
    CHECK(strstr(ps[i].label, "enable_latency_hiding_scheduler=") != NULL);
    CHECK_INT(ps[i].steps, 0);
    /* PYTHONUNBUFFERED + 4 searched settings, flags before env */
    CHECK_INT(ps[i].n_settings, 5);
    CHECK_INT(ps[i].settings[0].target, TARGET_XLA);
    CHECK_STR(ps[i].settings[0].name, "xla_gpu_all_gather_combine_threshold_bytes");
    CHECK(strcmp(ps[i].settings[0].value, "4294967296") == 0 ||
          strcmp(ps[i].settings[0].value, "8589934592") == 0);
    CHECK_INT(ps[i].settings[2].target, TARGET_ENV);
    CHECK_STR(ps[i].settings[2].name, "PYTHONUNBUFFERED");
    for (int j = 0; j < i; j++) CHECK(strcmp(ps[i].config_json, ps[j].config_json) != 0);
    double steps[] = {101.0, 100.0, 99.5};
    trial_record r = {.config_json = ps[i].config_json,
                      .status = i % 2 ? OUTCOME_OOM : OUTCOME_OK,
                      .value = i % 2 ? NAN : 100.0 + i,
                      .steps = steps,
                      .n_steps = 3,
                      .steps_budget = 20,
                      .number = i + 1};
    CHECK_INT(strategy_tell(f.s, &r, &f.err), 0);
  }
  free_proposals(ps, n);
  CHECK_INT(strategy_done(f.s), 0);

  proposal base;
  CHECK_INT(strategy_render(f.s, "{}", &base, &f.err), 0);
  CHECK_STR(base.config_json, "{}");
  CHECK_STR(base.label, "baseline");
  CHECK_INT(base.n_settings, 1);
  CHECK_STR(base.settings[0].name, "PYTHONUNBUFFERED");
  CHECK_STR(base.settings[0].value, "1");
  proposal_clear(&base);

  proposal p;
  CHECK_INT(strategy_render(f.s,
                            "{\"XLA_PYTHON_CLIENT_MEM_FRACTION\":0.95,\"NCCL_PROTO\":\"SIMPLE\","
                            "\"xla_gpu_enable_latency_hiding_scheduler\":true,"
                            "\"xla_gpu_all_gather_combine_threshold_bytes\":8589934592}",
                            &p, &f.err),
            0);
  CHECK_STR(p.label,
            "all_gather_combine_threshold_bytes=8GiB "
            "enable_latency_hiding_scheduler=true NCCL_PROTO=SIMPLE "
            "XLA_PYTHON_CLIENT_MEM_FRACTION=0.95");
  CHECK_STR(p.settings[4].value, "0.95");
  proposal_clear(&p);

  CHECK_INT(strategy_render(f.s, "{\"xla_gone\":1}", &p, &f.err), FT_EINPUT);
  CHECK(f.err && strstr(f.err, "no longer fits") != NULL);
  teardown(&f);
}

TEST(same_seed_same_proposals) {
  char *first[2] = {NULL, NULL};
  for (int round = 0; round < 2; round++) {
    fixture f = {0};
    CHECK_INT(setup(&f, "grid { shuffle = true }", 99, NULL, 0), 0);
    proposal *ps = NULL;
    int n = 0;
    CHECK_INT(strategy_ask(f.s, 3, &ps, &n, &f.err), 0);
    CHECK_INT(n, 3);
    if (n == 3)
      first[round] = xasprintf("%s %s %s", ps[0].config_json, ps[1].config_json, ps[2].config_json);
    free_proposals(ps, n);
    teardown(&f);
  }
  CHECK_STR(first[0], first[1]);
  free(first[0]);
  free(first[1]);
}

TEST(history_is_skipped_and_grid_exhausts) {
  /* Two trials already ran (one ok, one oom) plus the baseline. */
  const char *a =
      "{\"NCCL_PROTO\":\"SIMPLE\",\"XLA_PYTHON_CLIENT_MEM_FRACTION\":0.75,"
      "\"xla_gpu_all_gather_combine_threshold_bytes\":4294967296,"
      "\"xla_gpu_enable_latency_hiding_scheduler\":false}";
  const char *b =
      "{\"NCCL_PROTO\":\"SIMPLE\",\"XLA_PYTHON_CLIENT_MEM_FRACTION\":0.8,"
      "\"xla_gpu_all_gather_combine_threshold_bytes\":4294967296,"
      "\"xla_gpu_enable_latency_hiding_scheduler\":false}";
  trial_record hist[3] = {
      {.config_json = "{}", .status = OUTCOME_OK, .value = 120.0, .steps_budget = 20, .number = 1},
      {.config_json = a, .status = OUTCOME_OK, .value = 110.0, .steps_budget = 20, .number = 2},
      {.config_json = b, .status = OUTCOME_OOM, .value = NAN, .steps_budget = 20, .number = 3},
  };
  fixture f = {0};
  CHECK_INT(setup(&f, "grid {}", 1, hist, 3), 0);
  int total = 0, rounds = 0;
  while (!strategy_done(f.s) && rounds++ < 100) {
    proposal *ps = NULL;
    int n = 0;
    CHECK_INT(strategy_ask(f.s, 7, &ps, &n, &f.err), 0);
    for (int i = 0; i < n; i++) {
      CHECK(strcmp(ps[i].config_json, a) != 0);
      CHECK(strcmp(ps[i].config_json, b) != 0);
    }
    total += n;
    free_proposals(ps, n);
    if (n == 0) break;
  }
  CHECK_INT(total, 38);
  CHECK_INT(strategy_done(f.s), 1);
  teardown(&f);
}

TEST(grid_too_large_is_input_error) {
  fixture f = {0};
  CHECK_INT(setup(&f, "grid { max = 10 }", 1, NULL, 0), FT_EINPUT);
  CHECK(f.s == NULL);
  CHECK(starts_with(f.err, EXP_PATH ":13: strategy 'grid': the space has 40 configurations"));
  teardown(&f);
}

TEST(endless_loop_ends_with_line) {
  fixture f = {0};
  CHECK_INT(setup_file(&f,
                       "local M = {}\n"
                       "function M.new(space) return setmetatable({}, { __index = M }) end\n"
                       "function M:ask(n)\n"
                       "  local i = 0\n"
                       "  while true do i = i + 1 end\n"
                       "end\n"
                       "return M\n"),
            0);
  proposal *ps = NULL;
  int n = 0;
  CHECK_INT(strategy_ask(f.s, 1, &ps, &n, &f.err), FT_EINPUT);
  CHECK_INT(n, 0);
  char *want = xasprintf(
      "%s:5: instruction budget of 50000000 exceeded in ask() (one call of a "
      "strategy may run 50000000 Lua instructions, about a second: bound its "
      "loops, return fewer proposals, or keep its model smaller)",
      f.file);
  CHECK_STR(f.err, want);
  free(want);
  teardown(&f);
}

/* A strategy loaded by name (search/NAME.lua, here overridden through FLAGTUNE_SEARCH_PATH)
 * (random, overridden) that runs out of budget: the message names the strategy and the call, says
 * it is flagtune's bug and where it ran out, instead of the bare line of lua/host.lua. */
TEST(budget_in_named_strategy_names_it) {
  char dir[] = "/tmp/ft_search_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char *path = xasprintf("%s/random.lua", dir);
  FILE *fp = fopen(path, "w");
  CHECK(fp != NULL);
  if (!fp) return;
  fputs(
      "local M = {}\n"
      "function M.new() return setmetatable({}, { __index = M }) end\n"
      "function M:ask(n)\n"
      "  while true do end\n"
      "end\n"
      "return M\n",
      fp);
  fclose(fp);
  setenv("FLAGTUNE_SEARCH_PATH", dir, 1);
  fixture f = {0};
  CHECK_INT(setup(&f, "random {}", 1, NULL, 0), 0);
  proposal *ps = NULL;
  int n = 0;
  if (f.s) CHECK(strategy_ask(f.s, 1, &ps, &n, &f.err) != 0);
  char *want = xasprintf(
      "strategy 'random': ask() ran past its instruction budget of 50000000 "
      "(at %s:4): a bug in flagtune's random{}",
      path);
  CHECK(starts_with(f.err, want));
  if (!starts_with(f.err, want)) fprintf(stderr, "got: %s\nwant: %s\n", f.err, want);
  free(want);
  teardown(&f);
  unsetenv("FLAGTUNE_SEARCH_PATH");
  unlink(path);
  rmdir(dir);
  free(path);
}

/* The budget runs out inside flagtune's own space code, called from the user's loop in
 * new(): the error still names the user's line. */
TEST(endless_loop_in_new_names_user_line) {
  fixture f = {0};
  CHECK_INT(setup_file(&f,
                       "local M = {}\n"
                       "function M.new(space)\n"
                       "  while true do\n"
                       "    space:sample(require('rng').new(1))\n"
                       "  end\n"
                       "end\n"
                       "return M\n"),
            FT_EINPUT);
  char *want = xasprintf("%s:4: instruction budget of 50000000 exceeded in new() (", f.file);
  CHECK(starts_with(f.err, want));
  if (!starts_with(f.err, want)) fprintf(stderr, "got: %s\nwant: %s\n", f.err, want);
  free(want);
  teardown(&f);
}

/* new() replays its whole history: its budget grows with it (STRATEGY_BUDGET_PER_HISTORY),
 * so a resume of 30,000 trials is not cut off where one of 3,000 would pass. The strategy
 * spends about 3,000 instructions a history trial: 90 M in all, past the flat 50 M. An
 * endless new() still ends (endless_loop_in_new_names_user_line). */
#define FULL_CONFIG                                                    \
  "{\"NCCL_PROTO\":\"SIMPLE\",\"XLA_PYTHON_CLIENT_MEM_FRACTION\":0.8," \
  "\"xla_gpu_all_gather_combine_threshold_bytes\":4294967296,"         \
  "\"xla_gpu_enable_latency_hiding_scheduler\":true}"
TEST(new_budget_grows_with_the_history) {
  fixture f = {0};
  write_strategy(&f,
                 "local M = {}\n"
                 "function M.new(space, options, history)\n"
                 "  local n = 0\n"
                 "  for _, h in ipairs(history) do\n"
                 "    for k = 1, 1000 do n = n + k end\n"
                 "  end\n"
                 "  return { n = n, ask = function() return {} end }\n"
                 "end\n"
                 "return M\n");
  enum { N = 30000 };
  trial_record *hist = xcalloc(N, sizeof *hist);
  for (int i = 0; i < N; i++)
    hist[i] = (trial_record){
        .number = i + 1, .status = OUTCOME_OK, .value = 10, .config_json = FULL_CONFIG};
  char *spec = xasprintf("strategy_file(\"%s\")", f.file);
  int rc = setup(&f, spec, 1, hist, N);
  free(spec);
  CHECK_INT(rc, 0);
  if (rc != 0) fprintf(stderr, "%s\n", f.err ? f.err : "?");
  free(hist);
  teardown(&f);
}

TEST(error_in_new_keeps_location) {
  fixture f = {0};
  CHECK_INT(setup_file(&f,
                       "local M = {}\n"
                       "function M.new(space, options)\n"
                       "  error(\"no model for \" .. #space.params .. \" params\")\n"
                       "end\n"
                       "return M\n"),
            FT_EINPUT);
  char *want = xasprintf("%s:3: no model for 4 params", f.file);
  CHECK_STR(f.err, want);
  free(want);
  CHECK(f.s == NULL);
  teardown(&f);
}

TEST(duplicate_proposal_refused) {
  fixture f = {0};
  CHECK_INT(setup_file(&f,
                       "local M = {}\n"
                       "function M.new(space) return setmetatable({ sp = space }, "
                       "{ __index = M }) end\n"
                       "function M:ask(n) return { self.sp:at(1) } end\n"
                       "return M\n"),
            0);
  proposal *ps = NULL;
  int n = 0;
  CHECK_INT(strategy_ask(f.s, 2, &ps, &n, &f.err), 0);
  CHECK_INT(n, 1);
  free_proposals(ps, n);
  CHECK_INT(strategy_ask(f.s, 2, &ps, &n, &f.err), FT_EINPUT);
  CHECK_INT(n, 0);
  CHECK(starts_with(f.err, "strategy '"));
  CHECK(f.err && strstr(f.err, "' proposed configuration {\"NCCL_PROTO\":") != NULL);
  CHECK(f.err && strstr(f.err, "} twice") != NULL);
  teardown(&f);
}

/* Loads the experiment TEXT (strategy random) and creates its strategy. */
static int setup_text(fixture *f, const char *text) {
  CHECK_INT(lhost_new(&f->h, &f->err), 0);
  int rc = experiment_load(f->h, EXP_PATH, text, &f->e, &f->err);
  if (rc != 0) fprintf(stderr, "experiment_load: %s\n", f->err ? f->err : "?");
  if (rc == 0) rc = strategy_new(f->e, 1, NULL, 0, &f->s, &f->err);
  return rc;
}

static const setting *find_setting(const setting *s, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(s[i].name, name) == 0) return &s[i];
  return NULL;
}

/* Auto PGLE: a trial that turns JAX_ENABLE_PGLE on leaves its profiled runs and the
 * recompile out of its value; the proposal says how many (C knows no PGLE variable). */
TEST(proposal_carries_auto_pgle_skip) {
  fixture f = {0};
  CHECK_INT(setup_text(&f,
                       "return experiment {\n"
                       "  command = { \"python3\", \"train.py\" },\n"
                       "  metric = { json = \"step_ms\", skip = 2 },\n"
                       "  vars = { JAX_ENABLE_PGLE = choice { \"true\", \"false\" },\n"
                       "           JAX_PGLE_PROFILING_RUNS = choice { 1, 5 } },\n"
                       "  strategy = random {},\n"
                       "}\n"),
            0);
  proposal p;
  CHECK_INT(strategy_render(f.s, "{}", &p, &f.err), 0);
  CHECK_INT(p.skip, 2); /* the baseline does not run PGLE */
  CHECK(p.profile_suffix == NULL);
  proposal_clear(&p);
  CHECK_INT(strategy_render(f.s, "{\"JAX_ENABLE_PGLE\":\"true\",\"JAX_PGLE_PROFILING_RUNS\":5}", &p,
                            &f.err),
            0);
  CHECK_INT(p.skip, 2 + 5 + 1);
  proposal_clear(&p);
  CHECK_INT(strategy_render(f.s, "{\"JAX_ENABLE_PGLE\":\"false\",\"JAX_PGLE_PROFILING_RUNS\":5}",
                            &p, &f.err),
            0);
  CHECK_INT(p.skip, 2);
  proposal_clear(&p);
  teardown(&f);
}

/* Manual PGLE, nsys route: the proposal carries the profile run's settings (scheduler off,
 * collectives synchronous) and the measured run reads the profile at the placeholder path. */
TEST(proposal_carries_manual_pgle_profile_run) {
  fixture f = {0};
  CHECK_INT(setup_text(&f,
                       "return experiment {\n"
                       "  command = { \"python3\", \"train.py\" },\n"
                       "  metric = { json = \"step_ms\" },\n"
                       "  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },\n"
                       "  pgle = { mode = \"manual\", route = \"nsys\" },\n"
                       "  strategy = random {},\n"
                       "}\n"),
            0);
  proposal p;
  CHECK_INT(strategy_render(f.s, "{\"xla_gpu_enable_latency_hiding_scheduler\":true}", &p, &f.err),
            0);
  CHECK_STR(p.profile_suffix, ".pgle.pbtxt");
  const setting *path =
      find_setting(p.settings, p.n_settings, "xla_gpu_pgle_profile_file_or_directory_path");
  CHECK(path && strcmp(path->value, PROPOSAL_PROFILE_PATH) == 0);
  const setting *lhs =
      find_setting(p.profile, p.n_profile, "xla_gpu_enable_latency_hiding_scheduler");
  CHECK(lhs && strcmp(lhs->value, "false") == 0);
  const setting *sync = find_setting(p.profile, p.n_profile, "xla_gpu_disable_async_collectives");
  CHECK(sync && strstr(sync->value, "allreduce") != NULL);
  CHECK(find_setting(p.profile, p.n_profile, "xla_gpu_pgle_profile_file_or_directory_path") ==
        NULL);
  proposal_clear(&p);
  teardown(&f);
}

/* Manual PGLE's jax route: the binary .pb the JAX profiler writes, profiled with the scheduler
 * on and the trial's async collectives kept (jax-ml/jax docs/gpu_performance_tips.md). */
TEST(proposal_carries_jax_route_profile_run) {
  fixture f = {0};
  CHECK_INT(setup_text(&f,
                       "return experiment {\n"
                       "  command = { \"python3\", \"train.py\" },\n"
                       "  metric = { json = \"step_ms\" },\n"
                       "  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },\n"
                       "  pgle = { mode = \"manual\", route = \"jax\" },\n"
                       "  strategy = random {},\n"
                       "}\n"),
            0);
  proposal p;
  CHECK_INT(strategy_render(f.s, "{\"xla_gpu_enable_latency_hiding_scheduler\":false}", &p, &f.err),
            0);
  CHECK_STR(p.profile_suffix, ".pgle.pb");
  const setting *lhs =
      find_setting(p.profile, p.n_profile, "xla_gpu_enable_latency_hiding_scheduler");
  CHECK(lhs && strcmp(lhs->value, "true") == 0);
  CHECK(find_setting(p.profile, p.n_profile, "xla_gpu_disable_async_collectives") == NULL);
  proposal_clear(&p);
  teardown(&f);
}

/* Both memory fractions kill a jaxlib >= 0.4.32 job (jax-ml/jax jaxlib/xla_client.py:180-190):
 * a sweep that searches one gives every proposal, the baseline too, the other to unset. */
TEST(proposal_carries_unset_list) {
  fixture f = {0};
  CHECK_INT(setup_text(&f,
                       "return experiment {\n"
                       "  command = { \"python3\", \"train.py\" },\n"
                       "  metric = { json = \"step_ms\" },\n"
                       "  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 } },\n"
                       "  strategy = random {},\n"
                       "}\n"),
            0);
  proposal p;
  CHECK_INT(strategy_render(f.s, "{}", &p, &f.err), 0);
  CHECK(p.unset && p.unset[0] && p.unset[1] == NULL);
  CHECK_STR(p.unset[0], "XLA_PYTHON_CLIENT_MEM_FRACTION");
  proposal_clear(&p);
  CHECK(p.unset == NULL);
  CHECK_INT(strategy_render(f.s, "{\"XLA_CLIENT_MEM_FRACTION\":0.9}", &p, &f.err), 0);
  CHECK_STR(p.unset[0], "XLA_PYTHON_CLIENT_MEM_FRACTION");
  proposal_clear(&p);
  teardown(&f);
}

/* The command line's budget (experiment_override_budget) reaches the strategy as
 * options.budget, handed to strategy_new; the validated table keeps the file's. */
TEST(strategy_sees_the_command_line_budget) {
  fixture f = {0};
  write_strategy(&f,
                 "return { new = function(space, opts)\n"
                 "  local b = opts.budget\n"
                 "  return { ask = function() error(string.format('budget %d %g %d', b.trials,\n"
                 "    b.hours, b.steps), 0) end }\n"
                 "end }\n");
  CHECK_INT(lhost_new(&f.h, &f.err), 0);
  char *spec = xasprintf("strategy_file(\"%s\")", f.file);
  char *text = xasprintf(EXP_FMT, spec);
  CHECK_INT(experiment_load(f.h, EXP_PATH, text, &f.e, &f.err), 0);
  free(text);
  free(spec);
  if (!f.e) {
    teardown(&f);
    return;
  }
  experiment_override_budget(f.e, 7, 1.5);
  CHECK_INT(f.e->budget_trials, 7);
  CHECK_INT(strategy_new(f.e, 1, NULL, 0, &f.s, &f.err), 0);
  proposal *ps = NULL;
  int n = 0;
  CHECK(strategy_ask(f.s, 1, &ps, &n, &f.err) != 0);
  CHECK(f.err && strstr(f.err, "budget 7 1.5 20"));
  /* The file's budget is left as the file gave it. */
  lua_State *L = lhost_state(f.h);
  lhost_push_ref(f.h, f.e->spec_ref);
  lua_getfield(L, -1, "budget");
  lua_getfield(L, -1, "trials");
  CHECK_INT(lua_tointeger(L, -1), 30);
  lua_pop(L, 3);
  free_proposals(ps, n);
  teardown(&f);
}
