/* Launch building: what one phase of one trial runs as. A rendered proposal, the trial's
 * number and slot become an argv ({steps} substituted), a complete environment (through
 * trialcfg: XLA_FLAGS and the variables, then FLAGTUNE_* and the slot's
 * CUDA_VISIBLE_DEVICES), a log path, and the JSON the trial row records. Also shares the
 * visible GPUs out to slots. Pure but for reading the environment it is handed; must not
 * start processes or touch the store. */
#ifndef FLAGTUNE_LAUNCH_H
#define FLAGTUNE_LAUNCH_H

#include <stdint.h>

#include "experiment.h"
#include "strategy.h"
#include "trialcfg.h"

/* Where and as what one phase runs. */
typedef struct {
  int64_t sweep_id;
  int number;          /* the trial's number */
  int steps;           /* the trial's step budget (the profile run uses pgle.steps) */
  const char *devices; /* the slot's CUDA_VISIBLE_DEVICES value; NULL: left alone */
  const char *log_dir;
  const char *profile_path; /* manual PGLE: where the profile run leaves its profile */
  int profile;              /* 1: the profile run, 0: the measured run */
} launch_where;

typedef struct {
  char **argv;
  trial_env env;
  char *log_path;
} launch;

/* Builds the phase of P described by W for experiment E, with BASE (usually environ) as the
 * parent environment. FT_EINPUT with *err for what the experiment got wrong (a bad name, a
 * template that needs {steps}); *out is then empty. Free with launch_free. */
int launch_build(const experiment *e, const proposal *p, const launch_where *w, char *const *base,
                 launch *out, char **err);
void launch_free(launch *l);

/* The trial row's env (the variables flagtune set, {"NAME": "value"}) and command (the argv
 * as an array) as JSON text. Caller frees. */
char *launch_env_json(const proposal *p);
char *launch_argv_json(char *const *argv);

/* Shares the GPUs out: PARALLEL slots of GPUS_PER_TRIAL devices each, taken from VISIBLE
 * (a CUDA_VISIBLE_DEVICES list; NULL or empty: 0..PRESENT-1, the GPUs nvidia-smi lists, or
 * 0..n-1 when PRESENT is 0: unknown). *devices[slot] is that slot's comma-separated list;
 * NULL when GPUS_PER_TRIAL is 0. FT_EINPUT when there are too few: two 8-GPU slots on an
 * 8-GPU machine would hand out devices 8-15 that do not exist. Free with
 * launch_devices_free. */
int launch_plan_devices(int gpus_per_trial, int parallel, const char *visible, int present,
                        char ***devices, char **err);
void launch_devices_free(char **devices, int parallel);

/* DB_PATH's log directory for sweep ID, keyed by the database's file name so that two
 * databases in one directory never share one: ROOT/NAME/sweep-ID, where ROOT is OVERRIDE
 * (the FLAGTUNE_LOG_DIR setting) when non-empty, else flagtune-logs beside the database, and
 * NAME the database's file name (flagtune.db). A sweep whose logs are in the layout older
 * versions used (ROOT/sweep-ID, no NAME) keeps that directory when the keyed one does not
 * exist and RESUMED is set, so a resume finds them (a new sweep never takes such a
 * directory: it may be another database's). Caller frees. */
/* The name of a sweep's compilation cache inside its log directory, and its absolute path
 * for LOG_DIR (caller frees): every trial's JAX_COMPILATION_CACHE_DIR unless the user set one. */
#define LAUNCH_CACHE_NAME "jax-cache"
char *launch_cache_dir(const char *log_dir);
char *launch_log_dir(const char *db_path, const char *override, int64_t id, int resumed);
/* Creates PATH and its parents. FT_ESYS with *err on failure. */
int launch_make_dirs(const char *path, char **err);

/* The current directory (a new string), or NULL when it cannot be read. */
char *launch_cwd(void);
/* PATH made absolute against DIR (a new string; a copy when PATH is absolute or DIR NULL). */
char *launch_absolute(const char *path, const char *dir);
/* The one $PATH search (run, check and the nvidia-smi probe all use it): where NAME (without
 * '/') is found in PATH_VALUE, a ':'-separated list, as execvp would find it from directory
 * DIR. Entries are tried in order; an empty entry means DIR itself and a relative one is taken
 * against DIR (both against the current directory when DIR is NULL); the first regular file
 * this process may execute wins (a directory or a file without the x bit is skipped, as
 * execvp skips them). PATH_VALUE NULL or empty: nothing is found (callers that want execvp's
 * default for an unset PATH pass it). Returns the path (absolute when DIR is), or NULL.
 * Caller frees. */
char *launch_which(const char *name, const char *path_value, const char *dir);
/* E's command as a JSON array with argv[0] as a trial started from CWD would run it: a name
 * without '/' found on $PATH, a relative path made absolute against the trial's directory
 * (workdir, itself against CWD); unchanged when not found. What `run` stores so that a
 * resume from anywhere runs the same trials. Caller frees. */
char *launch_command_json(const experiment *e, const char *cwd);
/* On resume: the stored command's argv[0] (COMMAND_JSON, as `run` resolved it) replaces E's,
 * when E's command still has the stored shape. */
void launch_use_stored_command(experiment *e, const char *command_json);

#endif
