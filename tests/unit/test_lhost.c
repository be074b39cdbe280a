/* Unit tests for src/luahost/lhost.c: the limits on user code hold whatever the code does to
 * escape them (pcall, xpcall handlers, coroutines), their errors name the user's line,
 * errors raised without a location get it back, and a second SIGINT ends a call stuck in
 * C. Chunks are loaded as "@u.lua" (a file of the user's, not an embedded one). Every case
 * closes its state with no live refs. */
#include <errno.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "lhost.h"
#include "test.h"

static lhost *host(void) {
  lhost *h = NULL;
  char *err = NULL;
  if (lhost_new(&h, &err) != 0) fprintf(stderr, "lhost_new: %s\n", err ? err : "?");
  free(err);
  return h;
}

/* Runs CODE as chunk NAME under BUDGET; returns the error (caller frees) or NULL. */
static char *run_as(lhost *h, const char *name, const char *code, long budget) {
  lua_State *L = lhost_state(h);
  int top = lua_gettop(L);
  if (luaL_loadbufferx(L, code, strlen(code), name, "t") != LUA_OK) {
    char *msg = xstrdup(lua_tostring(L, -1));
    lua_settop(L, top);
    return msg;
  }
  char *err = NULL;
  int rc = lhost_pcall(h, 0, 0, budget, &err);
  CHECK_INT(lua_gettop(L), top);
  if (rc == 0) return NULL;
  return err ? err : xstrdup("(no message)");
}

static char *run(lhost *h, const char *code, long budget) {
  return run_as(h, "@u.lua", code, budget);
}

static void expect_error(lhost *h, const char *code, long budget, const char *want) {
  char *err = run(h, code, budget);
  CHECK_STR(err, want);
  free(err);
}

static void expect_ok(lhost *h, const char *code, long budget) {
  char *err = run(h, code, budget);
  if (err) fprintf(stderr, "unexpected error: %s\n", err);
  CHECK(err == NULL);
  free(err);
}

TEST(budget_loop) {
  lhost *h = host();
  expect_error(h, "local n = 0\nwhile true do n = n + 1 end", 1000000,
               "u.lua:2: instruction budget of 1000000 exceeded");
  lhost_free(h);
}

/* The reproduction: pcall caught the budget's error and the next loop ran forever. */
TEST(budget_pcall_cannot_catch) {
  lhost *h = host();
  expect_error(h, "pcall(function() while true do end end) while true do end", 1000000,
               "u.lua:1: instruction budget of 1000000 exceeded");
  expect_error(h, "while true do\n  pcall(function() while true do end end)\nend", 1000000,
               "u.lua:2: instruction budget of 1000000 exceeded");
  /* Caught and then returning at once still fails the call. */
  expect_error(h, "pcall(function() while true do end end)\nreturn 1", 1000000,
               "u.lua:1: instruction budget of 1000000 exceeded");
  /* The state is usable afterwards, with a fresh budget. */
  expect_ok(h, "local n = 0 for i = 1, 1000 do n = n + i end", 1000000);
  lhost_free(h);
}

TEST(budget_xpcall_handler_and_coroutines) {
  lhost *h = host();
  expect_error(h,
               "xpcall(function() while true do end end, function() while true do end end)\n"
               "while true do end",
               1000000, "u.lua:1: instruction budget of 1000000 exceeded");
  expect_error(h,
               "while true do\n"
               "  pcall(coroutine.wrap(function() while true do end end))\n"
               "end",
               1000000, "u.lua:2: instruction budget of 1000000 exceeded");
  expect_error(h,
               "local co = coroutine.create(function() while true do end end)\n"
               "while true do coroutine.resume(co) end",
               1000000, "u.lua:1: instruction budget of 1000000 exceeded");
  /* The budget is the count hook: user code may not remove it. */
  expect_error(h, "debug.sethook()\nwhile true do end", 1000000,
               "u.lua:1: debug.sethook is not available to experiment and strategy code");
  expect_error(h, "pcall(debug.sethook)\nwhile true do end", 1000000,
               "u.lua:2: instruction budget of 1000000 exceeded");
  /* A handler that errors or returns still works as xpcall's handler outside faults. */
  expect_ok(h,
            "local ok, e = xpcall(function() error('x') end, function(m) return 'h:' .. m end)\n"
            "assert(not ok and e == 'h:u.lua:1: x')\n"
            "assert(select('#', xpcall(function(...) return ... end, print, 1, 2)) == 3)",
            1000000);
  expect_ok(h, "return 1", 1000000);
  lhost_free(h);
}

