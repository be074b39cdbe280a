/* Parzen estimators for search/tpe.lua, in C. Two userdata types:
 *   ft.parzen_kernels({ {n=, cat=, sigma=, eps=}, ... }) -> K: one kernel per parameter over
 *     its value indices 1..n. Categorical (cat = true): 1 - eps on the value, eps spread over
 *     the others. Ordered: a Gaussian of width sigma in the unit interval, normalised over
 *     the grid (exact rows when n <= MATRIX_MAX, else by the truncated continuous mass,
 *     as search/tpe.lua did in Lua). K:eval(dim, i, j), K:pick(dim, j, u) samples i
 *     around j from a uniform u (table kernels only), K:tabled(dim).
 *   ft.parzen_points(d) -> P: weighted index vectors (0 or nil: the parameter is missing and
 *     spreads evenly, 1/n). P:add(x, w), P:count(), P:weight(), P:mass(K, x) = sum over points
 *     of w * prod over parameters K(x_dim | p_dim).
 * Owns only its memory (Lua's allocator, through userdata). Must not draw random numbers: the
 * caller passes them, so a seeded sweep replays exactly. */
#include "parzen.h"

#include <lauxlib.h>
#include <math.h>
#include <string.h>

#define KERNELS_MT "flagtune.parzen_kernels"
#define POINTS_MT "flagtune.parzen_points"
#define MATRIX_MAX 64 /* ordered parameters up to this many values get exact tables */
#define DIM_MAX 4096  /* parameters in one model */
#define VALUES_MAX (1 << 24)

/* Memory through the state's allocator, so the host's memory cap counts it. */
static void *grow(lua_State *L, void *ptr, size_t osize, size_t nsize) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  return f(ud, ptr, osize, nsize);
}

typedef struct {
  int n;        /* values */
  int tabled;   /* col is an n x n table: col[i * n + j] = K(i | j), i and j 0-based */
  double sigma; /* ordered kernels: width in the unit interval */
  double *col;  /* tabled: the table; else norm[j]: 1 / the kernel's mass on the grid */
} kernel;

typedef struct {
  int d;
  kernel *k;
  size_t cells;    /* bytes of all k[].col */
  double *scratch; /* sum of (n + 1): one candidate's columns, for mass() */
  double **col;    /* d pointers into scratch */
} kernels;

typedef struct {
  int d;
  int n, cap;
  int *x;    /* n * d indices, 1-based, 0 = missing */
  double *w; /* n weights */
  double total;
  int hi[]; /* d: the largest index stored per parameter (mass checks it fits K) */
} points;

static void kernel_table(kernel *k, int cat, double eps) {
  int n = k->n;
  for (int j = 0; j < n; j++) {
    double z = 0;
    for (int i = 0; i < n; i++) {
      double v;
      if (cat) {
        v = i == j ? 1 - eps : eps / (n > 1 ? n - 1 : 1);
      } else {
        double d = n > 1 ? ((double)(i - j) / (n - 1)) / k->sigma : 0;
        v = exp(-0.5 * d * d);
      }
      k->col[(size_t)i * n + j] = v;
      z += v;
    }
    for (int i = 0; i < n; i++) k->col[(size_t)i * n + j] /= z;
  }
}

static void kernel_norms(kernel *k) {
  int n = k->n;
  for (int j = 0; j < n; j++) {
    double uj = (double)j / (n - 1);
    double mass = 0.5 * (erf((1 - uj) / (k->sigma * M_SQRT2)) - erf(-uj / (k->sigma * M_SQRT2)));
    k->col[j] = 1 / (k->sigma * sqrt(2 * M_PI) * (n - 1) * fmax(mass, 1e-12));
  }
}

static size_t col_bytes(const kernel *k) {
  return (k->tabled ? (size_t)k->n * k->n : (size_t)k->n) * sizeof(double);
}

static int kernels_gc(lua_State *L) {
  kernels *ks = luaL_checkudata(L, 1, KERNELS_MT);
  for (int i = 0; ks->k && i < ks->d; i++) grow(L, ks->k[i].col, col_bytes(&ks->k[i]), 0);
  if (ks->k) grow(L, ks->k, ((size_t)ks->d + 1) * sizeof *ks->k, 0);
  if (ks->scratch) grow(L, ks->scratch, ks->cells, 0);
  if (ks->col) grow(L, ks->col, ((size_t)ks->d + 1) * sizeof *ks->col, 0);
  ks->k = NULL;
  ks->scratch = NULL;
  ks->col = NULL;
  return 0;
}

