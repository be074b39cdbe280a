/* Runs the cases that TEST() registered: one by name, or all; and the clean-end checks and the
 * temporary tree's removal of test.h. It owns no test's logic and must not hide a failure: each helper counts one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
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

typedef struct {
  const char *file;
  int line;
  int open;
} loop_end_ctx;

static void close_open_handle(uv_handle_t *h, void *arg) {
  loop_end_ctx *c = arg;
  if (uv_is_closing(h)) return;
  fprintf(stderr, "%s:%d: a %s handle was left open\n", c->file, c->line,
          uv_handle_type_name(uv_handle_get_type(h)));
  c->open++;
  uv_close(h, NULL);
}

int test_loop_end(uv_loop_t *loop, const char *file, int line) {
  loop_end_ctx c = {file, line, 0};
  uv_walk(loop, close_open_handle, &c);
  if (c.open) test_failures++;
  uv_run(loop, UV_RUN_DEFAULT); /* the close callbacks of what is closing */
  int rc = uv_loop_close(loop);
  if (rc != 0) {
    fprintf(stderr, "%s:%d: uv_loop_close() == %s, expected 0\n", file, line, uv_err_name(rc));
    test_failures++;
  }
  return rc;
}

void test_lhost_end(lhost *h, const char *file, int line) {
  if (!h) return;
  int live = lhost_live_refs(h);
  if (live != 0) {
    fprintf(stderr, "%s:%d: %d counted Lua ref(s) still live, expected 0\n", file, line, live);
    test_failures++;
  }
  lhost_free(h);
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

void test_remove_tree(char *dir) {
  char *cmd = xasprintf("rm -rf '%s'", dir);
  CHECK_INT(system(cmd), 0);
  free(cmd);
  free(dir);
}