TEST(memory_cap) {
  setenv("FLAGTUNE_LUA_MEMORY_MB", "16", 1);
  lhost *h = host();
  unsetenv("FLAGTUNE_LUA_MEMORY_MB");
  /* Growth in small steps, every memory error caught by pcall. */
  expect_error(h,
               "local t = {}\n"
               "while true do pcall(function() t[#t + 1] = ('x'):rep(1000) .. #t end) end",
               100000000, "u.lua:2: Lua memory limit of 16 MiB exceeded");
  /* One allocation past the cap is refused before it is made, budget or not. */
  expect_error(h, "local s = ('x'):rep(1 << 30)", 100000000,
               "u.lua:1: Lua memory limit of 16 MiB exceeded");
  expect_error(h, "\nlocal s = ('x'):rep(1 << 30)", 0,
               "u.lua:2: Lua memory limit of 16 MiB exceeded");
  /* What was built is garbage now: the state works again. */
  expect_ok(h, "assert(#('y'):rep(1 << 20) == 1 << 20)", 100000000);
  /* Memory kept between calls, near the cap: C code between calls may still push values
   * (a failed allocation there would be a panic), and the next call fails cleanly. */
  expect_ok(h, "keep = {} for i = 1, 8 do keep[i] = ('k'):rep(1 << 20) .. i end", 100000000);
  lua_State *L = lhost_state(h);
  char *big = calloc(1, 9 << 20);
  memset(big, 'c', (9 << 20) - 1);
  lua_pushstring(L, big); /* past the cap, outside a call: allowed */
  free(big);
  expect_error(h, "\nlocal t = {}", 100000000, "u.lua:2: Lua memory limit of 16 MiB exceeded");
  lua_pop(L, 1);
  expect_ok(h, "keep = nil collectgarbage()", 100000000);
  expect_ok(h, "assert(#('y'):rep(1 << 20) == 1 << 20)", 100000000);
  lhost_free(h);
}

/* Quadratic string building runs few instructions, each a long copy: the bytes a call
 * allocates in all (4 times the memory cap) and its wall time are limits too. */
TEST(copy_budget_and_time_limit) {
  setenv("FLAGTUNE_LUA_MEMORY_MB", "16", 1);
  setenv("FLAGTUNE_LUA_SECONDS", "0.5", 1);
  lhost *h = host();
  unsetenv("FLAGTUNE_LUA_MEMORY_MB");
  unsetenv("FLAGTUNE_LUA_SECONDS");
  expect_error(h, "local s = ''\nfor i = 1, 1e7 do s = s .. 'x' end", 100000000,
               "u.lua:2: the call allocated more than 64 MiB in all (a string built piece by piece "
               "with `..` is copied each time: collect the pieces in a table and table.concat "
               "them)");
  /* Caught by pcall, it is still the call's end. */
  expect_error(h, "pcall(function() local s = '' for i = 1, 1e7 do s = s .. 'x' end end)\nx = 1",
               100000000,
               "u.lua:1: the call allocated more than 64 MiB in all (a string built piece by piece "
               "with `..` is copied each time: collect the pieces in a table and table.concat "
               "them)");
  /* The count starts again at every call: the same work in pieces passes. */
  for (int i = 0; i < 3; i++)
    expect_ok(h, "local t = {} for i = 1, 1e5 do t[i] = 'x' end assert(#table.concat(t) == 1e5)",
              100000000);
  /* Wall time with no allocation and few instructions, under a large budget. */
  expect_error(h, "local t = os.clock() while os.clock() - t < 5 do end", 4000000000L,
               "u.lua:1: the call ran past its time limit of 0.5 s");
  /* Without a budget (C's own calls) neither limit applies. */
  expect_ok(h, "local s = '' for i = 1, 3e3 do s = s .. ('x'):rep(100) end", 0);
  lhost_free(h);
}

TEST(memory_cap_default_and_override) {
  setenv("FLAGTUNE_LUA_MEMORY_MB", "not a number", 1);
  lhost *h = host();
  unsetenv("FLAGTUNE_LUA_MEMORY_MB");
  expect_error(h, "local s = ('x'):rep((1 << 31) - 1)", 100000000,
               "u.lua:1: Lua memory limit of 1024 MiB exceeded");
  expect_ok(h, "local s = ('x'):rep(64 << 20)", 100000000);
  lhost_free(h);
}

