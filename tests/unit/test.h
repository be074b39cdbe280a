/* A small unit-test harness: TEST(name) defines a case that registers itself; each
 * test binary runs one named case (argv[1]) or all of them. CMake turns every
 * TEST(name) line into its own CTest entry. A failed CHECK prints file:line and fails
 * the case but lets it continue, so one run shows every broken expectation. */
#ifndef FLAGTUNE_TEST_H
#define FLAGTUNE_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "lhost.h"
#include "store.h"

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn);
extern int test_failures;

#define TEST(name)                                                         \
  static void test_##name(void);                                           \
  __attribute__((constructor)) static void test_register_##name(void) {    \
    test_register(#name, test_##name);                                     \
  }                                                                        \
  static void test_##name(void)

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      test_failures++;                                                     \
    }                                                                      \
  } while (0)

#define CHECK_INT(a, b)                                                    \
  do {                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                    \
    if (a_ != b_) {                                                        \
      fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
      test_failures++;                                                     \
    }                                                                      \
  } while (0)

#define CHECK_STR(a, b)                                                    \
  do {                                                                     \
    const char *a_ = (a), *b_ = (b);                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                               \
      fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                     \
      test_failures++;                                                     \
    }                                                                      \
  } while (0)

#define CHECK_NEAR(a, b, eps)                                              \
  do {                                                                     \
    double a_ = (a), b_ = (b);                                             \
    if (!(fabs(a_ - b_) <= (eps))) {                                       \
      fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
      test_failures++;                                                     \
    }                                                                      \
  } while (0)

/* ---- ending clean (libuv's MAKE_VALGRIND_HAPPY) ----
 * A case that owns a loop, a store or a Lua host ends with one of these. Each fails the case
 * when the code under test left something behind, then releases what is left anyway, so one
 * leak is reported where it happened and does not spill into the next case. */

/* Every handle of LOOP must already be closed: each one still open is reported (by type),
 * counted as a failure and closed; then the loop runs its close callbacks, and
 * uv_loop_close() must return 0. Evaluates to uv_loop_close()'s result. */
#define CHECK_LOOP_END(loop) test_loop_end((loop), __FILE__, __LINE__)
/* store_close() must return 0: every cached statement finalized, the database closed. */
#define CHECK_STORE_END(s) CHECK_INT(store_close(s), 0)
/* No counted registry ref of H may be live (lhost_live_refs() == 0); then H is freed. */
#define CHECK_LHOST_END(h) test_lhost_end((h), __FILE__, __LINE__)

int test_loop_end(uv_loop_t *loop, const char *file, int line);
void test_lhost_end(lhost *h, const char *file, int line);

/* Removes the directory tree DIR (a case's own temporary directory) and frees DIR; a failed
 * removal fails the case. */
void test_remove_tree(char *dir);

#endif
