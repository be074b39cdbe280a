/* The strategy host's Lua side (src/luahost/lhost_strategy.c): what src/luahost/strategy.c asks of
 * the Lua host, so that strategy.c calls no Lua API. Each call returns lhost_pcall's code and
 * message unchanged (strategy.c says whose fault an error is). Not an interface for anything else.
 */
#ifndef FLAGTUNE_LHOST_STRATEGY_H
#define FLAGTUNE_LHOST_STRATEGY_H

#include <stdint.h>

#include "experiment.h"
#include "lhost.h"
#include "proposal.h"
#include "record.h"

/* The experiment's strategy.path (a user file) and strategy.name, and its path: new strings
 * or NULL. */
void lhost_strategy_paths(lhost *h, int spec_ref, char **file_path, char **name, char **exp_path);
/* host.open(spec, E's budget) under BUDGET instructions: the host object as the counted ref
 * *REF, its module's history level ("steps", "results", "seen") in *LEVEL and its space's
 * digest (Space:digest) in *SPACE_DIGEST (new strings). */
int lhost_strategy_open(lhost *h, int spec_ref, const experiment *e, long budget, int *ref,
                        char **level, char **space_digest, char **err);
/* host:add(the N trials of HISTORY, each with its step times, or WITH_STEPS 0: their count
 * n_steps only). */
int lhost_strategy_add(lhost *h, int ref, const trial_record *history, int n, int with_steps,
                       long budget, char **err);
/* host:add_ids(the digests of the N canonical JSON texts KEYS): each text marked seen as it is. */
int lhost_strategy_add_keys(lhost *h, int ref, const char *const *keys, int n, long budget,
                            char **err);
/* host:start(SEED): the strategy made from the history added. */
int lhost_strategy_start(lhost *h, int ref, int64_t seed, long budget, char **err);
/* The host's n_partial. */
int lhost_strategy_partial(lhost *h, int ref);
/* host:ask(N): the proposals read into C (*N_OUT of them). */
int lhost_strategy_ask(lhost *h, int ref, int n, long budget, proposal **out, int *n_out,
                       char **err);
/* host:tell(R's JSON, R as a result table); WALL_S (its measured run, seconds) and STEP_MS reach
 * the result as wall_ms and step_ms when finite. */
int lhost_strategy_tell(lhost *h, int ref, const trial_record *r, double wall_s, double step_ms,
                        long budget, char **err);
/* host:estimate(CONFIGS): MEAN[i], SD[i] set where it gave an estimate (left as they are
 * elsewhere). */
int lhost_strategy_estimate(lhost *h, int ref, const char *const *configs, int n, long budget,
                            double *mean, double *sd, char **err);
/* host:recipe(): *JSON a new string or NULL. */
int lhost_strategy_recipe(lhost *h, int ref, long budget, char **json, char **err);
/* host:done(): *DONE its truth (left as it is when the call fails). */
int lhost_strategy_done(lhost *h, int ref, long budget, int *done, char **err);
/* host:METHOD(CONFIG_JSON) for "render" or "render_subset": the proposal into *OUT, or
 * FT_EINPUT with the host's reason when the configuration does not fit. */
int lhost_strategy_render(lhost *h, int ref, const char *method, const char *config_json,
                          long budget, proposal *out, char **err);

#endif
