/* The experiment file's Lua side (src/luahost/lhost_experiment.c): what src/luahost/experiment.c
 * asks of the Lua host, so that experiment.c calls no Lua API. Not an interface for anything else.
 */
#ifndef FLAGTUNE_LHOST_EXPERIMENT_H
#define FLAGTUNE_LHOST_EXPERIMENT_H

#include <stddef.h>

#include "experiment.h"
#include "lhost.h"

/* The installed jax and jaxlib versions by PROBE (the experiment's software_probe; NULL: the
 * default), as new strings in *JAX and *JAXLIB, NULL where unknown. */
typedef void (*lhost_software_fn)(const char *probe, char **jax, char **jaxlib);

/* dsl.load(PATH, TEXT, the N names of IMPORTED as a set) under the load budget; when the
 * file names a catalog entry with a jax release range and does not set software_probe =
 * false, SOFTWARE's versions to checks.release_warnings; then the validated table copied
 * into E's fields (n_params and space_size included) and kept as E->spec_ref. FT_EINPUT with
 * the file's "path:line: message"; FT_ELUA when the validator left a key unset. */
int lhost_experiment_load(lhost *h, const char *path, const char *text, size_t len,
                          const char *const *imported, int n, lhost_software_fn software,
                          experiment *e, char **err);
/* dsl.matcher(PATTERN) kept as the counted ref *REF. */
int lhost_matcher_new(lhost *h, const char *pattern, int *ref, char **err);
/* The matcher REF on LINE: 1 and *OUT when its one capture is a number; 0 otherwise, also on
 * any Lua error (no step time here). */
int lhost_matcher_match(lhost *h, int ref, const char *line, size_t len, double *out);

#endif
