/* The command line. Owns argument parsing, --help texts, exit codes, and how listings
 * are printed (aligned tables or --json). Reads results only through store's listing
 * functions and runs sweeps only through sweep.h; never writes SQL or builds trials. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "cli_impl.h"
#include "compare.h"
#include "diag.h"
#include "flagcmd.h"
#include "lhost.h"
#include "outfile.h"
#include "report.h"
#include "rerun.h"
#include "run_process.h"
#include "store.h"
#include "supervise.h"
#include "sweep.h"
#include "sweep_minimize.h"

static const command *find_command(const char *name);

/* ---- run, resume, check ---- */

static sweep_opts to_opts(const args *a) {
  double hours = a->hours;
  if (a->until_hours >= 0 && (hours < 0 || a->until_hours < hours)) hours = a->until_hours;
  sweep_opts o = {.db_path = cli_db_path(a),
                  .parallel = a->parallel,
                  .trials = a->trials,
                  .hours = hours,
                  .seed = a->seed,
                  .has_seed = a->has_seed,
                  .name = a->name,
                  .force = a->force,
                  .executor = a->executor,
                  .keep_going = a->keep_going,
                  .notify = a->notify,
                  .sample = a->sample};
  return o;
}

static int finish_sweep(args *a, int rc, int64_t id, int unhealthy, char *err) {
  if (rc != 0 && id == 0) return cli_fail(rc, err);
  if (rc != 0) diag_error(err);
  free(err);
  /* A summary nobody can read any more (the terminal or pipe went away) is no failure of
   * the sweep: its exit code still says how the sweep went. */
  if (id > 0 && cli_print_summary(a, id) != 0 && !ferror(stdout)) return 1;
  if (rc != 0) return diag_exit_code(rc);
  return unhealthy ? 1 : 0;
}

static int do_run(args *a, sweep_opts *o) {
  int64_t id = 0, unfinished = 0;
  int unhealthy = 0;
  char *err = NULL;
  /* Run or resume (rerun.h): an unfinished sweep of this experiment is continued. */
  int rc = a->fresh ? 0 : rerun_find(a->pos[0], o, &unfinished, &err);
  if (rc == 0 && unfinished > 0) {
    char ref[32];
    snprintf(ref, sizeof ref, "%lld", (long long)unfinished);
    rc = sweep_resume(ref, o, &id, &unhealthy, &err);
  } else if (rc == 0) {
    rc = sweep_run(a->pos[0], o, &id, &unhealthy, &err);
  }
  return finish_sweep(a, rc, id, unhealthy, err);
}

static int do_resume(args *a, sweep_opts *o) {
  int64_t id = 0;
  int unhealthy = 0;
  char *err = NULL;
  int rc = sweep_resume(a->pos[0], o, &id, &unhealthy, &err);
  return finish_sweep(a, rc, id, unhealthy, err);
}

static int run_body(void *ctx, sweep_opts *o) {
  return do_run(ctx, o);
}
static int resume_body(void *ctx, sweep_opts *o) {
  return do_resume(ctx, o);
}

/* Runs BODY in the foreground, or detached with --detach. */
static int night(args *a, sweep_opts *o, run_process_body body) {
  run_process_signals();
  if (!a->detach) return body(a, o);
  int code = 0;
  char *err = NULL;
  int rc = run_process_detach(a->log, o, body, a, &code, &err);
  return rc != 0 ? cli_fail(rc, err) : code;
}

static int cmd_run(args *a) {
  sweep_opts o = to_opts(a);
  return night(a, &o, run_body);
}

static int cmd_resume(args *a) {
  sweep_opts o = to_opts(a);
  /* Resume continues a sweep in an existing database: a mistyped --db is an error here,
   * before anything would create an empty one (and before --detach hides the answer). */
  char *err = NULL;
  store *db = NULL;
  int rc = store_open(o.db_path, STORE_MUST_EXIST, &db, &err);
  store_close(db);
  if (rc != 0) return cli_fail(rc, err);
  return night(a, &o, resume_body);
}

static int cmd_check(args *a) {
  lhost_exit_follows(); /* check's Lua state lives until the exit: not closed (lhost.h) */
  sweep_opts o = to_opts(a);
  char *summary = NULL, *err = NULL;
  int rc = sweep_check(a->pos[0], &o, &summary, &err);
  if (rc != 0) return cli_fail(rc, err);
  printf("%s\n", summary);
  free(summary);
  return 0;
}

