/* What a sweep shows while it runs: one line per finished trial and, on a terminal, a status
 * area under them redrawn in place (trials done of planned, outcome counts, the best so far,
 * the running trials with their elapsed time and steps, an ETA). Not a terminal: plain
 * timestamped lines and no status area. Formatting is pure (progress_format_*, unit-tested);
 * the printing functions write to stderr. Must not read the sweep, the store or a trial. */
#ifndef FLAGTUNE_PROGRESS_H
#define FLAGTUNE_PROGRESS_H

#include <stddef.h>

#include "classify.h"
#include "record.h"

/* How the output is shown. */
typedef struct {
  int tty;     /* stderr is a terminal: a status area redrawn in place */
  int color;   /* colours (a terminal, and NO_COLOR unset or empty) */
  int width;   /* columns; 0: unlimited (not a terminal) */
  int verbose; /* -v: whole labels and reasons */
  int quiet;   /* -q: nothing */
} progress_mode;

/* One finished trial, as its line shows it. */
typedef struct {
  int number;
  trial_role role;
  int is_baseline; /* the baseline's configuration ({}): its own run or a re-measurement */
  outcome status;
  double value;       /* ms (a cost: 1000 / rate when higher); NaN: none */
  double baseline_ms; /* NaN: none yet */
  int higher;         /* metric.better = "higher": values shown as the rate (metric_shown) */
  int rung_steps;     /* > 0: a short-rung trial (halving) of this many steps */
  const char *label;  /* the rendered label ("baseline" for {}) */
  /* Label tokens ("name=value") that are a parameter at its default, as the baseline ran
   * it: left out of the line (not with verbose). */
  const char *const *defaults;
  int n_defaults;
  /* Where the label does not fit the width: label name names[i] is shown as shorts[i]
   * (lua/progress.lua short_names), with a legend printed once. */
  const char *const *names, *const *shorts;
  int n_names;
  const char *reason; /* a non-ok trial's one-line reason; NULL: none */
  int not_stored;     /* its outcome could not be stored */
  int done, total;    /* trials done (this one included) of planned */
} progress_line;

/* A running trial on the status area. */
typedef struct {
  int number;
  const char *label;
  int n_steps, steps_budget, profiling;
  double elapsed_s;
} progress_running;

/* The status area's state. */
typedef struct {
  int done, total, parallel;
  int counts[OUTCOME_COUNT];
  double best_ms, baseline_ms; /* NaN: none */
  int higher;                  /* values shown as the rate they are the cost of */
  int best_number;
  double best_lo, best_hi; /* the best's speedup interval over its step times; NaN: none */
  double eta_s;            /* < 0: unknown */
  double deadline_left_s;  /* < 0: no time budget */
  const progress_running *running;
  int n_running;
} progress_state;

/* The mode for stderr: a terminal (isatty), its width (TIOCGWINSZ, else $COLUMNS, else 80),
 * NO_COLOR, and diag's -q and -v. */
progress_mode progress_detect(void);

/* LABEL shortened for a line: xla_ and xla_gpu_ prefixes dropped, "enable_" dropped, a flag
 * set to true shown as +name and to false as -name, byte counts of *_bytes and *threshold*
 * parameters humanised (67108864 -> 64MiB). A new string. */
char *progress_abbrev(const char *label);
/* progress_abbrev with label name NAMES[i] written SHORTS[i] (N of them); byte counts are
 * still humanised by the full name. A new string. */
char *progress_abbrev_short(const char *label, const char *const *names, const char *const *shorts,
                            int n);
/* LABEL without the tokens listed in DEFAULTS (N of them). A new string. */
char *progress_drop_defaults(const char *label, const char *const *defaults, int n);
/* A finished trial's line (without the timestamp, no newline), fitted to WIDTH columns
 * (0: unlimited) with "..." where the label was cut. COLOR adds ANSI colours. A new string. */
char *progress_format_line(const progress_line *l, int width, int color, int verbose);
/* The status area's lines (each without newline, fitted to WIDTH), *n of them. Free with
 * progress_free_lines. */
char **progress_format_status(const progress_state *s, int width, int color, int *n);
void progress_free_lines(char **lines, int n);
/* Seconds as "42s", "3m05s", "2h07m". BUF of N bytes. */
void progress_duration(double s, char *buf, size_t n);

/* Prints a finished trial's line (and its reason on the next line) in MODE: on a terminal
 * the status area is erased first; elsewhere each line starts with a timestamp. */
void progress_print_line(const progress_mode *m, const progress_line *l);
/* On a terminal, redraws the status area from S (erasing the previous one); elsewhere
 * nothing. */
void progress_print_status(const progress_mode *m, const progress_state *s);
/* Not a terminal: the status area's counts and best as one timestamped line ("status: 12/30
 * done  ok 10 ...  running 2  ETA 4m10s | baseline ... best ..."), for a log read later. */
void progress_print_status_line(const progress_mode *m, const progress_state *s);
/* Erases the status area (before anything else is printed, and at the end). */
void progress_erase(void);

#endif
