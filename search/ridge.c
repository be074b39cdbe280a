/* Bayesian ridge regression on main effects for search/tpe.lua's surrogate, in C. One
 * userdata type:
 *   ft.ridge_new({ {n=, cat=}, ... }, lambda) -> R: a model over the value indices of the
 *     given parameters. Features: column 1 the intercept; a categorical parameter (or an
 *     ordered one of at most 4 values) one dummy per value but the first; a longer ordered one
 *     its centred position u = (j - 1) / (n - 1) - 0.5 and u^2 - 1/12.
 *   R:add(x, y [, old]): adds the observation at index vector x with target y (old nil), or
 *     moves an added one's target from old to y (a repeat changes its mean, not its row).
 *   R:fit([e]): solves (X'X + diag(lam)) m = X'y (lam: lambda on every column but the
 *     intercept's, which is free, until R:relevance moves them) by Cholesky, sets the
 *     residual scale sigma = sqrt(RSS / n) (at least 0.01) and keeps the weights
 *     w = m + sigma L'^-1 e (a Thompson draw from e, a list of cols() standard normals) or
 *     w = m (no e). Returns sigma.
 *   R:relevance(iters, lo, hi): re-estimates one prior precision per parameter from the data
 *     (automatic relevance determination, below); R:precisions() the list lam,
 *     R:set_precisions(list) sets it.
 *   R:predict(x): w . features(x) of the last fit; R:weights() the list w. R:cols(), R:count().
 *   R:leverage(x): x'(X'X + diag(lam))^-1 x from the last fit's factorisation (one
 *     triangular solve, cols^2 / 2): the leave-one-out error of an added row is its residual
 *     over 1 - leverage.
 * The sufficient statistics X'X and X'y are kept as rows arrive, so a fit costs one
 * cols^3 / 6 factorisation whatever the number of observations. Owns only its memory (Lua's
 * allocator); draws no random numbers (the caller passes e), so a seeded sweep replays. */
#include "ridge.h"

#include <lauxlib.h>
#include <math.h>
#include <string.h>

#define RIDGE_MT "flagtune.ridge"

typedef struct {
  int d;         /* parameters */
  int p;         /* feature columns, intercept included */
  int n;         /* observations added */
  int fitted;    /* w holds a fit */
  double lambda; /* the prior precision lam starts from (every weight but the intercept) */
  double yy;     /* y'y */
  int *vn;       /* d: values per parameter */
  int *off;      /* d: first column of the parameter (0-based), -1 if it has none */
  int *dummy;    /* d: 1 = one dummy per value but the first, 0 = u and u^2 */
  double *xtx;   /* p x p */
  double *xty;   /* p */
  double *chol;  /* p x p, lower triangle: the last factorisation */
  double *w;     /* p: the weights of the last fit */
  double *tmp;   /* p: solve scratch */
  double *lam;   /* p: each column's prior precision (lambda until R:relevance moves it) */
  double *inv;   /* p: a column of the inverse factor (R:relevance) */
  void *mem;     /* the one allocation */
  int *cols;     /* 2 d + 1: one row's non-zero columns */
  double *vals;  /* 2 d + 1: their values */
} ridge;

static void *grow(lua_State *L, void *ptr, size_t osize, size_t nsize) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  return f(ud, ptr, osize, nsize);
}

static size_t bytes(const ridge *r) {
  size_t d = (size_t)r->d, p = (size_t)r->p;
  return d * 3 * sizeof(int) + (2 * p * p + 5 * p) * sizeof(double) + (2 * d + 1) * sizeof(int) +
         (2 * d + 1) * sizeof(double);
}

static int ridge_gc(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  if (r->mem) grow(L, r->mem, bytes(r), 0);
  r->mem = NULL;
  return 0;
}

/* The largest feature count a model may have: X'X and the factor are p^2 doubles each. */
#define COLS_MAX 2048