/* ---- minimize ---- */

/* `flagtune minimize SWEEP`: sweep_minimize runs it; here the options and -o FILE (written
 * atomically, only once every parameter is decided). */
static int cmd_minimize(args *a) {
  char *err = NULL;
  outfile out = {0};
  minimize_opts o = {.db_path = cli_db_path(a),
                     .repeats = a->repeats,
                     .trials = a->trials,
                     .hours = a->hours,
                     .parallel = a->parallel,
                     .force = a->force,
                     .out = stdout};
  int rc = cli_parse_format(a->format, &o.format, &err), complete = 0;
  if (rc == 0 && (rc = outfile_open(&out, a->output, &err)) == 0) {
    o.out = out.f;
    run_process_signals();
    rc = sweep_minimize(a->pos[0], &o, &complete, &err);
    int closed = outfile_close(&out, rc == 0 && complete, rc == 0 ? &err : NULL);
    if (rc == 0) rc = closed;
  }
  if (rc != 0) return cli_fail(rc, err);
  return complete ? 0 : 1;
}

/* ---- report and compare (src/report/report.c, src/cli/compare.c) ---- */

static int cmd_report(args *a) {
  char *err = NULL;
  if (!a->output && isatty(STDOUT_FILENO))
    return cli_fail(FT_EINPUT, xasprintf("report writes an HTML page: give -o FILE.html (or -o - "
                                         "to write it to this terminal anyway)"));
  int rc = report_write(cli_db_path(a), a->pos, a->n_pos, a->output, &err);
  return rc != 0 ? cli_fail(rc, err) : 0;
}

static int cmd_compare(args *a) {
  char *err = NULL;
  int rc = compare_main(cli_db_path(a), a->pos[0], a->pos[1], a->json, &err);
  return rc != 0 ? cli_fail(rc, err) : 0;
}

/* ---- help and parsing ---- */

static int cmd_help(args *a);