/* Reads one spec { n =, cat =, sigma =, eps = } at the top of the stack into K. */
static const char *read_spec(lua_State *L, kernel *k, int *cat, double *eps) {
  lua_getfield(L, -1, "n");
  lua_Integer n = lua_tointeger(L, -1);
  lua_getfield(L, -2, "cat");
  *cat = lua_toboolean(L, -1);
  lua_getfield(L, -3, "sigma");
  k->sigma = lua_tonumber(L, -1);
  lua_getfield(L, -4, "eps");
  *eps = lua_tonumber(L, -1);
  lua_pop(L, 4);
  if (n < 1 || n > VALUES_MAX) return "n must be an integer from 1";
  if (!*cat && n > 1 && !(k->sigma > 0)) return "sigma must be positive";
  k->n = (int)n;
  return NULL;
}

static int new_kernels(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer d = luaL_len(L, 1);
  luaL_argcheck(L, d <= DIM_MAX, 1, "too many parameters");
  kernels *ks = lua_newuserdatauv(L, sizeof *ks, 0); /* [specs, K] */
  memset(ks, 0, sizeof *ks);
  luaL_setmetatable(L, KERNELS_MT);
  /* d is only set once everything it counts is allocated: __gc frees by it. */
  kernel *all = grow(L, NULL, 0, ((size_t)d + 1) * sizeof *all);
  if (!all) return luaL_error(L, "not enough memory");
  memset(all, 0, ((size_t)d + 1) * sizeof *all);
  ks->k = all;
  ks->d = (int)d; /* every col is NULL until allocated: freeing NULL is a no-op */
  for (int i = 0; i < d; i++) {
    lua_rawgeti(L, 1, i + 1); /* [specs, K, spec] */
    luaL_argcheck(L, lua_istable(L, -1), 1, "a list of kernel specs");
    int cat;
    double eps;
    kernel *k = &ks->k[i];
    const char *bad = read_spec(L, k, &cat, &eps);
    lua_pop(L, 1);
    if (bad) return luaL_error(L, "parzen_kernels: spec %d: %s", i + 1, bad);
    k->tabled = cat || k->n <= MATRIX_MAX;
    k->col = grow(L, NULL, 0, col_bytes(k));
    if (!k->col) return luaL_error(L, "not enough memory");
    ks->cells += ((size_t)k->n + 1) * sizeof(double);
    if (k->tabled)
      kernel_table(k, cat, eps);
    else
      kernel_norms(k);
  }
  ks->scratch = grow(L, NULL, 0, ks->cells ? ks->cells : sizeof(double));
  if (!ks->cells) ks->cells = sizeof(double);
  ks->col = grow(L, NULL, 0, ((size_t)d + 1) * sizeof *ks->col);
  if (!ks->scratch || !ks->col) return luaL_error(L, "not enough memory");
  return 1;
}

/* K(i | j), both 0-based. */
static double kernel_eval(const kernel *k, int i, int j) {
  if (k->tabled) return k->col[(size_t)i * k->n + j];
  double d = ((double)(i - j) / (k->n - 1)) / k->sigma;
  return exp(-0.5 * d * d) * k->col[j];
}

/* OUT[j] = K(i | j) for every j of an ordered kernel on a long range, without an exp per
 * value: exp(-a (j - i)^2) outward from i by the ratio of neighbours, which itself shrinks by
 * exp(-2a) a step (two multiplies a value; the rounding grows by an ulp a step). */
static void gauss_column(const kernel *k, int i, double *out) {
  double s = k->sigma * (k->n - 1), a = 0.5 / (s * s), c = exp(-2 * a);
  out[i] = k->col[i];
  for (int dir = -1; dir <= 1; dir += 2) {
    double e = 1, q = exp(-a);
    for (int j = i + dir; j >= 0 && j < k->n; j += dir) {
      e *= q;
      q *= c;
      out[j] = e * k->col[j];
    }
  }
}

