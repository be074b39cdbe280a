/* The command line's inside, shared by cli.c (parsing, help, run/resume/check, minimize,
 * report, compare), cli_read.c (the read commands: sweeps, show, best, export, query) and
 * cli_args.c (option values, the database path, failures), and by nothing else. Calls go
 * one way: cli.c -> cli_read.c -> cli_args.c, and cli.c -> cli_args.c. */
#ifndef FLAGTUNE_CLI_IMPL_H
#define FLAGTUNE_CLI_IMPL_H

#include "trialcfg.h"

#define MAX_POS 8

/* Parsed arguments of one command. */
typedef struct {
  const char *cmd;
  const char *pos[MAX_POS];
  int n_pos;
  const char *db, *name, *model, *hardware, *format, *output;
  const char *executor; /* --executor local|slurm; NULL: the experiment's */
  int parallel, trials, json, help, has_seed;
  int detach, force;  /* run/resume --detach, resume --force */
  int keep_going;     /* run/resume --keep-going */
  int fresh;          /* run --new: a new sweep even where one of it is unfinished */
  const char *notify; /* run/resume --notify CMD */
  const char *sample; /* check --sample LOG */
  int all;            /* show --all: every trial, not a page */
  int unsafe_env;     /* export --unsafe-env: keep PATH, LD_*, ... (trialcfg_unsafe_env) */
  const char *log;    /* --log FILE: where a detached sweep writes its progress */
  double hours;       /* < 0: not given */
  double until_hours; /* hours from now until --until HH:MM, < 0: not given */
  long long seed;
  int repeats; /* minimize --repeats N */
} args;

typedef struct {
  const char *name;
  const char *usage;
  const char *help;
  int (*run)(args *a);
  int min_pos, max_pos;
  const char *options; /* the options it accepts, space-separated */
} command;

/* The trial table of `show` is paged: a 100,000-trial sweep prints its fastest trials, not
 * every row (docs/COST.md). */
#define SHOW_PAGE 50
#define SHOW_PAGE_TEXT "50"

/* cli_args.c (called by cli.c and cli_read.c, calling neither): */
/* --db, else $FLAGTUNE_DB, else ./flagtune.db. */
const char *cli_db_path(const args *a);
/* Prints ERR (taken), returns the exit code for CODE. */
int cli_fail(int code, char *err);
/* --format F of export and minimize. */
int cli_parse_format(const char *f, export_format *out, char **err);
/* Sets option OPT (without its dashes; one the command accepts) of A to the value V,
 * checking numbers, times and durations. */
int cli_set_option(args *a, const char *opt, const char *v, char **err);

/* cli_read.c (called by cli.c): */
int cli_cmd_sweeps(args *a);
int cli_cmd_show(args *a);
int cli_cmd_best(args *a);
int cli_cmd_export(args *a);
int cli_cmd_query(args *a);
/* The summary `run` and `resume` print at the end: show's head and the export snippet. */
int cli_print_summary(const args *a, long long id);

#endif
