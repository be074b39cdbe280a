/* Fail fast, say why: before the first trial, the command must be able to start. Owns the
 * checks on the command's program and script and on the {steps} placeholder, and their
 * messages. Must not run anything or touch the store: a wrong command found here costs no
 * trial, where found by the trials it cost the whole night (every trial a `crash`). */
#include "preflight.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "launch.h"

static int is_executable_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Whether NAME is an executable file in one of $PATH's directories, as the trial started in
 * DIR_FOR_EMPTY would find it (an empty or relative entry is taken against that directory:
 * launch_which, the search `run` resolves the command with). */
static int on_path(const char *name, const char *dir_for_empty) {
  char *found = launch_which(name, getenv("PATH"), dir_for_empty);
  int ok = found != NULL;
  free(found);
  return ok;
}

/* The program on $PATH whose name is closest to NAME (at most 2 edits), or NULL. */
static char *closest_on_path(const char *name) {
  const char *path = getenv("PATH");
  char *best = NULL;
  int best_d = 3;
  for (const char *p = path; p && *p;) {
    size_t n = strcspn(p, ":");
    char *dir = xstrndup(p, n);
    DIR *d = n ? opendir(dir) : NULL;
    struct dirent *ent;
    while (d && (ent = readdir(d)) != NULL) {
      if (ent->d_name[0] == '.') continue;
      int dist = diag_distance(name, ent->d_name, 2);
      if (dist >= best_d) continue;
      char *full = xasprintf("%s/%s", dir, ent->d_name);
      if (is_executable_file(full)) {
        free(best);
        best = xstrdup(ent->d_name);
        best_d = dist;
      }
      free(full);
    }
    if (d) closedir(d);
    free(dir);
    p += n + (p[n] == ':');
  }
  return best;
}

/* Interpreters whose first non-option argument is a script file. */
static int is_interpreter(const char *prog) {
  const char *base = strrchr(prog, '/');
  base = base ? base + 1 : prog;
  static const char *const names[] = {"python", "bash", "sh",      "dash",  "zsh", "perl",
                                      "ruby",   "node", "Rscript", "julia", "lua"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    size_t n = strlen(names[i]);
    /* python3, python3.11, lua5.4: the name and a version */
    if (strncmp(base, names[i], n) == 0 && strspn(base + n, "0123456789.") == strlen(base + n))
      return 1;
  }
  return 0;
}

/* The index of the script ARGV's interpreter runs, or 0 for none (-c CODE, -m MODULE,
 * standard input, or a placeholder we cannot check). */
static int script_index(char *const *argv) {
  for (int i = 1; argv[i]; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-c") == 0 || strcmp(a, "-m") == 0 || strcmp(a, "-e") == 0 ||
        strcmp(a, "-") == 0 || strcmp(a, "--") == 0)
      return 0;
    if (strcmp(a, "-X") == 0 || strcmp(a, "-W") == 0 || strcmp(a, "-o") == 0 ||
        strcmp(a, "-O") == 0) {
      if (strcmp(a, "-O") != 0 && argv[i + 1]) i++;
      continue;
    }
    if (a[0] == '-') continue;
    return strstr(a, "{") ? 0 : i;
  }
  return 0;
}

typedef struct {
  const experiment *e;
  int remote;
  int line;
  int warnings;
  char **err;
} checker;

static void print_warning(char *msg) {
  diag_error(msg);
  free(msg);
}

/* A finding: an error, or under Slurm a warning. Returns the error code (0 for a warning). */
static int finding(checker *c, const char *msg) {
  if (!c->remote) return diag_set(c->err, FT_EINPUT, "%s:%d: %s", c->e->path, c->line, msg);
  print_warning(
      xasprintf("%s:%d: warning: %s (checked on this host; under Slurm the command runs "
                "on the compute nodes)",
                c->e->path, c->line, msg));
  c->warnings++;
  return 0;
}

static int check_program(checker *c, const char *key, const char *prog, const char *trial_dir) {
  char *msg = NULL;
  if (strchr(prog, '/')) {
    char *full = launch_absolute(prog, trial_dir);
    struct stat st;
    if (stat(full, &st) != 0)
      msg = xasprintf("%s[1] '%s' does not exist (looked for %s)", key, prog, full);
    else if (!S_ISREG(st.st_mode) || access(full, X_OK) != 0)
      msg = xasprintf(
          "%s[1] '%s' is not an executable file (chmod +x it, or run it through its "
          "interpreter: { \"python3\", \"%s\" })",
          key, prog, prog);
    free(full);
  } else if (!on_path(prog, trial_dir)) {
    char *close = closest_on_path(prog);
    msg = close ? xasprintf("%s[1] '%s' is not a program on $PATH (did you mean '%s'?)", key, prog,
                            close)
                : xasprintf(
                      "%s[1] '%s' is not a program on $PATH (give its full path, or fix "
                      "PATH before `flagtune run`)",
                      key, prog);
    free(close);
  }
  int rc = msg ? finding(c, msg) : 0;
  free(msg);
  return rc;
}

static int check_script(checker *c, const char *key, char *const *argv, const char *trial_dir) {
  if (!is_interpreter(argv[0])) return 0;
  int i = script_index(argv);
  if (i == 0) return 0;
  char *full = launch_absolute(argv[i], trial_dir);
  struct stat st;
  int rc = 0;
  if (stat(full, &st) != 0) {
    char *msg = xasprintf("%s[%d] '%s': no such file for %s to run (looked for %s)", key, i + 1,
                          argv[i], argv[0], full);
    rc = finding(c, msg);
    free(msg);
  }
  free(full);
  return rc;
}

static int uses_steps(char *const *argv) {
  for (int i = 0; argv && argv[i]; i++)
    if (strstr(argv[i], "{steps}")) return 1;
  return 0;
}

static int check_command(checker *c, const char *key, char *const *argv, const char *trial_dir) {
  if (!argv || !argv[0]) return 0;
  int rc = check_program(c, key, argv[0], trial_dir);
  if (rc == 0) rc = check_script(c, key, argv, trial_dir);
  return rc;
}

int preflight_check(const experiment *e, const char *cwd, int remote, int *n_warnings, char **err) {
  checker c = {
      .e = e, .remote = remote, .line = e->command_line > 0 ? e->command_line : 1, .err = err};
  char *trial_dir = e->workdir ? launch_absolute(e->workdir, cwd) : cwd ? xstrdup(cwd) : NULL;
  int rc = check_command(&c, "command", e->command, trial_dir);
  if (rc == 0 && e->pgle_manual) rc = check_command(&c, "pgle.command", e->pgle_command, trial_dir);
  /* A step budget the command never hears of: the program may read $FLAGTUNE_STEPS, so this
   * stops nothing, but a metric fed by an unbounded run is the usual cause of a timeout. */
  if (rc == 0 && e->budget_steps > 0 && !uses_steps(e->command)) {
    print_warning(
        xasprintf("%s:%d: warning: budget.steps = %d, but the command has no {steps}: "
                  "trials run as many steps as the program decides (unless it reads "
                  "$FLAGTUNE_STEPS)",
                  e->path, c.line, e->budget_steps));
    c.warnings++;
  }
  free(trial_dir);
  if (n_warnings) *n_warnings = c.warnings;
  return rc;
}