/* error(msg, 0) and error({}) carry no location; the user's line is put back. */
TEST(unlocated_errors_get_the_line) {
  lhost *h = host();
  expect_error(h, "\nerror('plain', 0)", 0, "u.lua:2: plain");
  expect_error(h, "local function f() error({}) end\n\nf()", 0,
               "u.lua:1: (error object is a table value)");
  expect_error(h, "\n\nassert(false, {})", 0, "u.lua:3: (error object is a table value)");
  /* Re-raised unlocated by code that is not the user's once the user's frames are gone (as
   * lua/dsl.lua's error(result, 0) does): the user's line still comes back. */
  expect_ok(h, "function user_fn()\n  error('deep', 0)\nend", 0);
  char *err = run_as(h, "=flagtune", "local ok, e = pcall(user_fn) error(e, 0)", 0);
  CHECK_STR(err, "u.lua:2: deep");
  free(err);
  /* Located errors pass unchanged; error() keeps its level argument. */
  expect_error(h, "error('here')", 0, "u.lua:1: here");
  expect_error(h, "local function f() error('caller', 2) end\n\nf()", 0, "u.lua:3: caller");
  expect_error(h, "local x = nil + 1", 0, "u.lua:1: attempt to perform arithmetic on a nil value");
  /* A caught unlocated error does not leak its line into a later, different message. */
  expect_error(h, "pcall(error, 'first', 0)\nerror('second', 0)", 0, "u.lua:2: second");
  expect_ok(h, "assert(select('#', assert(1, 2, 3)) == 3)", 0);
  lhost_free(h);
}

/* A budgeted call stuck in C (a pattern that backtracks for hours): the first SIGINT goes
 * to the handler that was there (libuv's in a sweep), the second ends the process. */
static volatile sig_atomic_t forwarded;
static void count_signal(int sig) {
  (void)sig;
  forwarded++;
}

/* In a forked child: writes 'r' to READY_FD, then makes a budgeted call stuck in C (a pattern
 * that backtracks for hours), which returns only if something ended it. */
static void stuck_call(lhost *h, int ready_fd) {
  lua_State *L = lhost_state(h);
  luaL_loadstring(L, "return string.find(string.rep('a', 60), string.rep('a*', 60) .. 'b')");
  (void)!write(ready_fd, "r", 1);
  char *err = NULL;
  lhost_pcall(h, 0, 0, 1000000, &err);
}

/* In the parent, the child PID stuck in that call: a second SIGINT ends it by the signal's
 * default action (a child that outlives the check is killed). */
