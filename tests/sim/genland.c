/* genland: the generated landscape family of flagtune-sim. See genland.h and docs/SIMULATOR.md.
 *
 * Shape of a landscape (every number below is drawn from the seed):
 *   step time = T0 * (1 + F) * remat(u), F a sum of fractions of T0:
 *   - the CORE (coupled through the scheduler and memory): the latency hiding scheduler (a large
 *     main effect), 1-3 combine thresholds whose speed-up peaks near their large end and is mostly
 *     lost without the scheduler, pipelining flags that pay only with the scheduler on and more
 *     with a good threshold (three-way), optionally the LHS memory slop factor and NVLS, and the
 *     memory fraction; pool need = M0 + each threshold x its live buffers (one, one more with the
 *     scheduler, one more per pipelining flag), so the fast settings are the memory-hungry ones;
 *     M0 is set so that 12-34 % of random configurations do not fit;
 *   - FREE parameters: 30 % no-ops (plateaus), most of the rest minor (0.05-0.6 %), about one in
 *     seven major (1.5-5 %); a few pairs and at most one triple interact.
 *   remat(u) = 1 + (u - 0.94) for a pool use u in (0.94, 1], as the named landscapes do.
 * The optimum: free parameters form blocks (a single, a pair or a triple) that add to F and touch
 * nothing else, so each block's best levels are found by enumerating it; then every combination
 * of the core parameters is evaluated with the free ones at their best. Exact over the grid. */
#include "genland.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAXLEV 10
#define MAXP GENLAND_MAX_PARAMS
#define HBM 80.0
#define GIBF 1073741824.0
#define CMDBUF_DEF "FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN"

enum { K_BOOL, K_POW2, K_FRAC, K_INT, K_CHOICE };
enum { R_FREE, R_LHS, R_FRAC, R_THR, R_PIPE, R_SLOP, R_NVLS };

typedef struct {
  const char *name;
  int env, kind;
  int lo, hi, step;   /* pow2: exponents; int: values */
  const char *envdef; /* an environment variable's value when unset */
  const char *ch[6];  /* choices */
} poolent;

/* Real XLA flags (xla/debug_options_flags.cc; all in flagtune-sim's FLAGS table) and the
 * environment variables JAX and NCCL jobs are tuned with. */
