/* The strategy host, C side: creates a search strategy (a file of search/ or a user file) for
 * an experiment, and asks and tells it under a protected call with an instruction budget.
 * Protocol checks (valid configurations, no duplicates, rendering) run in lua/host.lua. */
#ifndef FLAGTUNE_STRATEGY_H
#define FLAGTUNE_STRATEGY_H

#include <stdint.h>

#include "classify.h"
#include "experiment.h"
#include "proposal.h"
#include "record.h"
#include "trialcfg.h"

typedef struct strategy strategy;

/* Instruction budget per strategy call. new() gets STRATEGY_BUDGET_PER_HISTORY more for each
 * trial of its history (replaying it is linear in the trials: the host decodes and marks
 * each, the strategy tells itself each; a resume of 30,000 random{} trials took more than
 * the 50 M of one call). */
#define STRATEGY_BUDGET 50000000L
#define STRATEGY_BUDGET_PER_HISTORY 50000L

/* What a strategy's history holds (its module's `history` field, docs/STRATEGIES.md): each
 * trial with its step times, without them (their count only), or only its configuration's
 * mark in the seen set. */
typedef enum {
  STRATEGY_HISTORY_STEPS,
  STRATEGY_HISTORY_RESULTS,
  STRATEGY_HISTORY_SEEN
} strategy_history;

/* strategy_new in parts, for a history read in batches: the module loaded (*OUT), then
 * strategy_add as often as needed (the trials in order; their steps are read only with
 * STRATEGY_HISTORY_STEPS, n_steps otherwise), then strategy_start. On failure of add or
 * start the caller frees *OUT. */
int strategy_open(experiment *e, strategy **out, char **err);
strategy_history strategy_history_of(const strategy *s);
int strategy_add(strategy *s, const trial_record *history, int n, char **err);
int strategy_start(strategy *s, int64_t seed, char **err);
/* The identity of the keys the strategy's space makes (lua/space.lua, Space:digest), stored
 * with a new sweep (sweeps.space_digest); owned by S, NULL when the host gave none. */
const char *strategy_space_digest(const strategy *s);
/* strategy_add for a STRATEGY_HISTORY_SEEN strategy whose sweep's space has this digest: the
 * N stored configuration texts KEYS marked seen as they are (each is the key this space makes
 * of it), with no decode. */
int strategy_add_keys(strategy *s, const char *const *keys, int n, char **err);

/* Creates the experiment's strategy seeded with SEED, replaying HISTORY (finished trials of
 * this sweep, for resume) through tell. FT_EINPUT for user errors (bad strategy file). */
int strategy_new(experiment *e, int64_t seed, const trial_record *history, int n_history,
                 strategy **out, char **err);
void strategy_free(strategy *s);
/* How many history entries reached the strategy only as the parameters their space shares
 * with this one (a warm start from sweeps over another space; strategies with prior()). */
int strategy_partial(strategy *s);

/* Asks for up to N new configurations. *out (caller frees each with proposal_clear and the
 * array with free) may hold fewer, or none when the strategy is exhausted or waiting for
 * results of running trials. */
int strategy_ask(strategy *s, int n, proposal **out, int *n_out, char **err);

/* Reports a finished trial: its configuration, status, value, steps, steps_budget and
 * number (the other fields are not read). */
int strategy_tell(strategy *s, const trial_record *r, char **err);
/* strategy_tell with what the trial cost: WALL_S its measured run's duration and STEP_MS its
 * steady wall step time (trial_result's), told as result.wall_ms and result.step_ms when
 * finite (a strategy weighs a start against steps with them, search/halving.lua). */
int strategy_tell_cost(strategy *s, const trial_record *r, double wall_s, double step_ms,
                       char **err);

/* The strategy's model estimates of N stored configurations (JSON; lua/host.lua's estimate:
 * the strategy's optional estimate() method): MEAN[i] the log of the step time predicted for
 * CONFIGS[i] from the other configurations' results, SD[i] that prediction's error against
 * one measurement; NaN both where it has none (no method, the baseline, no model yet).
 * FT_EINPUT when a user strategy answers malformed. */
int strategy_estimate(strategy *s, const char *const *configs, int n, double *mean, double *sd,
                      char **err);

/* The strategy's public recipe (lua/host_feedback.lua's recipe: the optional recipe() method),
 * the canonical JSON of a configuration in *JSON (caller frees), or NULL for none.
 * FT_EINPUT when a user strategy answers malformed. */
int strategy_recipe(strategy *s, char **json, char **err);

/* 1 when the strategy has nothing more to propose (grid exhausted, done() true). */
int strategy_done(strategy *s);

/* Renders a stored configuration (the baseline is "{}") into a proposal, e.g. to re-run
 * a lost trial. FT_EINPUT when it no longer fits the experiment's space. */
int strategy_render(strategy *s, const char *config_json, proposal *out, char **err);

/* Renders a subset of a stored configuration (some searched parameters left unset, as in
 * the baseline; lua/minimize.lua), for `flagtune minimize`. FT_EINPUT when a value no
 * longer fits the space. */
int strategy_render_subset(strategy *s, const char *config_json, proposal *out, char **err);

#endif
