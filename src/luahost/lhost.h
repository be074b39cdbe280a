/* The Lua host: one lua_State with flagtune's embedded runtime (lua/, search/), the only
 * protected-call path into Lua (traceback handler, instruction budget), and registry refs
 * that are counted so a leak is caught in debug builds. */
#ifndef FLAGTUNE_LHOST_H
#define FLAGTUNE_LHOST_H

#include <lua.h>

typedef struct lhost lhost;

/* A new state with the standard libraries, `require` able to load embedded modules
 * ("dsl" -> lua/dsl.lua, "search.grid" -> search/grid.lua; a directory in
 * $FLAGTUNE_SEARCH_PATH overrides search/ files), and the C helpers in the global
 * table `ft` (ft.parse_bytes, ft.parse_duration, ft.format_bytes, ft.json_decode).
 * The state holds at most $FLAGTUNE_LUA_MEMORY_MB MiB (default 1024): past that an
 * allocation fails and the call reports "path:line: Lua memory limit of N MiB exceeded".
 * A budgeted call may also allocate at most 4 times that in all (string building copies:
 * "the call allocated more than N MiB in all ...") and take at most $FLAGTUNE_LUA_SECONDS
 * seconds of wall time (default 60: "the call ran past its time limit of N s"); the limits
 * live in lhost_limits.c.
 * Blocks of up to 4 KiB come from a bounded arena of the state's (1 MiB, free lists by
 * size), the rest from malloc; FLAGTUNE_LUA_ARENA=0 or AddressSanitizer: all from malloc.
 * `error`, `assert`, `xpcall` and `debug.sethook` are replaced by versions that keep the
 * limits and the user's line (see lhost_pcall). */
int lhost_new(lhost **out, char **err);
/* Closes the state. In debug builds, asserts that no counted ref is still live. */
void lhost_free(lhost *h);
/* Says that the process exits once the command in progress returns. States made from here
 * on start with the collector stopped until they hold 8 MiB (a `check` holds about 0.3 MB:
 * collecting it was work for nothing), and lhost_free leaves a state (its objects, its
 * finalizers) to the exit instead of closing it; together about 1.1 M of `check`'s 7.8 M
 * instructions. Nothing of Lua's needs the close: stdio buffers, a file a Lua script wrote
 * included, are flushed by exit(). Builds with AddressSanitizer, and FLAGTUNE_LUA_ARENA=0
 * (tests/valgrind.sh), still close, so LeakSanitizer and memcheck check what it held. */
void lhost_exit_follows(void);
/* SETTLED 1: the caller's event loop now watches SIGINT and SIGTERM and nothing will change
 * their handlers until it says 0 (it stops watching): the next budgeted call checks that the
 * host's watch wraps them, the calls after it do not check again. 0 (the default): every
 * budgeted call checks. Process-wide, as signal handlers are. */
void lhost_signals_settled(int settled);

/* From now on every new state is for checking only (`flagtune check`): the functions through
 * which Lua code changes the world (os.execute, os.remove, os.rename, os.exit, os.tmpname,
 * io.popen, io.tmpfile, io.open for writing, io.output to a file, package.loadlib and the
 * loaders of C modules) raise "path:line: os.execute is not run by `flagtune check` ..."
 * instead. Process-wide. */
void lhost_check_only(void);
lua_State *lhost_state(lhost *h);

/* Calls the function below NARGS arguments on the stack (lua.c's docall), with a message
 * handler that keeps "path:line: message" and adds a traceback when diag_verbose is set.
 * BUDGET > 0 limits the call to about that many VM instructions; past it the call fails
 * with "path:line: instruction budget of N exceeded" (the innermost line in a file of the
 * user's, not an embedded one). A broken limit cannot be caught by a pcall in Lua: it is
 * raised again at every instruction until this call unwinds, and fails the call even if
 * the code returns. An error raised without a location (error(msg, 0), error({})) gets the
 * user's line where error() was called. During a budgeted call a second SIGINT/SIGTERM
 * ends the process (the first goes to the handler already installed, e.g. libuv's).
 * Returns 0, or FT_ELUA with *err set. */
int lhost_pcall(lhost *h, int nargs, int nresults, long budget, char **err);

/* Pushes require(NAME). */
int lhost_require(lhost *h, const char *name, char **err);

/* require(MODULE)[FN](the value of ref ARG) without a budget, for a string: a new string, or
 * NULL when the call fails (*err set) or returns something else (*err left NULL). */
char *lhost_call_text(lhost *h, const char *module, const char *fn, int arg_ref, char **err);
/* A full collection (the sweep's end, before its memory is measured). */
void lhost_collect(lhost *h);

/* Counted registry refs: pops the value at the top and returns its ref. LHOST_NOREF (Lua's
 * LUA_NOREF) is no ref: lhost_unref ignores it. */
#define LHOST_NOREF (-2)
int lhost_ref(lhost *h);
void lhost_push_ref(lhost *h, int ref);
void lhost_unref(lhost *h, int ref);
int lhost_live_refs(const lhost *h);
/* Bytes the Lua state holds now (its allocator's count: live objects and garbage not yet
 * collected). */
size_t lhost_memory(const lhost *h);

/* ft.digest of the LEN bytes S (lua/kit.lua's seen sets are keyed by it) into OUT; returns its
 * length (S itself up to 16 bytes, else a marker byte and a 128-bit hash). */
#define LHOST_DIGEST_MAX 17
size_t lhost_digest(const char *s, size_t len, char out[LHOST_DIGEST_MAX]);

#endif
