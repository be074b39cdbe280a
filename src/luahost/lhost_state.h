/* What lhost.c, lhost_limits.c, lhost_runtime.c and lhost_where.c share: the host's struct,
 * the limits' entry points, the runtime's installers and where user code is. lhost.c calls
 * the other three; lhost_limits.c calls lhost_where.c; lhost_runtime.c and lhost_where.c
 * call none of them. Private to the four files. */
#ifndef FLAGTUNE_LHOST_STATE_H
#define FLAGTUNE_LHOST_STATE_H

#include <lua.h>
#include <stddef.h>

#include "arena.h"
#include "lhost.h"

/* A limit broken by the call in progress. It is sticky: once set, the count hook raises it
 * again at every instruction until the protected call made by C unwinds, so a `pcall` in
 * user code can catch it but cannot go on running. */
enum { FAULT_NONE, FAULT_BUDGET, FAULT_MEMORY, FAULT_COPY, FAULT_TIME };

#define WHERE_MAX 512

struct lhost {
  lua_State *L;
  lhost *kept; /* the next state left open for the exit (lhost_exit_follows) */
  arena arena;
  int gc_held; /* the collector is stopped until the state holds GC_HOLD_BYTES */
  int live_refs;
  int depth;                   /* lhost_pcall calls in progress */
  long budget;                 /* instructions allowed to the call in progress, 0: none */
  long used;                   /* instructions counted so far in that call */
  size_t mem;                  /* bytes the state holds now */
  size_t mem_limit;            /* bytes it may hold */
  size_t copied;               /* bytes allocated (grown) by the budgeted call in progress */
  size_t copy_limit;           /* ...that it may allocate in all */
  size_t copy_check;           /* the next count at which the allocator looks (SIZE_MAX: never) */
  double seconds;              /* the wall time a budgeted call may take */
  double deadline;             /* CLOCK_MONOTONIC seconds when the call in progress must end */
  int refused;                 /* the last request was a growth that was refused: */
  void *refused_ptr;           /* ...this block... */
  size_t refused_size;         /* ...to this size */
  int fault;                   /* FAULT_*: a limit broken by the call in progress */
  char fault_where[WHERE_MAX]; /* "path:line: " where it broke ("" when unknown) */
  char raise_where[WHERE_MAX]; /* "path:line: " of the last unlocated error() in user code */
  char raise_msg[WHERE_MAX];   /* ...and the start of its message as the handler shows it */
};

#define HOOK_STEP 1000 /* the count hook fires every HOOK_STEP instructions */
/* A state that lives until a short command's exit (lhost_exit_follows) starts with its
 * collector stopped: `check` holds about 0.3 MB, and collecting it cost 0.4 M of its 5.9 M
 * instructions for nothing. Past this many bytes (seen at every lhost_pcall and every count
 * hook, or by the cap's emergency collection) it collects as any state does. */
#define GC_HOLD_BYTES ((size_t)8 << 20)
#define MEMORY_MB_DEFAULT 1024
#define COPY_PER_MEMORY 4    /* a budgeted call may allocate 4 times the memory cap in all */
#define SECONDS_DEFAULT 60.0 /* the wall time of one budgeted call ($FLAGTUNE_LUA_SECONDS) */
#define CLOCK_EVERY ((size_t)16 << 20) /* the allocator reads the clock every 16 MiB */

static inline lhost *lhost_of(lua_State *L) {
  lhost *h;
  lua_getallocf(L, (void **)&h);
  return h;
}

/* lhost_runtime.c: the embedded-first `require` searcher, and the global table `ft`. */
void lhost_install_searcher(lua_State *L);
void lhost_install_ft(lua_State *L);

/* lhost_where.c: "path:line: " of the innermost frame of the user's code at or above LEVEL into
 * BUF (allocates nothing); returns 1 when the frame is the user's. */
int lhost_where_user(lua_State *L, int level, char *buf, size_t n);

/* lhost_limits.c: the state's allocator (the memory cap, the copy budget), the cap from the
 * environment, a broken limit's message, the collector held at start, the count hook (the
 * instruction budget, the time limit), and the wrapper of SIGINT/SIGTERM during budgeted
 * calls. */
void *lhost_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
size_t lhost_memory_limit(void);
/* $FLAGTUNE_LUA_SECONDS (a positive number) or SECONDS_DEFAULT. */
double lhost_time_limit(void);
void lhost_fault_text(const lhost *h, char *buf, size_t n);
void lhost_release_gc(lhost *h);
void lhost_budget_hook(lua_State *L, lua_Debug *ar);
/* Starts a budgeted call's limits other than the instruction count: the time and the copy
 * budget. */
void lhost_limits_start(lhost *h);
/* Ends them: between calls the allocator counts nothing. */
void lhost_limits_end(lhost *h);
void lhost_watch_signals(void);
void lhost_unwatch_signals(void);
void lhost_watch_remove(void);

#endif
