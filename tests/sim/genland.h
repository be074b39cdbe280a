/* genland: the generated landscape family of flagtune-sim (`--landscape gen:SEED`).
 *
 * A landscape is drawn from its seed: which real XLA flags and environment variables it
 * searches and on which value grids, how much each matters, which ones interact, and a memory
 * model whose OOM boundary runs next to the fast region. Its optimum over the value grid is
 * known exactly (genland_optimum: brute force over the coupled parameters, per block over the
 * rest). Only +, -, *, / and sqrt are used, so every machine computes the same values.
 * Described in docs/SIMULATOR.md ("Generated landscapes"). */
#ifndef FLAGTUNE_GENLAND_H
#define FLAGTUNE_GENLAND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct genland genland;

/* The value a parameter has in this run: a flag's value (its default when unset), or an
 * environment variable's (NULL when unset). */
typedef const char *(*genland_get_fn)(void *ctx, const char *name, int is_env);

typedef struct {
  double ms;            /* noise-free step time, rematerialisation near the limit included */
  double need_gib;      /* the program's pool need */
  double cap_gib;       /* the pool: memory fraction x 80 GiB */
  double out_need_gib;  /* outside the pool: CUDA context, NCCL, NVLS */
  double out_avail_gib; /* 80 GiB - pool */
  int oom;              /* 0: fits; 1: the pool (need > cap); 2: outside the pool */
  int lhs;              /* the latency hiding scheduler is on (longer compile) */
} genland_val;

#define GENLAND_MIN_PARAMS 4
#define GENLAND_MAX_PARAMS 40

/* A landscape for SEED with NPARAMS parameters (0: drawn from the seed, 8..30). NULL on a
 * bad NPARAMS, with a message in ERR. */
genland *genland_new(uint64_t seed, int nparams, char *err, size_t errlen);
void genland_free(genland *g);

int genland_nparams(const genland *g);
/* Each parameter's name and whether it is an environment variable (for validation). */
const char *genland_param(const genland *g, int i, int *is_env);
/* Per-process and per-step noise, as fractions (0.005..0.03). */
void genland_noise(const genland *g, double *proc, double *step);

/* What a trial costs besides its steps, in simulated ms: the start before compiling (Python,
 * jax, the backend) and the compile; and T0, the landscape's base step time. Drawn from the
 * seed within the ranges of real trials (tests/data/real/costs.txt), apart from the values. */
void genland_costs(const genland *g, double *start_ms, double *compile_ms, double *t0_ms);

void genland_eval(const genland *g, genland_get_fn get, void *ctx, genland_val *v);

/* The search space: JSON ({"params": [...]}) or an experiment-file fragment (flags, vars). */
void genland_print_space(const genland *g, FILE *f, int json);
/* The exact optimum over the grid: its value (%.6f), then XLA_FLAGS=... and VAR=value lines,
 * then a "# memory" comment line. */
void genland_print_optimum(const genland *g, FILE *f);

#endif