static const command commands[] = {
    {"run",
     "run EXPERIMENT.lua [--db PATH] [--parallel N] [--trials N] [--hours H] "
     "[--until HH:MM[:SS]] [--seed S] [--name NAME] [--detach [--log FILE]] "
     "[--executor local|slurm] [--keep-going] [--notify CMD] [--new]",
     "Runs a new sweep: the baseline, then the strategy's trials, each recorded in the database.\n"
     "When the database holds an unfinished (interrupted) sweep of the same experiment (its file\n"
     "byte for byte, and --name when given), run continues it as `resume` would and says so;\n"
     "--new starts a fresh sweep instead.\n"
     "--executor slurm runs trials as Slurm job steps (the experiment's slurm { ... } options or\n"
     "Slurm's defaults; docs/SLURM.md), local (the default) on this machine.\n"
     "Prints the best configuration, its speedup over the baseline and the export snippet.\n"
     "Exit 0 when it finished with an ok baseline and an ok trial, 1 when it ran but that is not\n"
     "so, 2 for bad input (nothing written), 130 when interrupted (continue with `resume`).\n"
     "--detach: validate, start in the background (own session; a closed terminal does not\n"
     "stop it), print the sweep id and the log (flagtune-logs/DB/sweep-N/run.log, or --log FILE).\n"
     "A failed baseline stops the sweep, as do five first trials that fail alike; --keep-going\n"
     "searches on. --notify CMD runs the shell command CMD when the sweep ends (docs/CLI.md).",
     cmd_run, 1, 1,
     "db parallel trials hours until seed name detach log executor keep-going notify new"},
    {"resume",
     "resume SWEEP [--db PATH] [--parallel N] [--trials N] [--hours H] "
     "[--until HH:MM[:SS]] [--force] [--detach [--log FILE]] [--keep-going] [--notify CMD]",
     "Continues an interrupted sweep to its budget, from any directory (it runs where `run` ran):\n"
     "trials left running become lost and are run again with the interrupted ones; the strategy\n"
     "is rebuilt from the stored trials and goes on where it stood. --trials N raises the budget\n"
     "(also of a done sweep). One process owns a sweep: a second resume exits 2 naming the\n"
     "holder. --force takes over a sweep marked running on another host (whose lock cannot be\n"
     "checked from here). A sweep cut by its time budget is resumable; it gets the time anew.",
     cmd_resume, 1, 1, "db parallel trials hours until force detach log keep-going notify"},
    {"check",
     "check EXPERIMENT.lua [--sample LOG] [--db PATH] [--parallel N] [--trials N] [--hours H] "
     "[--seed S]",
     "Validates an experiment file (keys, types, units, space, strategy) without running or\n"
     "writing anything. Errors read `file:line: message`; exit 2. --sample LOG reads a captured\n"
     "log of the program as a trial's output: the step times the metric takes, the skipped\n"
     "ones, the value a trial would record, and why a line was not read.",
     cmd_check, 1, 1, "sample db parallel trials hours seed"},
    {"sweeps", "sweeps [--db PATH] [--json]",
     "Lists past sweeps: id, name, model, hardware, status, trials, best, baseline, speedup.",
     cli_cmd_sweeps, 0, 0, "db json"},
    {"show", "show SWEEP [--db PATH] [--json] [--all]",
     "Shows one sweep: outcome counts, best vs baseline with a 95% interval, and its trials:\n"
     "every trial up to " SHOW_PAGE_TEXT ", else the " SHOW_PAGE_TEXT
     " fastest ok ones (--all: every trial).",
     cli_cmd_show, 1, 1, "db json all"},
    {"best", "best [--model M] [--hardware H] [--db PATH] [--json]",
     "The best ok configuration per (model, hardware) across all sweeps, with its speedup over\n"
     "the baseline of its own sweep.",
     cli_cmd_best, 0, 0, "db json model hardware"},
    {"export",
     "export (SWEEP | --model M [--hardware H]) [--format sh|fish|env|json|flagfile] "
     "[-o FILE] [--unsafe-env] [--db PATH]",
     "Prints the winning flags as a snippet: `source <(flagtune export 3)` in bash. sh quotes\n"
     "every value so it is safe to source in bash, zsh, dash and ksh; fish is the same for fish\n"
     "(which reads quotes differently); env writes NAME=value lines; json one object; flagfile\n"
     "the XLA flags one per line, for XLA_FLAGS=/abs/path/flags.txt (XLA reads a file when\n"
     "XLA_FLAGS does not start with '-'; the variables the winner sets are named on stderr,\n"
     "they cannot be in it). Variables that change what a shell runs (PATH, LD_*, BASH_ENV,\n"
     "PROMPT_COMMAND, PYTHONPATH, ...) are left out with a warning unless --unsafe-env.\n"
     "-o writes FILE atomically.",
     cli_cmd_export, 0, 1, "db model hardware format output unsafe-env"},
    {"minimize",
     "minimize SWEEP [--db PATH] [--repeats N] [--trials N] [--hours H] [--parallel N] "
     "[--format sh|env|json] [-o FILE] [--force]",
     "Which flags matter: re-measures the sweep's winner with each searched flag or variable\n"
     "reverted to its default (unset, as in the baseline), interleaved with the winner, then\n"
     "reverts them together, least important first, keeping each revert while the speedup stays\n"
     "at or above the low end of the winner's 95% interval. Prints the report as comments and\n"
     "the smallest set's snippet (`source <(flagtune minimize 3)`); -o writes FILE atomically.\n"
     "Its trials are the sweep's (role minimize); interrupted, it continues where it stopped.\n"
     "--repeats N measurements per configuration (default 3); --trials N at most N minimize\n"
     "trials in all. Exit 0 when every parameter is decided, 1 when the budget ran out first.",
     cmd_minimize, 1, 1, "db repeats trials hours parallel format output force"},
    {"query", "query \"SQL\" [--db PATH] [--json]",
     "Runs one read-only SQL statement against the database (see docs/SCHEMA.md).", cli_cmd_query,
     1, 1, "db json"},
    {"report", "report SWEEP... [-o FILE] [--db PATH]",
     "Writes one self-contained HTML file (no script, nothing fetched; docs/REPORT.md): best so\n"
     "far against trial number and wall clock, step time by value of each parameter with OOMs\n"
     "marked, the OOM map of the two parameters that matter most, parameter importance, the top\n"
     "configurations against the baseline with 95% intervals, the export snippet. Up to 8\n"
     "sweeps, compared in one page; DB:SWEEP takes a sweep from another database. -o writes\n"
     "FILE atomically (stdout without -o).",
     cmd_report, 1, MAX_POS, "db output"},
    {"compare", "compare A B [--db PATH] [--json]",
     "Two sweeps side by side (the same model on two jaxlibs, clusters or dates): software and\n"
     "hardware keys, baseline, best and speedup with 95% intervals, B's baseline and best\n"
     "against A's, and how the winning flags differ. A and B are ids or names; DB:SWEEP takes\n"
     "one from another database (docs/REPORT.md).",
     cmd_compare, 2, 2, "db json"},
    {"help", "help [COMMAND]", "Shows help for a command.", cmd_help, 0, 1, ""},
};

