/* preflight: the command checked before the first trial (a program on $PATH, an executable
 * path, an interpreter's script), with the experiment's line in the message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "preflight.h"
#include "test.h"

static char *argv_of(const char *s) {
  return xstrdup(s);
}

/* An experiment with COMMAND (NULL-terminated), at line 4 of "x.lua". */
static experiment exp_with(char **command) {
  experiment e;
  memset(&e, 0, sizeof e);
  e.path = "x.lua";
  e.command = command;
  e.command_line = 4;
  return e;
}

static int check_cmd(char **command, const char *cwd, int remote, char **err) {
  experiment e = exp_with(command);
  return preflight_check(&e, cwd, remote, NULL, err);
}

TEST(distance) {
  CHECK_INT(diag_distance("pythn3", "python3", 2), 1);
  CHECK_INT(diag_distance("python3", "python3", 2), 0);
  CHECK_INT(diag_distance("bash", "zsh", 2), 2);
  CHECK_INT(diag_distance("torchrun", "sh", 2), 3); /* capped at cap + 1 */
}

TEST(program_on_path_and_missing) {
  char *err = NULL;
  char *ok[] = {argv_of("sh"), argv_of("-c"), argv_of("true"), NULL};
  CHECK_INT(check_cmd(ok, "/", 0, &err), 0);
  char *bad[] = {argv_of("no-such-program-xyz"), NULL};
  CHECK_INT(check_cmd(bad, "/", 0, &err), FT_EINPUT);
  CHECK(err && strncmp(err, "x.lua:4: command[1] 'no-such-program-xyz' is not a program", 55) == 0);
  free(err);
  err = NULL;
  /* Under Slurm the compute nodes decide: a warning, not an error. */
  CHECK_INT(check_cmd(bad, "/", 1, &err), 0);
  CHECK(err == NULL);
  for (char **p = ok; *p; p++) free(*p);
  for (char **p = bad; *p; p++) free(*p);
}

TEST(paths_and_scripts) {
  char dir[] = "/tmp/ft-preflight-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char *script = xasprintf("%s/train.py", dir), *tool = xasprintf("%s/tool", dir);
  FILE *f = fopen(tool, "w");
  fputs("#!/bin/sh\n", f);
  fclose(f);
  char *err = NULL;
  char *py[] = {argv_of("sh"), argv_of("train.py"), argv_of("--steps"), argv_of("{steps}"), NULL};
  CHECK_INT(check_cmd(py, dir, 0, &err), FT_EINPUT);
  CHECK(err && strstr(err, "command[2] 'train.py': no such file for sh to run") != NULL);
  f = fopen(script, "w");
  fclose(f);
  CHECK_INT(check_cmd(py, dir, 0, &err), 0);
  char *notx[] = {argv_of("./tool"), NULL};
  CHECK_INT(check_cmd(notx, dir, 0, &err), FT_EINPUT);
  CHECK(err && strstr(err, "is not an executable file") != NULL);
  chmod(tool, 0755);
  CHECK_INT(check_cmd(notx, dir, 0, &err), 0);
  char *code[] = {argv_of("sh"), argv_of("-c"), argv_of("exit 0"), NULL};
  CHECK_INT(check_cmd(code, dir, 0, &err), 0); /* -c CODE: no script */
  free(err);
  unlink(script);
  unlink(tool);
  rmdir(dir);
  free(script);
  free(tool);
  for (char **p = py; *p; p++) free(*p);
  for (char **p = notx; *p; p++) free(*p);
  for (char **p = code; *p; p++) free(*p);
}