static int ridge_new(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  double lambda = luaL_checknumber(L, 2);
  luaL_argcheck(L, lambda > 0 && isfinite(lambda), 2, "lambda must be a positive number");
  lua_Integer d = luaL_len(L, 1);
  luaL_argcheck(L, d >= 0 && d <= 4096, 1, "at most 4096 parameters");
  ridge *r = lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, RIDGE_MT);
  r->d = (int)d;
  r->lambda = lambda;
  /* Columns first (into the stack's locals), then one allocation. */
  int p = 1;
  for (int k = 0; k < r->d; k++) {
    lua_rawgeti(L, 1, k + 1);
    if (!lua_istable(L, -1)) return luaL_error(L, "ridge_new: spec %d is not a table", k + 1);
    lua_getfield(L, -1, "n");
    int isnum;
    lua_Integer n = lua_tointegerx(L, -1, &isnum);
    if (!isnum || n < 1 || n > (1 << 24))
      return luaL_error(L, "ridge_new: spec %d: n must be an integer from 1 to 2^24", k + 1);
    lua_getfield(L, -2, "cat");
    int cat = lua_toboolean(L, -1);
    lua_pop(L, 3);
    if (cat || n <= 4)
      p += (int)n - 1;
    else
      p += 2;
    if (p > COLS_MAX) return luaL_error(L, "ridge_new: more than %d feature columns", COLS_MAX);
  }
  r->p = p;
  char *m = grow(L, NULL, 0, bytes(r));
  if (!m) return luaL_error(L, "ridge_new: out of memory");
  memset(m, 0, bytes(r));
  /* Doubles first (aligned by the allocator), then the ints. */
  size_t D = (size_t)r->d, P = (size_t)p;
  r->mem = m;
  /* The block is typed by offset, never read as both types: cppcheck's warning is spurious. */
  // cppcheck-suppress invalidPointerCast
  double *base = (double *)m;
  r->xtx = base;
  r->chol = r->xtx + P * P;
  r->xty = r->chol + P * P;
  r->w = r->xty + P;
  r->tmp = r->w + P;
  r->lam = r->tmp + P;
  r->inv = r->lam + P;
  r->vals = r->inv + P;
  // cppcheck-suppress invalidPointerCast
  r->vn = (int *)(r->vals + 2 * D + 1);
  r->off = r->vn + D;
  r->dummy = r->off + D;
  r->cols = r->dummy + D;
  int col = 1;
  for (int k = 0; k < r->d; k++) {
    lua_rawgeti(L, 1, k + 1);
    lua_getfield(L, -1, "n");
    int n = (int)lua_tointeger(L, -1);
    lua_getfield(L, -2, "cat");
    int cat = lua_toboolean(L, -1);
    lua_pop(L, 3);
    r->vn[k] = n;
    r->dummy[k] = cat || n <= 4;
    r->off[k] = n > 1 ? col : -1;
    col += r->dummy[k] ? n - 1 : (n > 1 ? 2 : 0);
  }
  r->lam[0] = 1e-6;
  for (int i = 1; i < p; i++) r->lam[i] = lambda;
  return 1;
}

/* The non-zero features of the index vector at stack index ARG: r->cols / r->vals, their
 * count returned. A missing index (nil) adds nothing. */
static int row(lua_State *L, ridge *r, int arg) {
  luaL_checktype(L, arg, LUA_TTABLE);
  int m = 0;
  r->cols[m] = 0;
  r->vals[m++] = 1;
  for (int k = 0; k < r->d; k++) {
    int t = lua_rawgeti(L, arg, k + 1);
    if (t == LUA_TNIL) {
      lua_pop(L, 1);
      continue;
    }
    int isnum;
    lua_Integer j = lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    int n = r->vn[k];
    if (!isnum || j < 1 || j > n)
      return luaL_error(L, "ridge: parameter %d: index out of range 1..%d", k + 1, n);
    if (r->off[k] < 0) continue;
    if (r->dummy[k]) {
      if (j > 1) {
        r->cols[m] = r->off[k] + (int)j - 2;
        r->vals[m++] = 1;
      }
    } else {
      double u = (double)(j - 1) / (n - 1) - 0.5;
      r->cols[m] = r->off[k];
      r->vals[m++] = u;
      r->cols[m] = r->off[k] + 1;
      r->vals[m++] = u * u - 1.0 / 12;
    }
  }
  return m;
}

static int ridge_add(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  int m = row(L, r, 2);
  double y = luaL_checknumber(L, 3), dy = y;
  size_t P = (size_t)r->p;
  if (lua_isnoneornil(L, 4)) {
    for (int a = 0; a < m; a++) {
      double *ra = r->xtx + (size_t)r->cols[a] * P, va = r->vals[a];
      for (int b = 0; b < m; b++) ra[r->cols[b]] += va * r->vals[b];
    }
    r->n++;
    r->yy += y * y;
  } else {
    double old = luaL_checknumber(L, 4);
    dy = y - old;
    r->yy = r->yy - old * old + y * y;
  }
  for (int a = 0; a < m; a++) r->xty[r->cols[a]] += r->vals[a] * dy;
  return 0;
}

/* Factorises X'X + diag(lam) into r->chol, solves for the posterior mean (into r->w) and
 * returns the residual sum of squares y'y - 2 m'X'y + m'X'X m. */
