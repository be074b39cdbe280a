/* The Lua host's limits on user code (lhost.h): the allocator that caps the memory a state
 * holds and counts the bytes a budgeted call has allocated (string building copies: `s = s ..
 * "x"` 1e7 times stays under the instruction budget and copies 50 TB), the count hook that
 * spends the instruction budget and watches the call's time, and the wrapper that lets a
 * second SIGINT/SIGTERM end a call stuck in C. A broken limit is sticky for the call (the
 * hook raises it at every instruction), so a `pcall` in user code cannot go on. Must not know
 * what the Lua code is. */
#include <lauxlib.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lhost_state.h"

/* The memory cap: Lua's allocator with a count of the bytes held. Growing past the limit
 * fails, which Lua raises as a memory error (LUA_ERRMEM, which no message handler sees, or
 * lauxlib's "not enough memory"): the fault and the user's line are noted here for
 * lhost_pcall to report. Lua's core first collects all garbage and asks once more for the
 * same block: when that succeeds, there was no fault. Shrinking never fails, as Lua
 * requires. alloc_slow is the path past the cap and the retry after a refusal, kept out
 * of line so that the common path (every block Lua asks for: 4,200 in a `check`) saves no
 * registers for it. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void lhost_limits_start(lhost *h) {
  h->copied = 0;
  h->copy_check = CLOCK_EVERY < h->copy_limit ? CLOCK_EVERY : h->copy_limit;
  h->deadline = now_s() + h->seconds;
}

void lhost_limits_end(lhost *h) {
  h->copy_check = SIZE_MAX;
}

/* The copy budget and the time, looked at every CLOCK_EVERY bytes a budgeted call allocates:
 * a call that builds a string piece by piece (each `..` copies all of it) runs few
 * instructions, each of them long, so the count hook alone would see the time too late. */
static int copy_or_time_fault(lhost *h) {
  if (h->fault != FAULT_NONE) return h->fault == FAULT_COPY || h->fault == FAULT_TIME;
  if (h->copied > h->copy_limit)
    h->fault = FAULT_COPY;
  else if (now_s() > h->deadline)
    h->fault = FAULT_TIME;
  else
    h->copy_check =
        h->copied + CLOCK_EVERY < h->copy_limit ? h->copied + CLOCK_EVERY : h->copy_limit;
  if (h->fault == FAULT_NONE) return 0;
#if LUA_VERSION_RELEASE_NUM < 50406
  lhost_where_user(h->L, 0, h->fault_where, sizeof h->fault_where);
#endif
  return 1;
}

static __attribute__((noinline)) void *alloc_slow(lhost *h, void *ptr, size_t old, size_t nsize) {
  int over_cap = nsize > old && h->depth > 0 &&
                 (h->mem >= h->mem_limit || nsize - old > h->mem_limit - h->mem);
  /* The cap first: one block past it is the memory's fault, however much was copied. */
  if (!over_cap && nsize > old && h->depth > 0 && h->copied > h->copy_check &&
      copy_or_time_fault(h))
    return NULL;
  int retry = h->refused && ptr == h->refused_ptr && nsize == h->refused_size;
  h->refused = 0;
  /* Only inside lhost_pcall: C code between calls pushes a few values without protection,
   * where a failed allocation would be a Lua panic (abort); the next call then fails. */
  if (nsize > old && h->depth > 0 &&
      (h->mem >= h->mem_limit || nsize - old > h->mem_limit - h->mem)) {
    if (h->fault == FAULT_NONE) {
      h->fault = FAULT_MEMORY;
#if LUA_VERSION_RELEASE_NUM < 50406
      /* Before 5.4.6 a growing stack keeps its old block (and every pointer into it) valid
       * while the new one is allocated, so the frames can be read from here. 5.4.6 turns
       * them into offsets first: there the line comes from the hook, or stays unknown. */
      lhost_where_user(h->L, 0, h->fault_where, sizeof h->fault_where);
#endif
    }
    h->refused = 1;
    h->refused_ptr = ptr;
    h->refused_size = nsize;
    return NULL;
  }
  void *p = arena_resize(&h->arena, ptr, old, nsize);
  if (p) h->mem = h->mem - old + nsize;
  if (p && retry && h->fault == FAULT_MEMORY) { /* the collection made room after all */
    h->fault = FAULT_NONE;
    h->fault_where[0] = '\0';
  }
  return p;
}

