/* Parzen estimators over value indices for model-based strategies (search/tpe.lua): kernel
 * tables and point sets as Lua userdata, so that scoring a candidate against thousands of
 * observations over 30 parameters runs in C, not in the VM (the instruction budget and a
 * proposal's cost; docs/STRATEGIES.md has the numbers). */
#ifndef FLAGTUNE_PARZEN_H
#define FLAGTUNE_PARZEN_H

#include <lua.h>

/* Adds ft.parzen_kernels(specs) and ft.parzen_points(d) to the table at the top of L's
 * stack (the ft table). */
void parzen_install(lua_State *L);

#endif