static double solve(ridge *r) {
  int p = r->p;
  size_t P = (size_t)p;
  double *C = r->chol, *A = r->xtx, *z = r->tmp, *m = r->w;
  for (int i = 0; i < p; i++) { /* Cholesky of X'X + diag(lam) */
    double *Ci = C + (size_t)i * P;
    const double *Ai = A + (size_t)i * P;
    for (int j = 0; j <= i; j++) {
      double s = Ai[j];
      if (i == j) s += r->lam[i];
      const double *Cj = C + (size_t)j * P;
      for (int k = 0; k < j; k++) s -= Ci[k] * Cj[k];
      if (i == j)
        Ci[i] = sqrt(fmax(s, 1e-12));
      else
        Ci[j] = s / Cj[j];
    }
  }
  for (int i = 0; i < p; i++) { /* forward: C z = X'y */
    const double *Ci = C + (size_t)i * P;
    double s = r->xty[i];
    for (int k = 0; k < i; k++) s -= Ci[k] * z[k];
    z[i] = s / Ci[i];
  }
  for (int i = p - 1; i >= 0; i--) { /* back: C' m = z */
    double s = z[i];
    for (int k = i + 1; k < p; k++) s -= C[(size_t)k * P + i] * m[k];
    m[i] = s / C[(size_t)i * P + i];
  }
  double rss = r->yy;
  for (int i = 0; i < p; i++) {
    const double *Ai = A + (size_t)i * P;
    double s = 0;
    for (int j = 0; j < p; j++) s += Ai[j] * m[j];
    rss = rss - 2 * m[i] * r->xty[i] + m[i] * s;
  }
  return rss;
}

/* R:relevance(iters, lo, hi): automatic relevance determination. ITERS rounds of MacKay's
 * fixed point for one prior precision per parameter (its columns share it): with the
 * posterior mean m and S = (X'X + diag(lam))^-1, each column's well-determinedness
 * gamma_j = 1 - lam_j S_jj, the noise sigma^2 = RSS / (n - sum gamma), and the parameter's
 * precision sigma^2 sum gamma_j / sum m_j^2 (the evidence's maximum given the others), kept
 * within [LO, HI]. A parameter whose effect the data do not support is shrunk toward HI
 * (its weights toward 0), one with a clear effect toward LO. The precisions persist (later
 * fits use them; the next call continues from them). Returns sigma^2 of the last round. */
static int ridge_relevance(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  lua_Integer iters = luaL_checkinteger(L, 2);
  double lo = luaL_checknumber(L, 3), hi = luaL_checknumber(L, 4);
  luaL_argcheck(L, iters >= 0 && iters <= 1000, 2, "iterations must be from 0 to 1000");
  luaL_argcheck(L, lo > 0 && isfinite(lo), 3, "lo must be a positive number");
  luaL_argcheck(L, hi >= lo && isfinite(hi), 4, "hi must be a number at least lo");
  int p = r->p;
  size_t P = (size_t)p;
  double sigma2 = 0;
  for (lua_Integer it = 0; it < iters; it++) {
    double rss = solve(r), dof = 0;
    const double *C = r->chol;
    double *x = r->inv, *gam = r->tmp; /* tmp is free after solve */
    for (int j = 0; j < p; j++) {      /* S_jj = |column j of C^-1|^2 */
      double ss = 0;
      for (int i = j; i < p; i++) {
        const double *Ci = C + (size_t)i * P;
        double s = i == j ? 1 : 0;
        for (int k = j; k < i; k++) s -= Ci[k] * x[k];
        x[i] = s / Ci[i];
        ss += x[i] * x[i];
      }
      gam[j] = fmin(1, fmax(0, 1 - r->lam[j] * ss));
      dof += gam[j];
    }
    sigma2 = fmax(rss / fmax(r->n - dof, 1), 1e-4);
    for (int k = 0; k < r->d; k++) {
      if (r->off[k] < 0) continue;
      int c0 = r->off[k], c1 = c0 + (r->dummy[k] ? r->vn[k] - 1 : 2);
      double g = 0, mm = 0;
      for (int j = c0; j < c1; j++) g += gam[j], mm += r->w[j] * r->w[j];
      double lam = mm > 0 ? sigma2 * g / mm : hi;
      lam = fmin(hi, fmax(lo, lam));
      for (int j = c0; j < c1; j++) r->lam[j] = lam;
    }
  }
  r->fitted = 0; /* w holds a mean under the old precisions: fit again */
  lua_pushnumber(L, sigma2);
  return 1;
}

