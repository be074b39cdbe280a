/* launch_which: the one $PATH search that `run` (argv[0] as the trial runs it), `check` (is
 * the command a program on $PATH) and the nvidia-smi probe share, each rule on its own: order,
 * a directory or a non-executable file skipped, an empty or relative entry, no PATH. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "launch.h"
#include "preflight.h"
#include "test.h"

/* A temporary tree: D/a/prog a directory, D/b/prog a file without x, D/c/prog and D/tool and
 * D/sub/rel executable files. */
static char *make_tree(void) {
  char *d = xstrdup("/tmp/ft-launch-XXXXXX");
  CHECK(mkdtemp(d) != NULL);
  const char *dirs[] = {"a", "a/prog", "b", "c", "sub"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    char *p = xasprintf("%s/%s", d, dirs[i]);
    CHECK_INT(mkdir(p, 0755), 0);
    free(p);
  }
  const char *files[] = {"b/prog", "c/prog", "tool", "sub/rel"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char *p = xasprintf("%s/%s", d, files[i]);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) fputs("#!/bin/sh\n", f), fclose(f);
    CHECK_INT(chmod(p, i == 0 ? 0644 : 0755), 0);
    free(p);
  }
  return d;
}

/* CHECKs that launch_which(NAME, PATH, DIR) gives D/WANT (WANT NULL: nothing). */
static void check_which(const char *d, const char *name, const char *path, const char *dir,
                        const char *want) {
  char *got = launch_which(name, path, dir);
  char *w = want ? xasprintf("%s/%s", d, want) : NULL;
  if (!(got == NULL ? w == NULL : w && strcmp(got, w) == 0)) {
    fprintf(stderr, "launch_which(%s, %s, %s) = %s, want %s\n", name, path, dir ? dir : "NULL",
            got ? got : "NULL", w ? w : "NULL");
    test_failures++;
  }
  free(got);
  free(w);
}

TEST(which_skips_directories_and_non_executables) {
  char *d = make_tree();
  char *path = xasprintf("%s/a:%s/b:%s/c", d, d, d);
  check_which(d, "prog", path, NULL, "c/prog"); /* a/prog a directory, b/prog not executable */
  char *only_bad = xasprintf("%s/a:%s/b", d, d);
  check_which(d, "prog", only_bad, "/", NULL);
  check_which(d, "missing", path, NULL, NULL);
  free(path);
  free(only_bad);
  test_remove_tree(d);
}

TEST(which_empty_and_relative_entries) {
  char *d = make_tree();
  /* An empty entry, leading, inner or trailing, is DIR itself. */
  check_which(d, "tool", ":/nonexistent", d, "tool");
  check_which(d, "tool", "/nonexistent::/nonexistent2", d, "tool");
  check_which(d, "tool", "/nonexistent:", d, "tool");
  /* A relative entry is taken against DIR, not against our own current directory. */
  check_which(d, "rel", "/nonexistent:sub", d, "sub/rel");
  check_which(d, "rel", "/nonexistent:sub", "/", NULL);
  /* Without DIR: against the current directory, and the path says so (./tool). */
  char here[4096];
  CHECK(getcwd(here, sizeof here) != NULL);
  CHECK_INT(chdir(d), 0);
  char *got = launch_which("tool", "/nonexistent:", NULL);
  CHECK(got && strcmp(got, "./tool") == 0);
  free(got);
  CHECK_INT(chdir(here), 0);
  test_remove_tree(d);
}

TEST(which_without_path) {
  char *d = make_tree();
  check_which(d, "tool", NULL, d, NULL); /* unset: the caller picks a default, if any */
  check_which(d, "tool", "", d, NULL);
  char *sh = launch_which("sh", "/usr/bin:/bin", NULL); /* the nvidia-smi probe's default */
  CHECK(sh && (strcmp(sh, "/usr/bin/sh") == 0 || strcmp(sh, "/bin/sh") == 0));
  free(sh);
  test_remove_tree(d);
}

/* `run` stores argv[0] as the trial runs it: an empty PATH entry is the trial's directory
 * (workdir), and a directory named like the program earlier on PATH is passed over. */
TEST(command_json_resolves_like_the_trial) {
  char *d = make_tree();
  const char *old = getenv("PATH");
  char *saved = old ? xstrdup(old) : NULL;
  char *path = xasprintf("%s/a::%s/c", d, d);
  setenv("PATH", path, 1);
  experiment e;
  memset(&e, 0, sizeof e);
  char *cmd[] = {"tool", "--x", NULL};
  e.command = cmd;
  e.workdir = d;
  char *json = launch_command_json(&e, "/");
  char *want = xasprintf("[\"%s/tool\",\"--x\"]", d);
  CHECK(json && strcmp(json, want) == 0);
  free(json);
  free(want);
  char *prog[] = {"prog", NULL};
  e.command = prog;
  json = launch_command_json(&e, "/");
  want = xasprintf("[\"%s/c/prog\"]", d);
  CHECK(json && strcmp(json, want) == 0);
  free(json);
  free(want);
  if (saved) setenv("PATH", saved, 1);
  free(saved);
  free(path);
  test_remove_tree(d);
}