static void second_sigint_ends(pid_t pid) {
  struct timespec pause = {0, 300 * 1000 * 1000};
  int status = 0;
  kill(pid, SIGINT);
  for (int i = 0; i < 50 && waitpid(pid, &status, WNOHANG) == 0; i++) nanosleep(&pause, NULL);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
  if (!WIFSIGNALED(status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
}

TEST(second_sigint_ends_a_call_stuck_in_c) {
  int pipefd[2];
  CHECK_INT(pipe(pipefd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    signal(SIGINT, count_signal);
    lhost *h = host();
    stuck_call(h, pipefd[1]);
    _exit(forwarded == 1 ? 3 : 4); /* not reached: the pattern runs for hours */
  }
  close(pipefd[1]);
  char c;
  CHECK_INT(read(pipefd[0], &c, 1), 1);
  close(pipefd[0]);
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
  kill(pid, SIGINT);
  nanosleep(&pause, NULL);
  int status = 0;
  CHECK_INT(waitpid(pid, &status, WNOHANG), 0); /* the first one only reached the handler */
  second_sigint_ends(pid);
}

/* The wrapper stays installed between budgeted calls: there every signal goes on to the
 * handler, uncounted (three SIGINTs do not end the process), a handler without SA_RESTART
 * still interrupts a blocking read (flag probing's poll relies on it), and lhost_free puts
 * the handler back. Exit 3: all held. */
TEST(signals_between_calls_go_to_the_handler) {
  pid_t pid = fork();
  if (pid == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    forwarded = 0;
    sa.sa_handler = count_signal; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    lhost *h = host();
    int bad = run(h, "return 1", 1000000) != NULL;
    for (int i = 0; i < 3; i++) raise(SIGINT);
    bad |= forwarded != 3;
    int p[2];
    bad |= pipe(p) != 0;
    pid_t me = getpid();
    if (fork() == 0) { /* a SIGINT while the read below blocks */
      struct timespec pause = {0, 200 * 1000 * 1000};
      nanosleep(&pause, NULL);
      kill(me, SIGINT);
      _exit(0);
    }
    char c;
    alarm(5); /* a read restarted after the signal would block forever: fail instead */
    bad |= !(read(p[0], &c, 1) < 0 && errno == EINTR) || forwarded != 4;
    alarm(0);
    wait(NULL);
    lhost_free(h);
    struct sigaction now;
    sigaction(SIGINT, NULL, &now);
    bad |= now.sa_handler != count_signal || (now.sa_flags & SA_SIGINFO);
    _exit(bad ? 4 : 3);
  }
  int status = 0;
  CHECK_INT(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
}

/* A handler installed after a budgeted call (as libuv installs its own when the sweep's loop
 * starts watching SIGINT) is the one the next call wraps: a SIGINT stuck in that call reaches
 * it (it writes 'b' to the parent), and the second ends the process. */
static int replaced_fd = -1;
static void replaced_handler(int sig) {
  (void)sig;
  (void)!write(replaced_fd, "b", 1);
}

TEST(second_sigint_ends_a_call_after_the_handler_changed) {
  int pipefd[2];
  CHECK_INT(pipe(pipefd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    replaced_fd = pipefd[1];
    signal(SIGINT, count_signal);
    lhost *h = host();
    if (run(h, "return 1", 1000000)) _exit(4);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = replaced_handler;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    stuck_call(h, pipefd[1]);
    _exit(5); /* not reached: the pattern runs for hours */
  }
  close(pipefd[1]);
  char c = 0;
  CHECK_INT(read(pipefd[0], &c, 1), 1);
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
  kill(pid, SIGINT);
  CHECK_INT(read(pipefd[0], &c, 1), 1);
  CHECK_INT(c, 'b'); /* the handler now in place, not the one of the first call */
  int status = 0;
  CHECK_INT(waitpid(pid, &status, WNOHANG), 0);
  second_sigint_ends(pid);
  close(pipefd[0]);
}

/* Whether SIGINT's handler is the host's wrapper (SA_SIGINFO) rather than HANDLER. */
static int wrapped_not(void (*handler)(int)) {
  struct sigaction now;
  sigaction(SIGINT, NULL, &now);
  return (now.sa_flags & SA_SIGINFO) && now.sa_handler != handler;
}

static void install_replaced(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = replaced_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
}

/* lhost_signals_settled: told that the handlers stay, the host looks once and not at the
 * calls after (a handler changed behind its back stays unwrapped: the check was skipped);
 * told again, the next call looks and wraps; told 0, every call looks. Then a call stuck in C
 * after the handler changed and the host was told: the first SIGINT goes to the handler, the
 * second ends it. */
TEST(settled_signals_are_checked_once_until_told_again) {
  int pipefd[2];
  CHECK_INT(pipe(pipefd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    replaced_fd = -1;
    signal(SIGINT, count_signal);
    lhost *h = host();
    lhost_signals_settled(1);
    int bad = run(h, "return 1", 1000000) != NULL || !wrapped_not(count_signal);
    install_replaced(); /* not told */
    bad |= run(h, "return 1", 1000000) != NULL || wrapped_not(replaced_handler);
    lhost_signals_settled(1); /* told */
    bad |= run(h, "return 1", 1000000) != NULL || !wrapped_not(replaced_handler);
    lhost_signals_settled(0);
    install_replaced();
    bad |= run(h, "return 1", 1000000) != NULL || !wrapped_not(replaced_handler);
    (void)!write(pipefd[1], bad ? "n" : "y", 1);
    signal(SIGINT, count_signal);
    lhost_signals_settled(1);
    stuck_call(h, pipefd[1]);
    _exit(5); /* not reached: the pattern runs for hours */
  }
  close(pipefd[1]);
  char c = 0;
  CHECK_INT(read(pipefd[0], &c, 1), 1);
  CHECK_INT(c, 'y');
  CHECK_INT(read(pipefd[0], &c, 1), 1);
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
  kill(pid, SIGINT);
  nanosleep(&pause, NULL);
  int status = 0;
  CHECK_INT(waitpid(pid, &status, WNOHANG), 0);
  second_sigint_ends(pid);
  close(pipefd[0]);
}

/* The state's allocator (the small-block arena and malloc): blocks of every size from 1 to
 * 5,000 bytes, grown and shrunk across the arena's 16-byte classes and out of it, keep their
 * bytes; freed blocks are handed out again without overlapping live ones; past the arena's
 * 1 MiB the blocks come from malloc; the byte count returns to where it was. Run with the
 * arena and with FLAGTUNE_LUA_ARENA=0. */
static void allocator_round(void) {
  lhost *h = host();
  lua_State *L = lhost_state(h);
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  size_t before = lhost_memory(h);
  enum { N = 6000 }; /* about 15 MB: past the arena */
  static unsigned char *blk[N];
  static size_t sz[N];
  for (int i = 0; i < N; i++) {
    sz[i] = 1 + (size_t)(i * 7) % 5000;
    blk[i] = f(ud, NULL, LUA_TTABLE, sz[i]);
    CHECK(blk[i] != NULL);
    memset(blk[i], i & 0xff, sz[i]);
  }
  for (int round = 0; round < 3; round++) {
    for (int i = round; i < N; i += 3) { /* a third resized: grow, shrink, cross classes */
      size_t n = round == 1 ? 1 + sz[i] / 3 : sz[i] + 1 + (size_t)(i % 40) * 41;
      unsigned char *p = f(ud, blk[i], sz[i], n);
      CHECK(p != NULL);
      for (size_t k = 0; k < (n < sz[i] ? n : sz[i]); k++)
        if (p[k] != (i & 0xff)) {
          CHECK(p[k] == (i & 0xff));
          break;
        }
      memset(p, i & 0xff, n);
      blk[i] = p;
      sz[i] = n;
    }
    for (int i = (round + 1) % 3; i < N; i += 3) { /* another third freed and allocated anew */
      f(ud, blk[i], sz[i], 0);
      sz[i] = 1 + (size_t)(i * 13 + round) % 4500;
      blk[i] = f(ud, NULL, LUA_TSTRING, sz[i]);
      CHECK(blk[i] != NULL);
      memset(blk[i], i & 0xff, sz[i]);
    }
    for (int i = 0; i < N; i++) { /* no block overlaps another */
      int bad = 0;
      for (size_t k = 0; k < sz[i]; k++) bad |= blk[i][k] != (i & 0xff);
      if (bad) {
        fprintf(stderr, "block %d (%zu bytes) overwritten in round %d\n", i, sz[i], round);
        CHECK(!bad);
      }
    }
  }
  size_t held = 0;
  for (int i = 0; i < N; i++) held += sz[i];
  CHECK_INT(lhost_memory(h) - before, held);
  for (int i = 0; i < N; i++) f(ud, blk[i], sz[i], 0);
  CHECK_INT(lhost_memory(h), before);
  /* Lua itself on top: many small objects, then garbage, then more. */
  expect_ok(h,
            "local t = {}\n"
            "for i = 1, 30000 do t[i] = { i, tostring(i), ('x'):rep(i % 300) } end\n"
            "for i = 1, 30000, 2 do t[i] = nil end collectgarbage()\n"
            "for i = 1, 30000, 2 do t[i] = { i, tostring(i), ('x'):rep(i % 300) } end\n"
            "for i = 1, 30000 do\n"
            "  local e = t[i]\n"
            "  assert(e[1] == i and e[2] == tostring(i) and #e[3] == i % 300)\n"
            "end",
            100000000);
  lhost_free(h);
}

TEST(allocator_keeps_blocks_apart) {
  allocator_round();
  setenv("FLAGTUNE_LUA_ARENA", "0", 1);
  allocator_round();
  unsetenv("FLAGTUNE_LUA_ARENA");
}

/* After lhost_exit_follows the collector starts once the state holds 8 MiB, and the state
 * is left to the exit, which still flushes what Lua wrote through io (a file never closed)
 * and exits with the program's code. */
TEST(exit_follows_keeps_what_lua_wrote) {
  char path[] = "/tmp/ft-lhost-exit-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  pid_t pid = fork();
  if (pid == 0) {
    lhost_exit_follows();
    lhost *h = host();
    lua_State *L = lhost_state(h);
    lua_pushstring(L, path);
    lua_setglobal(L, "path");
    char *err = run(h, "out = io.open(path, 'w') out:write(('kept '):rep(3))", 0);
    /* The collector waits until the state holds 8 MiB, then collects as usual: garbage
     * made in a loop does not pile up. */
    if (!err) err = run(h, "assert(not collectgarbage('isrunning'), 'held')", 0);
    if (!err)
      err = run(h,
                "local t = {}\n"
                "for i = 1, 300000 do t[i % 100 + 1] = ('x'):rep(100) .. i end\n"
                "assert(collectgarbage('isrunning'), 'running past 8 MiB')",
                100000000);
    if (err) fprintf(stderr, "%s\n", err);
    if (!err && lhost_memory(h) > (size_t)16 << 20) {
      fprintf(stderr, "%zu bytes held after the garbage\n", lhost_memory(h));
      err = "";
    }
    lhost_free(h);
    exit(err ? 4 : 3);
  }
  int status = 0;
  CHECK_INT(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  char buf[64] = "";
  FILE *in = fopen(path, "r");
  CHECK(in != NULL);
  if (in) {
    CHECK(fgets(buf, sizeof buf, in) != NULL);
    fclose(in);
  }
  CHECK_STR(buf, "kept kept kept ");
  unlink(path);
}
