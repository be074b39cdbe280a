/* Runs the cases that TEST() registered: one by name, or all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define MAX_TESTS 512

static struct {
  const char *name;
  test_fn fn;
} tests[MAX_TESTS];
static int n_tests;
int test_failures;

void test_register(const char *name, test_fn fn) {
  if (n_tests < MAX_TESTS) {
    tests[n_tests].name = name;
    tests[n_tests].fn = fn;
    n_tests++;
  }
}

int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 0; i < n_tests; i++) {
    if (argc > 1 && strcmp(argv[1], tests[i].name) != 0) continue;
    int before = test_failures;
    tests[i].fn();
    fprintf(stderr, "%s %s\n", test_failures == before ? "ok  " : "FAIL", tests[i].name);
    ran++;
  }
  if (ran == 0) {
    fprintf(stderr, "no test named '%s'\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  return test_failures ? 1 : 0;
}