void *lhost_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  lhost *h = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    arena_free(&h->arena, ptr, osize);
    h->mem -= old;
    return NULL;
  }
  if (nsize > old) h->copied += nsize - old;
  if (h->refused || h->copied > h->copy_check ||
      (nsize > old && h->depth > 0 &&
       (h->mem >= h->mem_limit || nsize - old > h->mem_limit - h->mem)))
    return alloc_slow(h, ptr, old, nsize);
  void *p = arena_resize(&h->arena, ptr, old, nsize);
  if (p) h->mem = h->mem - old + nsize;
  return p;
}

/* FLAGTUNE_LUA_MEMORY_MB (a positive number of MiB) or the default. */
size_t lhost_memory_limit(void) {
  const char *s = getenv("FLAGTUNE_LUA_MEMORY_MB");
  char *end;
  long long mb = s && *s ? strtoll(s, &end, 10) : 0;
  if (mb <= 0 || *end != '\0' || mb > (long long)(SIZE_MAX >> 21)) mb = MEMORY_MB_DEFAULT;
  return (size_t)mb << 20;
}

/* The fault's message, "path:line: instruction budget of N exceeded", into BUF. Formatted
 * in C: lhost_pcall may need it while the state is at its memory limit. */
void lhost_fault_text(const lhost *h, char *buf, size_t n) {
  if (h->fault == FAULT_BUDGET)
    snprintf(buf, n, "%sinstruction budget of %ld exceeded", h->fault_where, h->budget);
  else if (h->fault == FAULT_COPY)
    snprintf(buf, n,
             "%sthe call allocated more than %zu MiB in all (a string built piece by piece with "
             "`..` is copied each time: collect the pieces in a table and table.concat them)",
             h->fault_where, h->copy_limit >> 20);
  else if (h->fault == FAULT_TIME)
    snprintf(buf, n, "%sthe call ran past its time limit of %g s", h->fault_where, h->seconds);
  else
    snprintf(buf, n, "%sLua memory limit of %zu MiB exceeded", h->fault_where, h->mem_limit >> 20);
}

/* The count hook: counts instructions; once the budget is spent (or the memory cap was hit)
 * it raises the fault, and from then on at every instruction, so that no pcall in the
 * user's code can go on looping. Level 0 inside a hook is the Lua function running. */
/* Starts the collector held by lhost_new once the state holds GC_HOLD_BYTES. */
void lhost_release_gc(lhost *h) {
  if (h->gc_held && h->mem > GC_HOLD_BYTES) {
    h->gc_held = 0;
    lua_gc(h->L, LUA_GCRESTART);
  }
}

void lhost_budget_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lhost *h = lhost_of(L);
  lhost_release_gc(h);
  if (h->budget <= 0) return; /* a coroutine made in an earlier budgeted call */
  if (h->fault == FAULT_NONE) {
    int step = lua_gethookcount(L);
    h->used += step;
    /* A coroutine left raising at every instruction by an earlier fault counts normally. */
    if (step != HOOK_STEP) lua_sethook(L, lhost_budget_hook, LUA_MASKCOUNT, HOOK_STEP);
    if (h->used <= h->budget && now_s() <= h->deadline) return;
    h->fault = h->used > h->budget ? FAULT_BUDGET : FAULT_TIME;
  }
  if (!h->fault_where[0]) lhost_where_user(L, 0, h->fault_where, sizeof h->fault_where);
  lua_sethook(L, lhost_budget_hook, LUA_MASKCOUNT, 1);
  char msg[WHERE_MAX + 64];
  lhost_fault_text(h, msg, sizeof msg);
  lua_pushstring(L, msg);
  lua_error(L);
}

double lhost_time_limit(void) {
  const char *s = getenv("FLAGTUNE_LUA_SECONDS");
  char *end;
  double v = s && *s ? strtod(s, &end) : 0;
  return v > 0 && v < 1e9 && *end == '\0' ? v : SECONDS_DEFAULT;
}

/* ---- a second SIGINT/SIGTERM during a budgeted call ends the process ---- */