/* R:precisions(): the list of each column's prior precision (the intercept's 1e-6 first). */
static int ridge_precisions(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  lua_createtable(L, r->p, 0);
  for (int i = 0; i < r->p; i++) {
    lua_pushnumber(L, r->lam[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* R:set_precisions(list): sets each column's prior precision (cols() positive numbers; the
 * first, the intercept's, as given): a model with the precisions another one learnt. */
static int ridge_set_precisions(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_argcheck(L, luaL_len(L, 2) == r->p, 2, "one precision per column");
  for (int i = 0; i < r->p; i++) {
    lua_rawgeti(L, 2, i + 1);
    int isnum;
    double v = lua_tonumberx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum || !(v > 0) || !isfinite(v))
      return luaL_error(L, "ridge set_precisions: precision %d is not a positive number", i + 1);
  }
  for (int i = 0; i < r->p; i++) {
    lua_rawgeti(L, 2, i + 1);
    r->lam[i] = lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  r->fitted = 0;
  return 0;
}

static int ridge_fit(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  int draw = !lua_isnoneornil(L, 2);
  if (draw) {
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_argcheck(L, luaL_len(L, 2) >= r->p, 2, "fewer normals than columns");
  }
  int p = r->p;
  size_t P = (size_t)p;
  double *C = r->chol, *z = r->tmp, *m = r->w;
  double rss = solve(r);
  double sigma = sqrt(fmax(rss / (r->n > 1 ? r->n : 1), 1e-4));
  if (draw) { /* C' v = e: v ~ N(0, (X'X + diag(lam))^-1); w = m + sigma v */
    double *v = z;
    for (int i = p - 1; i >= 0; i--) {
      lua_rawgeti(L, 2, i + 1);
      int isnum;
      double s = lua_tonumberx(L, -1, &isnum);
      lua_pop(L, 1);
      if (!isnum) return luaL_error(L, "ridge fit: normal %d is not a number", i + 1);
      for (int k = i + 1; k < p; k++) s -= C[(size_t)k * P + i] * v[k];
      v[i] = s / C[(size_t)i * P + i];
    }
    for (int i = 0; i < p; i++) m[i] += sigma * v[i];
  }
  r->fitted = 1;
  lua_pushnumber(L, sigma);
  return 1;
}

static int ridge_predict(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  if (!r->fitted) return luaL_error(L, "ridge predict: no fit yet");
  int m = row(L, r, 2);
  double s = 0;
  for (int a = 0; a < m; a++) s += r->w[r->cols[a]] * r->vals[a];
  lua_pushnumber(L, s);
  return 1;
}

static int ridge_leverage(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  if (!r->fitted) return luaL_error(L, "ridge leverage: no fit yet");
  int m = row(L, r, 2), p = r->p;
  size_t P = (size_t)p;
  double *z = r->inv, h = 0; /* C z = x, h = |z|^2 */
  for (int i = 0; i < p; i++) z[i] = 0;
  for (int a = 0; a < m; a++) z[r->cols[a]] += r->vals[a];
  for (int i = 0; i < p; i++) {
    const double *Ci = r->chol + (size_t)i * P;
    double s = z[i];
    for (int k = 0; k < i; k++) s -= Ci[k] * z[k];
    z[i] = s / Ci[i];
    h += z[i] * z[i];
  }
  lua_pushnumber(L, h);
  return 1;
}

static int ridge_weights(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  if (!r->fitted) return luaL_error(L, "ridge weights: no fit yet");
  lua_createtable(L, r->p, 0);
  for (int i = 0; i < r->p; i++) {
    lua_pushnumber(L, r->w[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int ridge_cols(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  lua_pushinteger(L, r->p);
  return 1;
}

static int ridge_count(lua_State *L) {
  ridge *r = luaL_checkudata(L, 1, RIDGE_MT);
  lua_pushinteger(L, r->n);
  return 1;
}

void ridge_install(lua_State *L) {
  static const luaL_Reg methods[] = {{"add", ridge_add},
                                     {"fit", ridge_fit},
                                     {"predict", ridge_predict},
                                     {"leverage", ridge_leverage},
                                     {"weights", ridge_weights},
                                     {"cols", ridge_cols},
                                     {"count", ridge_count},
                                     {"relevance", ridge_relevance},
                                     {"precisions", ridge_precisions},
                                     {"set_precisions", ridge_set_precisions},
                                     {NULL, NULL}};
  luaL_newmetatable(L, RIDGE_MT);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ridge_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_pushcfunction(L, ridge_new);
  lua_setfield(L, -2, "ridge_new");
}
