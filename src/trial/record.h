/* A stored trial as every plan reads it: the one record shape that the store loads and that
 * confirmation, resume, warm start and the strategy's history and tell all take. Roles
 * are a type here; the database stores their names. */
#ifndef FLAGTUNE_RECORD_H
#define FLAGTUNE_RECORD_H

#include <stdint.h>

#include "classify.h"

/* Why a trial was run. */
typedef enum {
  ROLE_SEARCH = 0, /* the strategy's proposal (the zero value: trial 0 is stored as the
                    * baseline whatever its role says) */
  ROLE_BASELINE,   /* no searched flag set: trial 0, and its re-runs */
  ROLE_RERUN,      /* a lost or interrupted search trial run again by resume */
  ROLE_CONFIRM,    /* a re-measurement of the baseline or a top candidate */
  ROLE_MINIMIZE,   /* `flagtune minimize`: the winner, or the winner with flags reverted */
  ROLE_COUNT
} trial_role;

/* "baseline", "search", "rerun", "confirm", "minimize", as stored. */
const char *record_role_name(trial_role r);
/* The role named NAME, or -1. */
int record_role_from_name(const char *name);

typedef struct {
  int64_t id; /* the row id; 0 for a record that was never stored */
  int number; /* 0 is the baseline; -1 for another sweep's trial (warm start) */
  trial_role role;
  outcome status;
  const char *config_json; /* canonical JSON of the searched values ("{}": the baseline) */
  double value;            /* reduced step time in ms; NaN for none */
  int steps_budget;        /* 0: the experiment's budget.steps */
  int pid;                 /* the process group while running; 0 for none */
  const double *steps;     /* step times in ms, in step order */
  int n_steps;
} trial_record;

/* Frees N records whose strings and steps the store allocated (store_trials_load,
 * store_warm_trials), and the array. T may be NULL. */
void record_free(trial_record *t, int n);

#endif