/* The budget stops Lua code, but not a C function it called (a string.find with a pattern
 * that backtracks for hours), and the sweep's libuv signal handles run only once the call
 * returns. So a real handler of SIGINT/SIGTERM (libuv's) is wrapped: during a budgeted call
 * the first signal goes on to it (the sweep stops once the call returns), the second ends the
 * process at once by the signal's default action (trials die with it: their supervisor has a
 * parent-death signal); between calls every signal goes on to it, uncounted. Where the
 * default action is in force nothing is wrapped: the first signal already ends the process.
 *
 * The wrapper stays installed from one call to the next (it was installed and restored
 * around each call: 8 rt_sigaction a trial, docs/COST.md). Each budgeted call still looks
 * (one rt_sigaction a signal, no change) whether the wrapper is the handler: libuv installs
 * its own over whatever is there when a loop starts watching a signal and the default action
 * when it stops (libuv's src/unix/signal.c, uv__signal_register_handler and
 * uv__signal_unregister_handler), and other code here does the same (the sweep's early
 * catch, flag probing), so the handler found is wrapped afresh whenever it is not ours. The
 * wrapper takes the wrapped handler's mask (libuv's blocks every signal: its handler must not
 * run inside itself) and its SA_RESTART (flag probing's handler has none, so that a poll
 * returns at once), so that forwarding changes nothing. lhost_free puts the wrapped handler
 * back.
 *
 * The sweep tells the host (lhost_signals_settled) when its loop starts watching both signals
 * and when it stops: while its loop watches them nothing else installs a handler (flag
 * probing is a command of its own, the early catch comes before), so the first budgeted call
 * after it was told looks and wraps, and the calls after it do not look again (2 rt_sigaction
 * a call, 4 a trial, saved). Told of nothing, every call looks, as above. */
static const int watched[2] = {SIGINT, SIGTERM};
static struct sigaction watched_prev[2];    /* what the wrapper forwards to */
static volatile sig_atomic_t watched_calls; /* budgeted calls in progress */
static volatile sig_atomic_t watched_seen;  /* signals during the outermost of them */
static int watch_settled; /* lhost_signals_settled: the handlers stay as they are */
static int watch_checked; /* ... and a call has looked since it was told */

static void on_watched(int sig, siginfo_t *info, void *ctx) {
  int i = sig == SIGINT ? 0 : 1;
  if (watched_calls > 0 && ++watched_seen >= 2) {
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when this handler returns */
    return;
  }
  if (watched_prev[i].sa_flags & SA_SIGINFO)
    watched_prev[i].sa_sigaction(sig, info, ctx);
  else if (watched_prev[i].sa_handler != SIG_DFL && watched_prev[i].sa_handler != SIG_IGN)
    watched_prev[i].sa_handler(sig);
}

static int is_watch(const struct sigaction *sa) {
  return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_watched;
}

/* Whether SA is a handler of someone's (not the default action, not ignored). */
static int is_real(const struct sigaction *sa) {
  return !(sa->sa_flags & SA_SIGINFO) ? sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN
                                      : sa->sa_sigaction != NULL;
}

void lhost_signals_settled(int settled) {
  watch_settled = settled;
  watch_checked = 0;
}

void lhost_watch_signals(void) {
  for (int i = 0; i < 2 && !watch_checked; i++) {
    struct sigaction cur;
    if (sigaction(watched[i], NULL, &cur) != 0 || is_watch(&cur) || !is_real(&cur)) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_watched;
    sa.sa_flags = SA_SIGINFO | (cur.sa_flags & SA_RESTART);
    sa.sa_mask = cur.sa_mask;
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    watched_prev[i] = cur; /* not read until the wrapper is installed below */
    sigaction(watched[i], &sa, NULL);
  }
  watch_checked = watch_settled;
  if (watched_calls == 0) watched_seen = 0;
  watched_calls++;
}

void lhost_unwatch_signals(void) {
  watched_calls--;
}

/* Puts the wrapped handlers back where the wrapper still is (none inside a call). */
void lhost_watch_remove(void) {
  if (watched_calls > 0) return;
  watch_checked = 0; /* the next call looks again */
  for (int i = 0; i < 2; i++) {
    struct sigaction cur;
    if (sigaction(watched[i], NULL, &cur) == 0 && is_watch(&cur))
      sigaction(watched[i], &watched_prev[i], NULL);
  }
}
