/* The values of the command line's options and what every command shares: the database
 * path, the failure's message and exit code, --format's names. Used by cli.c (parsing and the
 * commands that run sweeps) and cli_read.c (the read commands); calls neither, so the two
 * depend on it and not on each other. Must not open the database or run anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_impl.h"
#include "diag.h"
#include "units.h"

const char *cli_db_path(const args *a) {
  if (a->db) return a->db;
  const char *env = getenv("FLAGTUNE_DB");
  return env && *env ? env : "flagtune.db";
}

int cli_fail(int code, char *err) {
  diag_error(err);
  free(err);
  return diag_exit_code(code);
}

int cli_parse_format(const char *f, export_format *out, char **err) {
  if (!f || strcmp(f, "sh") == 0)
    *out = EXPORT_SH;
  else if (strcmp(f, "env") == 0)
    *out = EXPORT_ENV;
  else if (strcmp(f, "json") == 0)
    *out = EXPORT_JSON;
  else if (strcmp(f, "flagfile") == 0)
    *out = EXPORT_FLAGFILE;
  else if (strcmp(f, "fish") == 0)
    *out = EXPORT_FISH;
  else
    return diag_set(err, FT_EINPUT,
                    "unknown export format '%s' (use sh, fish, env, json or flagfile)", f);
  return 0;
}

static int parse_int(const char *opt, const char *v, int min, int *out, char **err) {
  char *end;
  long x = strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || x < min || x > 1000000000)
    return diag_set(err, FT_EINPUT, "--%s needs a whole number >= %d, got '%s'", opt, min, v);
  *out = (int)x;
  return 0;
}

/* --until HH:MM[:SS]: the hours from now until the local clock next shows that time. */
static int parse_until(const char *v, double *hours, char **err) {
  int hh, mm, ss = 0, n;
  char extra;
  n = sscanf(v, "%d:%d:%d%c", &hh, &mm, &ss, &extra);
  if (n == 2 && strchr(strchr(v, ':') + 1, ':')) n = 0; /* "07:30:" */
  if ((n != 2 && n != 3) || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59)
    return diag_set(err, FT_EINPUT,
                    "--until needs a local time HH:MM or HH:MM:SS (e.g. 07:30), "
                    "got '%s'",
                    v);
  time_t now = time(NULL);
  struct tm t;
  localtime_r(&now, &t);
  t.tm_hour = hh;
  t.tm_min = mm;
  t.tm_sec = ss;
  time_t at = mktime(&t);
  if (at <= now) at += 24 * 3600;
  *hours = difftime(at, now) / 3600.0;
  return 0;
}

int cli_set_option(args *a, const char *opt, const char *v, char **err) {
  if (strcmp(opt, "db") == 0)
    a->db = v;
  else if (strcmp(opt, "name") == 0)
    a->name = v;
  else if (strcmp(opt, "model") == 0)
    a->model = v;
  else if (strcmp(opt, "hardware") == 0)
    a->hardware = v;
  else if (strcmp(opt, "format") == 0)
    a->format = v;
  else if (strcmp(opt, "output") == 0)
    a->output = v;
  else if (strcmp(opt, "log") == 0)
    a->log = v;
  else if (strcmp(opt, "notify") == 0)
    a->notify = v;
  else if (strcmp(opt, "sample") == 0)
    a->sample = v;
  else if (strcmp(opt, "executor") == 0) {
    if (strcmp(v, "local") != 0 && strcmp(v, "slurm") != 0)
      return diag_set(err, FT_EINPUT, "--executor must be local or slurm, got '%s'", v);
    a->executor = v;
  } else if (strcmp(opt, "parallel") == 0)
    return parse_int(opt, v, 1, &a->parallel, err);
  else if (strcmp(opt, "trials") == 0)
    return parse_int(opt, v, strcmp(a->cmd, "minimize") == 0 ? 1 : 2, &a->trials, err);
  else if (strcmp(opt, "repeats") == 0)
    return parse_int(opt, v, 1, &a->repeats, err);
  else if (strcmp(opt, "seed") == 0) {
    char *end;
    a->seed = strtoll(v, &end, 10);
    a->has_seed = 1;
    if (*v == '\0' || *end != '\0')
      return diag_set(err, FT_EINPUT, "--seed needs a whole number, got '%s'", v);
  } else if (strcmp(opt, "until") == 0) {
    return parse_until(v, &a->until_hours, err);
  } else if (strcmp(opt, "hours") == 0) {
    /* a number of hours, or a duration as the experiment file writes one ("8h", "90m") */
    char *end;
    double secs;
    const char *why = NULL;
    a->hours = strtod(v, &end);
    if (*v != '\0' && *end != '\0' && units_parse_duration(v, &secs, &why) == 0)
      a->hours = secs / 3600;
    else if (*v == '\0' || *end != '\0')
      a->hours = -1;
    if (!(a->hours > 0))
      return diag_set(err, FT_EINPUT,
                      "--hours needs a positive number of hours or a duration (8, 8h, 90m), "
                      "got '%s'",
                      v);
  }
  return 0;
}