static const poolent POOL[] = {
    {"xla_gpu_enable_latency_hiding_scheduler", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"XLA_PYTHON_CLIENT_MEM_FRACTION", 1, K_FRAC, 0, 0, 0, "0.75", {NULL}},
    {"xla_gpu_all_gather_combine_threshold_bytes", 0, K_POW2, 20, 32, 0, NULL, {NULL}},
    {"xla_gpu_reduce_scatter_combine_threshold_bytes", 0, K_POW2, 20, 32, 0, NULL, {NULL}},
    {"xla_gpu_all_reduce_combine_threshold_bytes", 0, K_POW2, 20, 32, 0, NULL, {NULL}},
    {"xla_gpu_enable_pipelined_all_gather", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_pipelined_reduce_scatter", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_pipelined_all_reduce", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_while_loop_double_buffering", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_memory_limit_slop_factor", 0, K_INT, 80, 100, 5, NULL, {NULL}},
    {"NCCL_NVLS_ENABLE", 1, K_CHOICE, 0, 0, 0, "0", {"0", "1", NULL}},
#define POOL_CORE 11 /* the entries above can be core; all can be free */
    {"xla_gpu_enable_highest_priority_async_stream", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_triton_gemm", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_triton_gemm_any", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_cudnn_fmha", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_cublaslt", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_custom_fusions", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_nccl_user_buffers", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_nccl_comm_splitting", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_all_gather_combine_by_dim", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_reduce_scatter_combine_by_dim", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_multi_streamed_windowed_einsum", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_pipelined_p2p", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_dynamic_slice_fusion", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_cudnn_gemm_fusion", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_cudnn_layer_norm", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_fast_min_max", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_split_k_autotuning", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_exhaustive_tiling_search", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_graph_enable_concurrent_region", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_analytical_latency_estimator", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_approx_costly_collectives", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_while_loop_reduce_scatter_code_motion", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_reassociation_for_converted_ar", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_lhs_enable_gpu_async_tracker", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_analytical_sol_latency_estimator", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_reduction_epilogue_fusion", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_triton_hopper", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_use_memcpy_local_p2p", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_enable_nccl_per_stream_comms", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_collectives_use_persistent_cliques", 0, K_BOOL, 0, 0, 0, NULL, {NULL}},
    {"xla_gpu_collective_permute_combine_threshold_bytes", 0, K_POW2, 20, 31, 0, NULL, {NULL}},
    {"xla_gpu_operand_bytes_threshold_for_windowed_einsum", 0, K_POW2, 20, 30, 0, NULL, {NULL}},
    {"NCCL_BUFFSIZE", 1, K_POW2, 20, 25, 0, "4194304", {NULL}},
    {"xla_gpu_autotune_level", 0, K_INT, 0, 4, 1, NULL, {NULL}},
    {"xla_latency_hiding_scheduler_rerun", 0, K_INT, 1, 3, 1, NULL, {NULL}},
    {"xla_gpu_experimental_parallel_collective_overlap_limit", 0, K_INT, 1, 4, 1, NULL, {NULL}},
    {"xla_gpu_graph_min_graph_size", 0, K_INT, 1, 9, 2, NULL, {NULL}},
    {"xla_gpu_dot_merger_threshold_mb", 0, K_INT, 0, 128, 32, NULL, {NULL}},
    {"xla_gpu_nccl_collective_max_nchannels", 0, K_INT, 0, 32, 8, NULL, {NULL}},
    {"xla_gpu_enable_command_buffer",
     0,
     K_CHOICE,
     0,
     0,
     0,
     NULL,
     {"", "FUSION", "FUSION,CUBLAS,CUBLASLT", CMDBUF_DEF, CMDBUF_DEF ",WHILE,CONDITIONAL", NULL}},
    {"xla_gpu_disable_async_collectives",
     0,
     K_CHOICE,
     0,
     0,
     0,
     NULL,
     {"", "allreduce", "allgather,reducescatter", NULL}},
    {"NCCL_PROTO",
     1,
     K_CHOICE,
     0,
     0,
     0,
     "LL,LL128,SIMPLE",
     {"LL,LL128,SIMPLE", "SIMPLE", "LL128,SIMPLE", NULL}},
    {"CUDA_DEVICE_MAX_CONNECTIONS", 1, K_CHOICE, 0, 0, 0, "8", {"1", "8", "32", NULL}},
};
#define NPOOL ((int)(sizeof POOL / sizeof POOL[0]))

typedef struct {
  const poolent *pe;
  int n;              /* levels */
  double num[MAXLEV]; /* numeric value of each level (bool 0/1, bytes, fraction, int) */
  const char *str[MAXLEV];
  int role, link;      /* R_PIPE: the threshold it pipelines (param index) */
  double eff[MAXLEV];  /* a free parameter's main effect (fraction of T0) */
  double g, peak, wid; /* R_THR: speed-up, peak level, width; */
  double cmem;         /*        GiB of live buffers per byte-GiB of threshold */
  double h;            /* R_PIPE: speed-up */
  int block;           /* free: which block it belongs to */
} gparam;

typedef struct {
  int a, b, c; /* c < 0: a pair */
  double w, ta[MAXLEV], tb[MAXLEV], tc[MAXLEV];
} ginter;

struct genland {
  uint64_t seed;
  int n;
  gparam p[MAXP];
  int order[MAXP]; /* the order the space lists them in */
  ginter in[MAXP];
  int nin;
  int lhs, frac, slop, nvls; /* parameter indices, -1 when absent */
  double t0, m0, a_lhs, sigma, nu, noise_proc, noise_step;
  double start_ms, compile_ms; /* a trial's cost besides its steps (genland_costs) */
};

/* ---- deterministic randomness (splitmix64, as the simulator's own) ---- */
typedef struct {
  uint64_t s;
} grng;

static uint64_t gnext(grng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double gunit(grng *r) {
  return (double)(gnext(r) >> 11) / 9007199254740992.0;
}
static int gint(grng *r, int n) { /* 0..n-1 */
  return (int)(gnext(r) % (uint64_t)n);
}
static double uni(grng *r, double lo, double hi) {
  return lo + (hi - lo) * gunit(r);
}

/* ---- what a trial costs besides its steps ---- */

/* The ranges recorded from real trials, tests/data/real/costs.txt (test_genland.sh checks that
 * every landscape's costs lie inside that file's ranges): the start (Python, jax's import, the
 * backend) 6.7-9.0 s, and the compile as a multiple of one steady step, 60-530 (H100 trials
 * of docs/GPU.md: 5.9-30.8 s of first step over 55-148 ms steps, 2.0 s over 3.8 ms). */
#define START_MS_LO 6700.0
#define START_MS_HI 9000.0
#define COMPILE_STEPS_LO 60.0
#define COMPILE_STEPS_HI 530.0

/* Drawn from a stream of their own (the seed through another constant), after everything
 * else: a landscape's space, values and optimum are those it had without costs. */
static void draw_costs(genland *g) {
  grng r = {g->seed * 0x9e3779b97f4a7c15ULL ^ 0x636f737473ULL};
  g->start_ms = (double)(int64_t)uni(&r, START_MS_LO, START_MS_HI);
  g->compile_ms = (double)(int64_t)(g->t0 * uni(&r, COMPILE_STEPS_LO, COMPILE_STEPS_HI));
}

/* ---- parameters ---- */

static int add_param(genland *g, int pool, int role, grng *r) {
  const poolent *pe = &POOL[pool];
  gparam *p = &g->p[g->n];
  memset(p, 0, sizeof *p);
  p->pe = pe;
  p->role = role;
  p->link = -1;
  switch (pe->kind) {
    case K_BOOL:
      p->n = 2, p->num[1] = 1;
      break;
    case K_POW2: { /* 5-8 consecutive powers of two inside [2^lo, 2^hi] */
      int span = pe->hi - pe->lo + 1, n = 5 + gint(r, 4);
      if (n > span) n = span;
      int top = pe->hi - gint(r, span - n + 1);
      if (role == R_THR && top < 29) top = 29; /* 512 MiB .. 4 GiB at the top */
      p->n = n;
      for (int k = 0; k < n; k++) {
        double v = 1;
        for (int e = 0; e < top - n + 1 + k; e++) v *= 2;
        p->num[k] = v;
      }
      break;
    }
    case K_FRAC: { /* 0.50|0.60|0.70 .. 0.90|0.95 by 0.05 */
      int lo = 50 + 10 * gint(r, 3), hi = gint(r, 2) ? 95 : 90;
      p->n = (hi - lo) / 5 + 1;
      for (int k = 0; k < p->n; k++) p->num[k] = (double)(lo + 5 * k) / 100.0;
      break;
    }
    case K_INT:
      p->n = (pe->hi - pe->lo) / pe->step + 1;
      for (int k = 0; k < p->n; k++) p->num[k] = pe->lo + k * pe->step;
      break;
    case K_CHOICE:
      while (p->n < 6 && pe->ch[p->n]) p->str[p->n] = pe->ch[p->n], p->n++;
      for (int k = 0; k < p->n; k++) p->num[k] = k;
      break;
  }
  return g->n++;
}

/* A free parameter's main effect: a no-op (plateau), minor or major. Ordered kinds get a smooth
 * valley around a random best level that flattens out; bools and choices random levels. */
static void draw_effect(gparam *p, grng *r) {
  double c = gunit(r), amp = 0;
  if (c >= 0.30) amp = c < 0.85 ? uni(r, 0.0005, 0.006) : uni(r, 0.015, 0.05);
  if (p->pe->kind == K_BOOL) {
    p->eff[1] = gunit(r) < 0.5 ? -amp : amp;
  } else if (p->pe->kind == K_CHOICE) {
    for (int k = 0; k < p->n; k++) p->eff[k] = amp * gunit(r);
    p->eff[gint(r, p->n)] = 0;
  } else {
    int best = gint(r, p->n);
    for (int k = 0; k < p->n; k++) {
      double d = (double)(k - best) / (double)(p->n - 1), v = 3 * d * d;
      p->eff[k] = amp * (v > 1 ? 1 : v);
    }
  }
}

static void draw_table(double *t, int n, grng *r) {
  for (int k = 0; k < n; k++) t[k] = 2 * gunit(r) - 1;
}

/* ---- the model over levels ---- */

static double bump(const gparam *t, int k) { /* 1 at the peak, falling off quadratically */
  double d = ((double)k - t->peak) / t->wid;
  return 1 - d * d;
}

static void eval_levels(const genland *g, const int *lev, genland_val *v) {
  double f = 0, need = g->m0;
  int l = g->lhs >= 0 ? lev[g->lhs] : 0;
  double frac = g->frac >= 0 ? g->p[g->frac].num[lev[g->frac]] : 0.75;
  memset(v, 0, sizeof *v);
  for (int i = 0; i < g->n; i++) f += g->p[i].eff[lev[i]];
  for (int j = 0; j < g->nin; j++) {
    const ginter *x = &g->in[j];
    double t = x->w * x->ta[lev[x->a]] * x->tb[lev[x->b]];
    f += x->c >= 0 ? t * x->tc[lev[x->c]] : t;
  }
  f -= g->a_lhs * l;
  for (int i = 0; i < g->n; i++) {
    const gparam *p = &g->p[i];
    if (p->role == R_THR) {
      int bufs = 1 + l;
      for (int q = 0; q < g->n; q++) bufs += g->p[q].role == R_PIPE && g->p[q].link == i && lev[q];
      f -= p->g * bump(p, lev[i]) * (l ? 1.0 : 0.15);
      need += p->num[lev[i]] / GIBF * p->cmem * bufs;
    } else if (p->role == R_PIPE && lev[i]) {
      double b = bump(&g->p[p->link], lev[p->link]);
      f += l ? -p->h * (0.4 + 0.6 * (b < 0 ? 0 : b)) : 0.003;
    }
  }
  double cap = frac * HBM;
  if (g->slop >= 0 && l) {
    const gparam *s = &g->p[g->slop];
    f -= g->sigma * lev[g->slop] / (s->n - 1);
    if (s->num[lev[g->slop]] > 95) need += (s->num[lev[g->slop]] - 95) / 100 * 0.5 * cap;
  }
  int nv = g->nvls >= 0 && lev[g->nvls];
  f -= g->nu * nv;
  v->ms = g->t0 * (1 + f);
  v->need_gib = need;
  v->cap_gib = cap;
  v->out_need_gib = 1.3 + (nv ? 2.5 : 0.0);
  v->out_avail_gib = HBM * (1 - frac);
  v->lhs = l;
  double u = need / cap;
  if (u > 1.0)
    v->oom = 1;
  else if (v->out_need_gib > v->out_avail_gib)
    v->oom = 2;
  if (u > 0.94 && u <= 1.0) v->ms *= 1 + (u - 0.94);
}

/* ---- generation ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* M0 such that a share TAU of uniformly random core configurations does not fit the pool. */
static void calibrate_memory(genland *g, double tau, grng *r) {
  enum { R = 4000 };
  static double d[R];
  int lev[MAXP] = {0};
  double m0 = g->m0;
  g->m0 = 0;
  for (int s = 0; s < R; s++) {
    for (int i = 0; i < g->n; i++) lev[i] = g->p[i].role != R_FREE ? gint(r, g->p[i].n) : 0;
    genland_val v;
    eval_levels(g, lev, &v);
    d[s] = v.cap_gib - v.need_gib; /* does not fit iff M0 > d */
  }
  qsort(d, R, sizeof d[0], cmp_double);
  g->m0 = d[(int)(tau * R)];
  if (g->m0 < 8) g->m0 = m0; /* params, optimizer state and activations take at least that */
}

/* Whether free parameter I is in no interaction yet. */
static int alone(const genland *g, int i) {
  for (int j = 0; j < g->n; j++)
    if (g->p[j].role == R_FREE && g->p[j].block == i && j != i) return 0;
  return g->p[i].block == i;
}

genland *genland_new(uint64_t seed, int nparams, char *err, size_t errlen) {
  if (nparams != 0 && (nparams < GENLAND_MIN_PARAMS || nparams > GENLAND_MAX_PARAMS)) {
    snprintf(err, errlen, "--gen-params %d: want %d..%d", nparams, GENLAND_MIN_PARAMS,
             GENLAND_MAX_PARAMS);
    return NULL;
  }
  genland *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  grng r = {seed * 0x2545f4914f6cdd1dULL ^ 0x67656e6c616e64ULL};
  int used[NPOOL] = {0};
  g->seed = seed;
  g->lhs = g->frac = g->slop = g->nvls = -1;
  int n = nparams ? nparams : 8 + gint(&r, 23);
  int core_max = 3 + n / 3;
  g->t0 = uni(&r, 100, 600);
  g->noise_proc = uni(&r, 0.005, 0.03);
  g->noise_step = uni(&r, 0.005, 0.03);
  g->a_lhs = uni(&r, 0.04, 0.12);
  g->sigma = uni(&r, 0.003, 0.015);
  g->nu = uni(&r, 0.005, 0.03);
  g->m0 = 8;

  /* The core. */
  g->lhs = add_param(g, 0, R_LHS, &r), used[0] = 1;
  if (gunit(&r) < 0.85) g->frac = add_param(g, 1, R_FRAC, &r);
  used[1] = 1; /* the memory fraction is core or absent (then the pool is 0.75 x 80 GiB) */
  int thr_order[3] = {2, 3, 4}, ag = -1;
  for (int i = 2; i > 0; i--) {
    int j = gint(&r, i + 1), t = thr_order[i];
    thr_order[i] = thr_order[j], thr_order[j] = t;
  }
  int nthr = 1 + gint(&r, 3);
  for (int i = 0; i < nthr && g->n < core_max; i++) {
    int pi = thr_order[i], t = add_param(g, pi, R_THR, &r);
    gparam *p = &g->p[t];
    used[pi] = 1;
    p->g = uni(&r, 0.01, 0.06);
    p->peak = p->n - 1 - gint(&r, p->n < 4 ? p->n : 4);
    p->wid = 0.6 * p->n;
    p->cmem = uni(&r, 1.0, 3.0);
    if (pi == 2) ag = t;
    if (g->n < core_max && gunit(&r) < 0.75) { /* its pipelining flag */
      int q = add_param(g, pi + 3, R_PIPE, &r);
      used[pi + 3] = 1;
      g->p[q].link = t;
      g->p[q].h = uni(&r, 0.01, 0.05);
    }
  }
  if (ag >= 0 && g->n < core_max && gunit(&r) < 0.4) {
    int q = add_param(g, 8, R_PIPE, &r);
    used[8] = 1;
    g->p[q].link = ag;
    g->p[q].h = uni(&r, 0.005, 0.02);
  }
  if (g->n < core_max && g->n < n && gunit(&r) < 0.35)
    g->slop = add_param(g, 9, R_SLOP, &r), used[9] = 1;
  if (g->n < core_max && g->n < n && gunit(&r) < 0.4)
    g->nvls = add_param(g, 10, R_NVLS, &r), used[10] = 1;
  int ncore = g->n;

  /* Free parameters, drawn without replacement. */
  int cand[NPOOL], nc = 0;
  for (int i = 0; i < NPOOL; i++)
    if (!used[i]) cand[nc++] = i;
  while (g->n < n && nc > 0) {
    int j = gint(&r, nc), pi = cand[j];
    cand[j] = cand[--nc];
    int k = add_param(g, pi, R_FREE, &r);
    draw_effect(&g->p[k], &r);
    g->p[k].block = k;
  }
  /* Sparse interactions: a few disjoint pairs, at most one triple. */
  int nfree = g->n - ncore;
  for (int a = ncore; a + 1 < g->n; a++) {
    if (!alone(g, a) || gunit(&r) >= 0.2) continue;
    int b = ncore + gint(&r, nfree);
    if (b == a || !alone(g, b)) continue;
    ginter *x = &g->in[g->nin++];
    x->a = a, x->b = b, x->c = -1, x->w = uni(&r, 0.003, 0.015);
    draw_table(x->ta, g->p[a].n, &r), draw_table(x->tb, g->p[b].n, &r);
    g->p[b].block = a;
  }
  if (nfree >= 3 && gunit(&r) < 0.6) {
    int t[3], m = 0;
    for (int tries = 0; tries < 50 && m < 3; tries++) {
      int c = ncore + gint(&r, nfree), ok = alone(g, c);
      for (int i = 0; i < m; i++) ok &= t[i] != c;
      if (ok) t[m++] = c;
    }
    if (m == 3) {
      ginter *x = &g->in[g->nin++];
      x->a = t[0], x->b = t[1], x->c = t[2], x->w = uni(&r, 0.005, 0.02);
      draw_table(x->ta, g->p[t[0]].n, &r), draw_table(x->tb, g->p[t[1]].n, &r);
      draw_table(x->tc, g->p[t[2]].n, &r);
      g->p[t[1]].block = g->p[t[2]].block = t[0];
    }
  }
  calibrate_memory(g, uni(&r, 0.12, 0.34), &r);
  /* The listing order: shuffled, so that position says nothing about importance. */
  for (int i = 0; i < g->n; i++) g->order[i] = i;
  for (int i = g->n - 1; i > 0; i--) {
    int j = gint(&r, i + 1), t = g->order[i];
    g->order[i] = g->order[j], g->order[j] = t;
  }
  draw_costs(g);
  return g;
}

void genland_free(genland *g) {
  free(g);
}

int genland_nparams(const genland *g) {
  return g->n;
}

const char *genland_param(const genland *g, int i, int *is_env) {
  *is_env = g->p[i].pe->env;
  return g->p[i].pe->name;
}

void genland_noise(const genland *g, double *proc, double *step) {
  *proc = g->noise_proc;
  *step = g->noise_step;
}

void genland_costs(const genland *g, double *start_ms, double *compile_ms, double *t0_ms) {
  *start_ms = g->start_ms;
  *compile_ms = g->compile_ms;
  *t0_ms = g->t0;
}

/* ---- reading a configuration ---- */

/* The level a value string selects: a bool by truth; numbers by the nearest level (powers of
 * two by the geometric midpoint); choices by exact match (anything else: the first choice). */
static int level_of(const gparam *p, const char *v) {
  if (p->pe->kind == K_BOOL)
    return v && (!*v || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"));
  if (p->pe->kind == K_CHOICE) {
    for (int k = 0; v && k < p->n; k++)
      if (!strcmp(v, p->str[k])) return k;
    return 0;
  }
  double x = v ? strtod(v, NULL) : 0;
  for (int k = 0; k + 1 < p->n; k++) {
    double mid = p->pe->kind == K_POW2 ? p->num[k] * 1.4142135623730951 /* exact: x2 grid */
                                       : (p->num[k] + p->num[k + 1]) / 2;
    if (x < mid) return k;
  }
  return p->n - 1;
}

void genland_eval(const genland *g, genland_get_fn get, void *ctx, genland_val *v) {
  int lev[MAXP];
  for (int i = 0; i < g->n; i++) {
    const poolent *pe = g->p[i].pe;
    const char *s = get(ctx, pe->name, pe->env);
    if (!s && pe->env) s = pe->envdef;
    lev[i] = level_of(&g->p[i], s);
  }
  eval_levels(g, lev, v);
}

/* ---- printing ---- */

static void value_str(const gparam *p, int k, char *b, size_t n) {
  switch (p->pe->kind) {
    case K_BOOL:
      snprintf(b, n, "%s", k ? "true" : "false");
      break;
    case K_POW2:
    case K_INT:
      snprintf(b, n, "%.0f", p->num[k]);
      break;
    case K_FRAC:
      snprintf(b, n, "%.2f", p->num[k]);
      break;
    default:
      snprintf(b, n, "%s", p->str[k]);
  }
}

static const char *kind_name(int k) {
  static const char *names[] = {"bool", "pow2", "float", "int", "choice"};
  return names[k];
}

/* Whether parameter P at value B stays out of XLA_FLAGS: xla_gpu_disable_async_collectives'
 * setter refuses '' (openxla/xla, xla/debug_options_flags.cc,
 * setter_for_xla_gpu_disable_async_collectives), and '' is its default, so its '' candidate
 * means the flag unset, as flagtune's catalog says (`empty = "unset"`, lua/space.lua left_out). */
static int unset_when_empty(const gparam *p, const char *b) {
  return !p->pe->env && b[0] == '\0' && !strcmp(p->pe->name, "xla_gpu_disable_async_collectives");
}

void genland_print_space(const genland *g, FILE *f, int json) {
  char b[128];
  if (json) {
    fprintf(f,
            "{\"landscape\": \"gen:%llu\", \"start_ms\": %.0f, \"compile_ms\": %.0f, "
            "\"t0_ms\": %.3f, \"params\": [",
            (unsigned long long)g->seed, g->start_ms, g->compile_ms, g->t0);
    for (int o = 0; o < g->n; o++) {
      const gparam *p = &g->p[g->order[o]];
      fprintf(f, "%s\n  {\"name\": \"%s\", \"env\": %s, \"kind\": \"%s\",%s \"values\": [",
              o ? "," : "", p->pe->name, p->pe->env ? "true" : "false", kind_name(p->pe->kind),
              unset_when_empty(p, "") ? " \"unset_empty\": true," : "");
      for (int k = 0; k < p->n; k++) {
        value_str(p, k, b, sizeof b);
        int quote = p->pe->kind == K_CHOICE;
        fprintf(f, "%s%s%s%s", k ? ", " : "", quote ? "\"" : "", b, quote ? "\"" : "");
      }
      fprintf(f, "]}");
    }
    fprintf(f, "\n]}\n");
    return;
  }
  fprintf(f,
          "-- gen:%llu: a trial costs %.0f ms of start and %.0f ms of compile besides its steps\n",
          (unsigned long long)g->seed, g->start_ms, g->compile_ms);
  for (int env = 0; env < 2; env++) {
    fprintf(f, "%s = {\n", env ? "vars" : "flags");
    for (int o = 0; o < g->n; o++) {
      const gparam *p = &g->p[g->order[o]];
      if (p->pe->env != env) continue;
      fprintf(f, "  %s = ", p->pe->name);
      switch (p->pe->kind) {
        case K_BOOL:
          fprintf(f, "bool(),\n");
          break;
        case K_POW2:
          fprintf(f, "pow2(%.0f, %.0f),\n", p->num[0], p->num[p->n - 1]);
          break;
        case K_INT:
          fprintf(f, "int(%.0f, %.0f, %d),\n", p->num[0], p->num[p->n - 1], p->pe->step);
          break;
        case K_FRAC:
          fprintf(f, "range(%.2f, %.2f, 0.05),\n", p->num[0], p->num[p->n - 1]);
          break;
        default:
          fprintf(f, "choice {");
          for (int k = 0; k < p->n; k++) fprintf(f, "%s \"%s\"", k ? "," : "", p->str[k]);
          fprintf(f, " },\n");
      }
    }
    fprintf(f, "},\n");
  }
}

/* The exact optimum: each free block enumerated alone, then every core combination. */
static double optimum(const genland *g, int *best, genland_val *bv) {
  int lev[MAXP] = {0}, core[MAXP], nc = 0;
  for (int i = 0; i < g->n; i++) {
    const gparam *p = &g->p[i];
    if (p->role != R_FREE) {
      core[nc++] = i;
      continue;
    }
    if (p->block != i) continue; /* enumerated with its block's first member */
    int mem[3] = {i, -1, -1}, m = 1;
    for (int j = 0; j < g->n; j++)
      if (j != i && g->p[j].role == R_FREE && g->p[j].block == i) mem[m++] = j;
    int nb = 1;
    for (int a = 0; a < m; a++) nb *= g->p[mem[a]].n;
    double bestf = 0;
    int bestc = -1;
    for (int c = 0; c < nb; c++) {
      int x = c;
      for (int a = 0; a < m; a++) lev[mem[a]] = x % g->p[mem[a]].n, x /= g->p[mem[a]].n;
      double f = 0;
      for (int a = 0; a < m; a++) f += g->p[mem[a]].eff[lev[mem[a]]];
      for (int j = 0; j < g->nin; j++)
        if (g->in[j].a == i) {
          const ginter *t = &g->in[j];
          double v = t->w * t->ta[lev[t->a]] * t->tb[lev[t->b]];
          f += t->c >= 0 ? v * t->tc[lev[t->c]] : v;
        }
      if (bestc < 0 || f < bestf) bestf = f, bestc = c;
    }
    for (int a = 0, x = bestc; a < m; a++) lev[mem[a]] = x % g->p[mem[a]].n, x /= g->p[mem[a]].n;
  }
  double bestms = 0;
  int found = 0;
  for (int a = 0; a < nc; a++) lev[core[a]] = 0;
  for (;;) {
    genland_val v;
    eval_levels(g, lev, &v);
    if (!v.oom && (!found || v.ms < bestms)) {
      bestms = v.ms, found = 1, *bv = v;
      memcpy(best, lev, sizeof lev[0] * (size_t)g->n);
    }
    int a = 0;
    while (a < nc && ++lev[core[a]] == g->p[core[a]].n) lev[core[a++]] = 0;
    if (a == nc) break;
  }
  return found ? bestms : -1;
}

void genland_print_optimum(const genland *g, FILE *f) {
  int best[MAXP];
  genland_val v = {0};
  char b[128];
  double ms = optimum(g, best, &v);
  if (ms < 0) { /* cannot happen: M0 is set so that most core configurations fit */
    fprintf(f, "oom\n");
    return;
  }
  fprintf(f, "%.6f\nXLA_FLAGS=", ms);
  int first = 1;
  for (int o = 0; o < g->n; o++) {
    const gparam *p = &g->p[g->order[o]];
    if (p->pe->env) continue;
    value_str(p, best[g->order[o]], b, sizeof b);
    if (unset_when_empty(p, b)) continue;
    fprintf(f, "%s--%s=%s", first ? "" : " ", p->pe->name, b);
    first = 0;
  }
  fputc('\n', f);
  for (int o = 0; o < g->n; o++) {
    const gparam *p = &g->p[g->order[o]];
    if (!p->pe->env) continue;
    value_str(p, best[g->order[o]], b, sizeof b);
    fprintf(f, "%s=%s\n", p->pe->name, b);
  }
  fprintf(f, "# memory: need %.2f GiB of a %.2f GiB pool (%.1f %%)\n", v.need_gib, v.cap_gib,
          100 * v.need_gib / v.cap_gib);
}