/* `check` says what `run` would do: the same program found (an empty entry: the experiment's
 * directory), the same ones refused (a directory, a file without x). */
TEST(preflight_uses_the_same_search) {
  char *d = make_tree();
  const char *old = getenv("PATH");
  char *saved = old ? xstrdup(old) : NULL;
  experiment e;
  memset(&e, 0, sizeof e);
  e.path = "x.lua";
  e.command_line = 4;
  char *tool[] = {"tool", NULL};
  e.command = tool;
  char *err = NULL;
  setenv("PATH", "/nonexistent:", 1);
  CHECK_INT(preflight_check(&e, d, 0, NULL, &err), 0);
  char *path = xasprintf("%s/a:%s/b", d, d);
  setenv("PATH", path, 1);
  char *prog[] = {"prog", NULL};
  e.command = prog;
  CHECK_INT(preflight_check(&e, d, 0, NULL, &err), FT_EINPUT);
  CHECK(err && strstr(err, "x.lua:4: command[1] 'prog' is not a program on $PATH") != NULL);
  free(err);
  if (saved) setenv("PATH", saved, 1);
  free(saved);
  free(path);
  test_remove_tree(d);
}

/* The trial's JAX_COMPILATION_CACHE_DIR for a sweep whose logs are in LOG_DIR (a new string),
 * NULL when launch_build leaves the trial uncached. */
static char *cache_env(const char *log_dir) {
  char *argv[] = {"prog", NULL}, *base[] = {NULL};
  experiment e = {0};
  e.command = argv;
  proposal p = {0};
  launch_where w = {.sweep_id = 1, .number = 1, .log_dir = log_dir};
  launch l;
  char *err = NULL, *found = NULL;
  CHECK_INT(launch_build(&e, &p, &w, base, &l, &err), 0);
  for (int i = 0; l.env.envp && l.env.envp[i]; i++)
    if (strncmp(l.env.envp[i], "JAX_COMPILATION_CACHE_DIR=", 26) == 0)
      found = xstrdup(l.env.envp[i] + 26);
  launch_free(&l);
  free(err);
  return found;
}

/* Each trial's cache is the sweep's LOG_DIR/jax-cache only while it is safely ours: made 0700
 * when missing (again after it was removed), refused when it became a link, when others may
 * write it, or when the log directory is writable by others without the sticky bit. */
TEST(cache_dir_only_while_safely_ours) {
  char *d = xstrdup("/tmp/ft-launch-cache-XXXXXX");
  CHECK(mkdtemp(d) != NULL);
  CHECK_INT(chmod(d, 0755), 0);
  char *cache = xasprintf("%s/" LAUNCH_CACHE_NAME, d), *got = cache_env(d);
  CHECK_STR(got, cache);
  free(got);
  struct stat st;
  CHECK_INT(lstat(cache, &st), 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK_INT(st.st_mode & 0777, 0700);
  got = cache_env(d); /* there: kept */
  CHECK_STR(got, cache);
  free(got);
  CHECK_INT(rmdir(cache), 0); /* removed under the sweep: made again */
  got = cache_env(d);
  CHECK_STR(got, cache);
  free(got);
  CHECK_INT(lstat(cache, &st), 0);
  CHECK_INT(chmod(cache, 0770), 0); /* the group may write it */
  got = cache_env(d);
  CHECK(got == NULL);
  free(got);
  CHECK_INT(rmdir(cache), 0);
  char *elsewhere = xasprintf("%s/elsewhere", d);
  CHECK_INT(mkdir(elsewhere, 0700), 0);
  CHECK_INT(symlink(elsewhere, cache), 0); /* a link in its place */
  got = cache_env(d);
  CHECK(got == NULL);
  free(got);
  CHECK_INT(unlink(cache), 0);
  CHECK_INT(chmod(d, 0777), 0); /* the log directory open to all, no sticky bit */
  got = cache_env(d);
  CHECK(got == NULL);
  free(got);
  CHECK_INT(chmod(d, 01777), 0); /* with it: ours again */
  got = cache_env(d);
  CHECK_STR(got, cache);
  free(got);
  free(elsewhere);
  free(cache);
  test_remove_tree(d);
}