#define N_COMMANDS (int)(sizeof commands / sizeof commands[0])

static const command *find_command(const char *name) {
  for (int i = 0; i < N_COMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

static void usage(FILE *f) {
  fprintf(f, "flagtune %s: tune XLA/JAX performance flags by measurement\n\nusage:\n",
          FLAGTUNE_VERSION);
  for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  flagtune %s\n", commands[i].usage);
  fprintf(f,
          "  flagtune flags [PATTERN] | flags show NAME | flags import (--file F | --command C)\n");
  fprintf(f,
          "\nThe database is ./flagtune.db unless --db or $FLAGTUNE_DB says otherwise.\n"
          "Global options: -v (tracebacks), -q (no progress). `flagtune COMMAND --help` for "
          "more.\n");
}

static int cmd_help(args *a) {
  if (a->n_pos == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(a->pos[0], "flags") == 0) {
    char *argv[] = {"--help", NULL};
    return flagcmd_main(1, argv, NULL);
  }
  const command *c = find_command(a->pos[0]);
  if (!c) {
    fprintf(stderr, "flagtune: no command '%s' (see `flagtune --help`)\n", a->pos[0]);
    return 2;
  }
  printf("usage: flagtune %s\n\n%s\n", c->usage, c->help);
  return 0;
}

static int accepts(const command *c, const char *opt) {
  size_t n = strlen(opt);
  for (const char *p = c->options; (p = strstr(p, opt)) != NULL; p += n)
    if ((p == c->options || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  return 0;
}

/* For ARGV[I], an option given before the command ("--db"): the command named later in
 * ARGV when it takes the option, else the first command that does; NULL when none does. */
static const command *command_option(int argc, char **argv, int i) {
  const char *arg = argv[i];
  if (strncmp(arg, "--", 2) != 0 || !arg[2]) return NULL;
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
  for (int j = i + 1; j < argc; j++) {
    const command *c = find_command(argv[j]);
    if (c && accepts(c, name)) return c;
  }
  for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
    if (accepts(&commands[k], name)) return &commands[k];
  return NULL;
}

/* -v or -q, the global options, before or after the command: sets it and returns 1. */
static int global_option(const char *arg) {
  if (strcmp(arg, "-v") == 0) return diag_verbose = 1;
  if (strcmp(arg, "-q") == 0) return diag_quiet = 1;
  return 0;
}

static int unknown_option(const command *c, const char *arg, char **err) {
  return diag_set(err, FT_EINPUT, "%s: unknown option '%s' (see `flagtune %s --help`)", c->name,
                  arg, c->name);
}

/* One "--name[=value]" (or -o) argument; may consume the next one as its value. */
static int parse_option(args *a, const command *c, int argc, char **argv, int *i, char **err) {
  const char *arg = argv[*i];
  char name[64];
  const char *eq = strchr(arg, '=');
  const char *body = strcmp(arg, "-o") == 0 ? "output" : arg + 2;
  size_t len = eq ? (size_t)(eq - body) : strlen(body);
  if (len >= sizeof name) len = sizeof name - 1;
  memcpy(name, body, len);
  name[len] = '\0';
  if (strcmp(name, "help") == 0) return a->help = 1, 0;
  if (strcmp(name, "json") == 0 && accepts(c, "json")) return a->json = 1, 0;
  if (strcmp(name, "detach") == 0 && accepts(c, "detach")) return a->detach = 1, 0;
  if (strcmp(name, "force") == 0 && accepts(c, "force")) return a->force = 1, 0;
  if (strcmp(name, "keep-going") == 0 && accepts(c, "keep-going")) return a->keep_going = 1, 0;
  if (strcmp(name, "new") == 0 && accepts(c, "new")) return a->fresh = 1, 0;
  if (strcmp(name, "all") == 0 && accepts(c, "all")) return a->all = 1, 0;
  if (strcmp(name, "unsafe-env") == 0 && accepts(c, "unsafe-env")) return a->unsafe_env = 1, 0;
  if (!accepts(c, name) || strcmp(name, "json") == 0 || strcmp(name, "detach") == 0 ||
      strcmp(name, "force") == 0 || strcmp(name, "keep-going") == 0 || strcmp(name, "all") == 0 ||
      strcmp(name, "unsafe-env") == 0 || strcmp(name, "new") == 0)
    return unknown_option(c, arg, err);
  const char *v = eq ? eq + 1 : NULL;
  if (!v) {
    if (*i + 1 >= argc) return diag_set(err, FT_EINPUT, "option --%s needs a value", name);
    v = argv[++*i];
  }
  return cli_set_option(a, name, v, err);
}

static int parse_args(const command *c, int argc, char **argv, args *a, char **err) {
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    int is_opt =
        (strncmp(arg, "--", 2) == 0 && arg[2]) || strcmp(arg, "-o") == 0 || strcmp(arg, "-h") == 0;
    if (strcmp(arg, "-h") == 0) {
      a->help = 1;
    } else if (global_option(arg)) { /* `flagtune run x.lua -q` */
    } else if (!is_opt && arg[0] == '-' && isalpha((unsigned char)arg[1]) && !arg[2]) {
      return unknown_option(c, arg, err);
    } else if (is_opt) {
      int rc = parse_option(a, c, argc, argv, &i, err);
      if (rc) return rc;
    } else if (a->n_pos < MAX_POS) {
      a->pos[a->n_pos++] = arg;
    }
  }
  if (!a->help && (a->n_pos < c->min_pos || a->n_pos > c->max_pos))
    return diag_set(err, FT_EINPUT, "usage: flagtune %s", c->usage);
  return 0;
}

/* The version, and the libraries this binary carries or loads: SQLite, Lua and libuv are
 * linked statically where the build found their static libraries (CMakeLists.txt), so a
 * security fix in one of them needs a rebuild, and this says which ones it has. */
static void print_version(void) {
#ifdef FLAGTUNE_SQLITE_STATIC
  const char *sqlite_how = ", linked in";
#else
  const char *sqlite_how = "";
#endif
#ifdef FLAGTUNE_LUA_STATIC
  const char *lua_how = ", linked in";
#else
  const char *lua_how = "";
#endif
#ifdef FLAGTUNE_LIBUV_STATIC
  const char *uv_how = ", linked in";
#else
  const char *uv_how = "";
#endif
  printf("flagtune %s\n", FLAGTUNE_VERSION);
  printf("SQLite %s%s, %s%s, libuv %s%s, cJSON %s\n", sqlite3_libversion(), sqlite_how, LUA_RELEASE,
         lua_how, uv_version_string(), uv_how, cJSON_Version());
}

int cli_main(int argc, char **argv) {
  /* Each trial runs under `flagtune __supervise -- CMD`, which dies with the orchestrator. */
  if (argc > 1 && strcmp(argv[1], SUPERVISE_ARG) == 0) return supervise_main(argc - 1, argv + 1);
  int i = 1;
  const command *c;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (global_option(argv[i]))
      continue;
    else if (strcmp(argv[i], "--version") == 0)
      return print_version(), 0;
    else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return usage(stdout), 0;
    else if ((c = command_option(argc, argv, i)) != NULL)
      return cli_fail(FT_EINPUT,
                      xasprintf("option '%s' goes after the command: `flagtune %s %s ...` "
                                "(see `flagtune help %s`)",
                                argv[i], c->name, argv[i], c->name));
    else
      return cli_fail(FT_EINPUT, xasprintf("unknown option '%s' (the options before a command are "
                                           "-v, -q, --version and --help; see `flagtune --help`)",
                                           argv[i]));
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  /* `flags` has subcommands of its own (list, show, import): its module parses them. */
  if (strcmp(argv[i], "flags") == 0) return flagcmd_main(argc - i - 1, argv + i + 1, NULL);
  c = find_command(argv[i]);
  if (!c) {
    fprintf(stderr, "flagtune: unknown command '%s' (see `flagtune --help`)\n", argv[i]);
    return 2;
  }
  args a = {0};
  a.cmd = c->name;
  a.hours = -1;
  a.until_hours = -1;
  char *err = NULL;
  if (parse_args(c, argc - i - 1, argv + i + 1, &a, &err) != 0) return cli_fail(FT_EINPUT, err);
  if (a.help) {
    printf("usage: flagtune %s\n\n%s\n", c->usage, c->help);
    return 0;
  }
  return c->run(&a);
}
