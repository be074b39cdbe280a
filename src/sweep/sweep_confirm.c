/* The end of a sweep: the confirmation's plan (which of the fastest measured configurations
 * to re-measure, and the trials it gives back to the search) and its pooled winner, from the
 * stored trials and the strategy's model (src/sweep/confirm.c decides; this wires it to the sweep).
 * docs/ARCHITECTURE.md, "The end of a sweep". Shares sweep_state.h with the scheduler
 * (sweep.c). */
#include <stdlib.h>
#include <string.h>

#include "confirm.h"
#include "diag.h"
#include "metric.h"
#include "sweep_state.h"

/* The strategy's model estimates (strategy_estimate) of CONFIGS, as confirm reads them;
 * NULL after failing the sweep (a malformed answer). Free the array. */
static confirm_estimate *estimates(sweep *sw, const char **configs, int n) {
  confirm_estimate *est = xcalloc((size_t)n + 1, sizeof *est);
  double *mean = xcalloc((size_t)n + 1, sizeof *mean), *sd = xcalloc((size_t)n + 1, sizeof *sd);
  char *err = NULL;
  if (strategy_estimate(sw->strat, configs, n, mean, sd, &err) != 0) {
    sweep_fail(sw, err);
    free(est);
    est = NULL;
  }
  for (int i = 0; est && i < n; i++) est[i] = (confirm_estimate){configs[i], mean[i], sd[i]};
  free(err);
  free(mean);
  free(sd);
  return est;
}

/* The strategy's public recipe (strategy_recipe), or NULL; NULL after failing the sweep
 * (a malformed answer) with *FAILED set. Caller frees. */
static char *recipe_of(sweep *sw, int *failed) {
  char *json = NULL, *err = NULL;
  *failed = strategy_recipe(sw->strat, &json, &err) != 0;
  if (*failed) sweep_fail(sw, err);
  free(err);
  return json;
}

/* How many distinct configurations other than the baseline CONFIGS names (a plan lists each
 * once a round). */
static int distinct_candidates(const char **configs, int n) {
  int distinct = 0;
  for (int i = 0; i < n; i++) {
    int seen = strcmp(configs[i], "{}") == 0;
    for (int k = 0; k < i && !seen; k++) seen = strcmp(configs[k], configs[i]) == 0;
    distinct += !seen;
  }
  return distinct;
}

/* Queues the confirmation trials once the search budget is spent and every search trial
 * has ended (the top candidates are known only then): chosen by the strategy's model
 * estimates of the fastest measured ones when it has a model, and only those whose re-run
 * can still change the answer (src/sweep/confirm.h). The trials the plan does not need go back to
 * the search, which goes on; when it has spent them the plan is made again, until it needs
 * every trial left (or the strategy has nothing more to propose), so the sweep spends its
 * budget exactly, a resumed or extended one too. The rule reads only the stored trials, so a
 * resumed sweep decides as the interrupted one would have from where it stopped. */
void sweep_plan_confirmation(sweep *sw) {
  trial_record *t = NULL;
  const char **configs = NULL, **pool = NULL;
  int n = 0, n_configs = 0, n_pool = 0;
  char *err = NULL;
  int left = budget_left(&sw->bud);
  sw->confirm_planned = 1;
  /* The plan reads values, outcomes and configurations of the trials it can choose from (no
   * step times): not every trial of a long sweep. */
  if (store_trials_load_confirm(sw->db, sw->id, sw->exp->budget_steps,
                                confirm_fastest_needed(sw->exp->confirm_top), NULL, NULL, &t, &n,
                                &err) != 0) {
    sweep_fail(sw, err);
    free(err);
    return;
  }
  confirm_pool(t, n, sw->exp->budget_steps, CONFIRM_POOL_PER_TOP * sw->exp->confirm_top, &pool,
               &n_pool);
  confirm_estimate *est = estimates(sw, pool, n_pool);
  int no_recipe = 0;
  char *recipe = est ? recipe_of(sw, &no_recipe) : NULL;
  if (est && !no_recipe) {
    confirm_plan(t, n, sw->exp->budget_steps, sw->exp->confirm_top, sw->exp->confirm_repeats,
                 CONFIRM_Z, est, n_pool, &configs, &n_configs);
    /* The recipe is re-measured with the others: the winner must be confirmed past it. */
    confirm_add_recipe(t, n, recipe, sw->exp->confirm_repeats, &configs, &n_configs);
  }
  free(est);
  free(pool);
  if (!sw->fail.failed && n_configs < left && !sw->strategy_exhausted) {
    diag_note(
        "flagtune: confirmation: %d of the %d trials left can change the answer; %d go "
        "back to the search",
        n_configs, left, left - n_configs);
    budget_give_back(&sw->bud, left - n_configs);
    sw->confirm_planned = 0;
    free(configs);
    free(recipe); /* after CONFIGS, which may point into it */
    record_free(t, n);
    return;
  }
  /* over what is left, round by round: the baseline, the leader, the recipe (confirm_add_recipe),
   * then the closest contenders */
  if (n_configs > left) n_configs = left > 0 ? left : 0;
  for (int i = 0; i < n_configs && !sw->fail.failed; i++) {
    proposal p;
    if (strategy_render(sw->strat, configs[i], &p, &err) != 0) {
      sweep_fail(sw, err);
      break;
    }
    sweep_queue_push(&sw->queue, &p, ROLE_CONFIRM, 0);
  }
  int n_cand = distinct_candidates(configs, n_configs), n_base = 0;
  for (int i = 0; i < n_configs; i++) n_base += strcmp(configs[i], "{}") == 0;
  if (n_configs > 0)
    diag_note(
        "flagtune: confirming: %d trial%s: %d re-measurement%s of the baseline and %d of %d "
        "candidate%s",
        n_configs, n_configs == 1 ? "" : "s", n_base, n_base == 1 ? "" : "s", n_configs - n_base,
        n_cand, n_cand == 1 ? "" : "s");
  free(err);
  free(configs);
  free(recipe);
  record_free(t, n);
}

