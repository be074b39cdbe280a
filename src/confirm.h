/* Confirmation: which configurations to re-measure before a sweep ends, and which one wins
 * on the pooled measurements. Pure functions over a sweep's stored trials. */
#ifndef FLAGTUNE_CONFIRM_H
#define FLAGTUNE_CONFIRM_H

#include "stats.h"
#include "store.h"

#define CONFIRM_MAX_TOP 16

/* Only trials run with at least FULL_STEPS steps (0: any) are candidates and are pooled:
 * a short rung of successive halving is not a result. */

/* The configurations still to re-measure, in the order to run them: repeat by repeat, the
 * baseline ("{}") then the TOP fastest distinct ok configurations of the search, each
 * repeated REPEATS times in all (confirm trials already stored count, so a resumed sweep
 * queues only what is missing). *configs points into T (not owned); free the array. */
int confirm_plan(const trial_record *t, int n, int full_steps, int top, int repeats,
                 const char ***configs, int *n_configs);

/* Chooses the winner among the configurations that have confirm trials: the lowest pooled
 * value (median of the values of all its ok trials). The baseline is pooled the same way.
 * The speedup interval bootstraps the pooled step times after SKIP. Returns 0 and fills W,
 * or -1 when no configuration was confirmed. */
int confirm_winner(const trial_record *t, int n, int full_steps, int skip, store_winner *w);

/* CONFIG's pooled measurement as a winner (every ok full-step trial of it, whatever its
 * role, against every ok baseline trial), for a sweep that recorded none (no confirmation
 * ran) when `flagtune minimize` needs one fixed. Returns 0, or -1 when CONFIG has no ok
 * trial. */
int confirm_config(const trial_record *t, int n, const char *config, int full_steps, int skip,
                   store_winner *w);

#endif
