/* Confirmation: which configurations to re-measure before a sweep ends, and which one wins
 * on the pooled measurements. Pure functions over a sweep's stored trials. */
#ifndef FLAGTUNE_CONFIRM_H
#define FLAGTUNE_CONFIRM_H

#include "stats.h"
#include "store.h"

#define CONFIRM_MAX_TOP 16
/* How many of the fastest measured configurations the strategy's model is asked about when
 * it has one (CONFIRM_POOL_PER_TOP per candidate, at most CONFIRM_MAX_POOL). */
#define CONFIRM_POOL_PER_TOP 4
#define CONFIRM_MAX_POOL 32

/* The strategy's model estimate of one configuration (strategy_estimate): MEAN the log of its
 * step time predicted from the other configurations' results, SD that prediction's error
 * against one measurement (noise included). NaN mean: no estimate. */
typedef struct {
  const char *config;
  double mean, sd;
} confirm_estimate;

/* Only trials run with at least FULL_STEPS steps (0: any) are candidates and are pooled:
 * a short rung of successive halving is not a result. */

/* How many of the fastest distinct ok search configurations (full steps) confirm_pool with
 * CONFIRM_POOL_PER_TOP * TOP and confirm_plan with TOP can choose from: for each pick, the
 * fastest configuration not yet taken is among the first (taken + 1). A caller loading only
 * some trials (store_trials_load_confirm) loads every trial of these. */
int confirm_fastest_needed(int top);

/* The POOL fastest distinct ok search configurations (full steps), fastest first: the ones
 * to ask the strategy's model about before planning. *configs points into T; free it. */
int confirm_pool(const trial_record *t, int n, int full_steps, int pool, const char ***configs,
                 int *n_configs);

/* The configurations still to re-measure, in the order to run them: repeat by repeat, the
 * baseline ("{}") then up to TOP distinct ok configurations of the search, each repeated
 * REPEATS times in all (confirm trials already stored count, so a resumed sweep queues only
 * what is missing). Without estimates (N_EST 0, or none with a mean) the TOP fastest; with
 * them, the TOP lowest shrunk estimates (confirm_shrunk) among the configurations estimated.
 * Of these, only those whose re-runs can still change the answer are kept: the leader (the
 * lowest shrunk estimate of its search measurements), every one already confirmed, and each
 * other whose gap to the leader is at most Z times the sd by which REPEATS re-runs of both
 * can move it (confirm_moves); Z = INFINITY keeps all TOP. The sweep gives the trials not
 * needed back to the search (src/sweep/sweep.c). *configs points into T (not owned); free it. */
#define CONFIRM_Z 2.0
int confirm_plan(const trial_record *t, int n, int full_steps, int top, int repeats, double z,
                 const confirm_estimate *est, int n_est, const char ***configs, int *n_configs);

/* The variance by which R more measurements move the posterior mean (confirm_shrunk) of a
 * configuration measured N times, each of variance TAU2, under the model's prior E (NULL or
 * no mean: none): the preposterior variance, prior variance less posterior variance. */
double confirm_moves(int n, int r, double tau2, const confirm_estimate *e);

/* Chooses the winner among the configurations that have confirm trials. Without estimates:
 * the lowest pooled value (median of the values of all its ok trials). With them: the lowest
 * shrunk estimate of its pooled measurements (confirm_shrunk); the value recorded is still
 * the pooled median. The baseline is pooled the same way. The speedup interval bootstraps the
 * pooled step times after SKIP. Returns 0 and fills W, or -1 when none was confirmed. */
int confirm_winner(const trial_record *t, int n, int full_steps, int skip,
                   const confirm_estimate *est, int n_est, store_winner *w);

/* The public recipe (the strategy's recipe(): the guides' settings, proposed first) added to
 * the plan *CONFIGS (N_CONFIGS entries, from confirm_plan; replaced, free it as before):
 * RECIPE re-measured REPEATS times in all like the candidates, once after the first
 * candidate (the leader) that follows each of the baseline's re-runs, so a plan cut short
 * keeps the leader before the recipe, unless it is in the plan already, had no ok trial or is
 * confirmed enough (resume). Returns how many were added. NULL or "{}" RECIPE:
 * none. */
int confirm_add_recipe(const trial_record *t, int n, const char *recipe, int repeats,
                       const char ***configs, int *n_configs);

/* What a sweep reports after confirm_guard. */
typedef enum {
  CONFIRM_WINNER = 0, /* the pooled winner: confirmed faster than the baseline and the recipe */
  CONFIRM_RECIPE,     /* the recipe: it won, or the winner was not confirmed faster than it */
  CONFIRM_BASELINE    /* the baseline: nothing was confirmed faster than it */
} confirm_answer;

/* Never worse than the recipe nor the baseline: the pooled winner W (confirm_winner) stands
 * only when it is confirmed faster (the lower end of the 95 % interval of its pooled step
 * times' speedup above 1) than the pooled baseline and than the pooled RECIPE (NULL: none;
 * it must have confirm trials to count). Otherwise W is replaced by the recipe when the
 * recipe is confirmed faster than the baseline, or when both beat the baseline and the
 * recipe's pooled value is no slower; else by the baseline (its pooled value, no interval).
 * A winner that is the recipe is reported as the recipe. Returns which one W now holds. */
confirm_answer confirm_guard(const trial_record *t, int n, int full_steps, int skip,
                             const char *recipe, store_winner *w);

/* The noise variance of one measurement, log scale: the posterior mean of sigma^2 given the
 * within-configuration sum of squares of the log values of every configuration with several
 * ok full-step trials, under a log-uniform prior on sigma from CONFIRM_NOISE_LO to
 * CONFIRM_NOISE_HI (0.05 % to 5 %). With no repeats that is the prior's mean (sigma about
 * 1.65 %); a few repeats that agree bring it down to what they show, so a quiet GPU's
 * 0.1 % is believed, which a prior worth fixed degrees of freedom would not let happen. */
#define CONFIRM_NOISE_LO 0.0005
#define CONFIRM_NOISE_HI 0.05
double confirm_noise(const trial_record *t, int n, int full_steps);
/* The same from a sum of squares SS with DF degrees of freedom (for tests and benchmarks). */
double confirm_noise_posterior(double ss, int df);

/* The posterior mean of a configuration's log step time: its N log measurements (mean M,
 * each of variance TAU2) against the model's prior N(E.mean, V), V = max(E.sd^2 - TAU2,
 * TAU2 / 4). M when E is NULL or has no mean. */
double confirm_shrunk(double m, int n, double tau2, const confirm_estimate *e);

/* CONFIG's pooled measurement as a winner (every ok full-step trial of it, whatever its
 * role, against every ok baseline trial), for a sweep that recorded none (no confirmation
 * ran) when `flagtune minimize` needs one fixed. Returns 0, or -1 when CONFIG has no ok
 * trial. */
int confirm_config(const trial_record *t, int n, const char *config, int full_steps, int skip,
                   store_winner *w);

#endif