static kernel *check_dim(lua_State *L, kernels *ks, int arg) {
  lua_Integer dim = luaL_checkinteger(L, arg);
  luaL_argcheck(L, dim >= 1 && dim <= ks->d, arg, "no such parameter");
  return &ks->k[dim - 1];
}

static int check_index(lua_State *L, const kernel *k, int arg) {
  lua_Integer i = luaL_checkinteger(L, arg);
  luaL_argcheck(L, i >= 1 && i <= k->n, arg, "value index out of range");
  return (int)i - 1;
}

static int kernels_eval(lua_State *L) {
  kernels *ks = luaL_checkudata(L, 1, KERNELS_MT);
  kernel *k = check_dim(L, ks, 2);
  lua_pushnumber(L, kernel_eval(k, check_index(L, k, 3), check_index(L, k, 4)));
  return 1;
}

/* K:pick(dim, j, u): the value i whose cumulative K(. | j) first passes u in [0, 1). */
static int kernels_pick(lua_State *L) {
  kernels *ks = luaL_checkudata(L, 1, KERNELS_MT);
  kernel *k = check_dim(L, ks, 2);
  int j = check_index(L, k, 3);
  double u = luaL_checknumber(L, 4);
  luaL_argcheck(L, k->tabled, 2, "not a tabled kernel");
  for (int i = 0; i < k->n - 1; i++) {
    u -= k->col[(size_t)i * k->n + j];
    if (u < 0) {
      lua_pushinteger(L, i + 1);
      return 1;
    }
  }
  lua_pushinteger(L, k->n);
  return 1;
}

static int kernels_tabled(lua_State *L) {
  kernels *ks = luaL_checkudata(L, 1, KERNELS_MT);
  lua_pushboolean(L, check_dim(L, ks, 2)->tabled);
  return 1;
}

/* ---- point sets ---- */

static size_t row_bytes(const points *p) {
  return (size_t)(p->d ? p->d : 1) * sizeof(int);
}

static int points_gc(lua_State *L) {
  points *p = luaL_checkudata(L, 1, POINTS_MT);
  if (p->x) grow(L, p->x, (size_t)p->cap * row_bytes(p), 0);
  if (p->w) grow(L, p->w, (size_t)p->cap * sizeof *p->w, 0);
  p->x = NULL;
  p->w = NULL;
  p->cap = p->n = 0;
  return 0;
}

static int new_points(lua_State *L) {
  lua_Integer d = luaL_checkinteger(L, 1);
  luaL_argcheck(L, d >= 0 && d <= DIM_MAX, 1, "parameters out of range");
  points *p = lua_newuserdatauv(L, sizeof *p + (size_t)d * sizeof(int), 0);
  memset(p, 0, sizeof *p + (size_t)d * sizeof(int));
  p->d = (int)d;
  luaL_setmetatable(L, POINTS_MT);
  return 1;
}

/* P:add(x, w): x a list of d value indices (nil: missing), w > 0 (default 1). */
static int points_add(lua_State *L) {
  points *p = luaL_checkudata(L, 1, POINTS_MT);
  luaL_checktype(L, 2, LUA_TTABLE);
  double w = luaL_optnumber(L, 3, 1);
  luaL_argcheck(L, w >= 0 && isfinite(w), 3, "weight must be finite and >= 0");
  if (p->n == p->cap) {
    if (p->cap > (1 << 28)) return luaL_error(L, "too many points");
    int cap = p->cap ? 2 * p->cap : 64;
    int *x = grow(L, p->x, (size_t)p->cap * row_bytes(p), (size_t)cap * row_bytes(p));
    if (!x) return luaL_error(L, "not enough memory");
    p->x = x;
    double *nw = grow(L, p->w, (size_t)p->cap * sizeof *nw, (size_t)cap * sizeof *nw);
    if (!nw) {
      /* x grew, w did not: shrink x back so cap describes both */
      p->x = grow(L, x, (size_t)cap * row_bytes(p), (size_t)p->cap * row_bytes(p));
      return luaL_error(L, "not enough memory");
    }
    p->w = nw;
    p->cap = cap;
  }
  int *row = p->x + (size_t)p->n * p->d;
  for (int dim = 0; dim < p->d; dim++) {
    lua_Integer v = lua_rawgeti(L, 2, dim + 1) == LUA_TNIL ? 0 : lua_tointeger(L, -1);
    lua_pop(L, 1);
    luaL_argcheck(L, v >= 0 && v <= VALUES_MAX, 2, "value index out of range");
    row[dim] = (int)v;
    if (v > p->hi[dim]) p->hi[dim] = (int)v;
  }
  p->w[p->n++] = w;
  p->total += w;
  return 0;
}

