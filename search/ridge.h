/* Bayesian ridge regression on main effects for search/tpe.lua's surrogate: the sufficient
 * statistics, the Cholesky solve, the Thompson draw and the predictions in C, so that a
 * proposal over 30 parameters at 1,000 trials stays far under 20 ms (docs/STRATEGIES.md). */
#ifndef FLAGTUNE_RIDGE_H
#define FLAGTUNE_RIDGE_H

#include <lua.h>

/* Adds ft.ridge_new(specs, lambda) to the table at the top of L's stack (the ft table). */
void ridge_install(lua_State *L);

#endif