/* The trials whose steps the pooled winner reads: the baseline's and those of every
 * configuration that was confirmed (confirm_winner pools all trials of each). */
static void want_pooled_steps(const trial_record *t, int n, char *want, void *ud) {
  (void)ud;
  int *confirm = xmalloc(sizeof(int) * (size_t)(n + 1)), n_confirm = 0;
  for (int k = 0; k < n; k++)
    if (t[k].role == ROLE_CONFIRM) confirm[n_confirm++] = k;
  for (int i = 0; i < n; i++) {
    want[i] = strcmp(t[i].config_json, "{}") == 0;
    for (int c = 0; c < n_confirm && !want[i]; c++)
      want[i] = strcmp(t[confirm[c]].config_json, t[i].config_json) == 0;
  }
  free(confirm);
}

/* Records the pooled winner of the confirmation phase. */
void sweep_choose_winner(sweep *sw) {
  trial_record *t = NULL;
  int n = 0;
  char *err = NULL;
  store_winner w = {0};
  const char **cand = NULL;
  confirm_estimate *est = NULL;
  int n_cand = 0;
  /* The baseline's, the confirmed configurations' and the repeated ones' trials. */
  if (store_trials_load_confirm(sw->db, sw->id, sw->exp->budget_steps, 0, want_pooled_steps, NULL,
                                &t, &n, &err) == 0) {
    cand = xcalloc((size_t)n + 1, sizeof *cand); /* the confirmed configurations */
    for (int i = 0; i < n; i++)
      if (t[i].role == ROLE_CONFIRM && strcmp(t[i].config_json, "{}") != 0)
        cand[n_cand++] = t[i].config_json;
    est = estimates(sw, cand, n_cand);
  }
  int no_recipe = 0;
  char *recipe = est ? recipe_of(sw, &no_recipe) : NULL;
  confirm_answer answer = CONFIRM_WINNER;
  static const char *const kinds[] = {"search", "recipe", "baseline"};
  int chosen =
      est && !no_recipe &&
      confirm_winner(t, n, sw->exp->budget_steps, sw->exp->metric_skip, est, n_cand, &w) == 0;
  if (chosen) { /* never worse than the recipe nor the baseline */
    answer = confirm_guard(t, n, sw->exp->budget_steps, sw->exp->metric_skip, recipe, &w);
    w.kind = kinds[answer];
  }
  if (chosen && store_sweep_set_winner(sw->db, sw->id, &w, &err) == 0) {
    sw->winner_ms = w.value;
    sw->winner_base_ms = w.baseline;
    char val[48], base[48];
    metric_format(val, sizeof val, w.value, sw->exp->metric_higher);
    metric_format(base, sizeof base, w.baseline, sw->exp->metric_higher);
    if (answer == CONFIRM_WINNER)
      diag_note("flagtune: confirmed winner: %s over %d trials vs baseline %s", val, w.n_trials,
                base);
    else
      diag_note(
          "flagtune: no configuration was confirmed faster than the %s: it is the answer "
          "(%s over %d trials, baseline %s)",
          answer == CONFIRM_RECIPE ? "public recipe" : "baseline", val, w.n_trials, base);
  }
  if (err) diag_warn("%s", err);
  free(recipe);
  free(err);
  free(est);
  free(cand);
  record_free(t, n);
}

/* Says, before the first trial, when confirmation will not run: the budget is too small. */
void sweep_note_confirmation(const experiment *e, const budget *b, int planned) {
  if (e->confirm_top <= 0 || budget_confirms(b) || planned) return;
  int confirm = e->confirm_repeats * (e->confirm_top + 1);
  diag_note(
      "flagtune: no confirmation: it takes %d trials and runs only when the search keeps twice "
      "as many (budget.trials >= %d); the best will be a single run",
      confirm, 3 * confirm + 1);
}