static int points_count(lua_State *L) {
  points *p = luaL_checkudata(L, 1, POINTS_MT);
  lua_pushinteger(L, p->n);
  return 1;
}

static int points_weight(lua_State *L) {
  points *p = luaL_checkudata(L, 1, POINTS_MT);
  lua_pushnumber(L, p->total);
  return 1;
}

/* P:mass(K, x): sum over points of w * prod K(x_dim | p_dim); a missing p_dim counts 1/n.
 * The column K(x_dim | .) of each parameter is gathered once, so the inner loop is one
 * multiply per point and parameter. */
static int points_mass(lua_State *L) {
  points *p = luaL_checkudata(L, 1, POINTS_MT);
  kernels *ks = luaL_checkudata(L, 2, KERNELS_MT);
  luaL_checktype(L, 3, LUA_TTABLE);
  luaL_argcheck(L, ks->d == p->d, 2, "kernels and points differ in parameters");
  double **col = ks->col, *at = ks->scratch;
  for (int dim = 0; dim < p->d; dim++) {
    const kernel *k = &ks->k[dim];
    lua_Integer xi = lua_rawgeti(L, 3, dim + 1) == LUA_TNIL ? 0 : lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (xi < 1 || xi > k->n || p->hi[dim] > k->n)
      return luaL_error(L, "parzen mass: parameter %d: index out of range", dim + 1);
    col[dim] = at;
    at[0] = 1.0 / k->n;
    if (k->tabled)
      memcpy(at + 1, k->col + (size_t)(xi - 1) * k->n, (size_t)k->n * sizeof *at);
    else
      gauss_column(k, (int)xi - 1, at + 1);
    at += k->n + 1;
  }
  /* Four points at a time: four independent chains of multiplies, not one long one whose
   * latency bounds the loop. Every stored index fits its kernel (hi, checked above). */
  int d = p->d, i = 0;
  double sum = 0;
  for (; i + 4 <= p->n; i += 4) {
    const int *r0 = p->x + (size_t)i * d, *r1 = r0 + d, *r2 = r1 + d, *r3 = r2 + d;
    double a0 = p->w[i], a1 = p->w[i + 1], a2 = p->w[i + 2], a3 = p->w[i + 3];
    for (int dim = 0; dim < d; dim++) {
      const double *c = col[dim];
      a0 *= c[r0[dim]];
      a1 *= c[r1[dim]];
      a2 *= c[r2[dim]];
      a3 *= c[r3[dim]];
    }
    sum += (a0 + a1) + (a2 + a3);
  }
  for (; i < p->n; i++) {
    const int *row = p->x + (size_t)i * d;
    double prod = p->w[i];
    for (int dim = 0; dim < d; dim++) prod *= col[dim][row[dim]];
    sum += prod;
  }
  lua_pushnumber(L, sum);
  return 1;
}

void parzen_install(lua_State *L) {
  static const luaL_Reg kernel_methods[] = {
      {"eval", kernels_eval}, {"pick", kernels_pick}, {"tabled", kernels_tabled}, {NULL, NULL}};
  static const luaL_Reg point_methods[] = {{"add", points_add},
                                           {"count", points_count},
                                           {"weight", points_weight},
                                           {"mass", points_mass},
                                           {NULL, NULL}};
  luaL_newmetatable(L, KERNELS_MT);
  luaL_newlib(L, kernel_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, kernels_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newmetatable(L, POINTS_MT);
  luaL_newlib(L, point_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, points_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_pushcfunction(L, new_kernels);
  lua_setfield(L, -2, "parzen_kernels");
  lua_pushcfunction(L, new_points);
  lua_setfield(L, -2, "parzen_points");
}
