/* One configuration to run, as the strategy host hands it to C: its searched values, label,
 * settings and the manual-PGLE profile run. Made by lhost_strategy.c (rendered by lua/host.lua),
 * run by the sweep and trial.c, freed here. */
#ifndef FLAGTUNE_PROPOSAL_H
#define FLAGTUNE_PROPOSAL_H

#include "trialcfg.h"

/* One configuration to run, rendered by lua/host.lua (and lua/pgle.lua): everything about
 * flags arrives here, so C names none. Everything is owned by the proposal. */
typedef struct {
  char *config_json; /* canonical JSON of the searched values, keys sorted; "{}" = baseline */
  char *label;       /* short human form: "lhs=true ag_thr=512MiB" */
  int steps;         /* step budget; 0 = the experiment's budget.steps */
  /* An in-trial rung (a strategy's `rung = { steps, value }`): after rung_steps step times a
   * search trial whose value so far is above rung_value ms is pruned; 0 = none. */
  int rung_steps;
  double rung_value;
  setting *settings; /* fixed flags and env first, then searched, stable order; a value may
                      * hold PROPOSAL_PROFILE_PATH, replaced by the trial's profile path */
  int n_settings;
  int skip; /* warm-up steps left out of this trial's value (metric.skip, more
             * when the trial turns auto PGLE on) */
  /* Manual PGLE: the profile run's settings, run first with the profile path in
   * $FLAGTUNE_PGLE_PROFILE; NULL profile_suffix when the trial has no profile run. */
  setting *profile;
  int n_profile;
  char *profile_suffix; /* the profile file's name after "trial-NNNN" (".pgle.pbtxt") */
  /* Variables the trial must not inherit from the parent environment (lua/envpairs.lua:
   * jaxlib refuses both memory fractions together), NULL-terminated; NULL when none. */
  char **unset;
} proposal;

/* The placeholder a setting's value holds for the trial's profile path (lua/pgle.lua). */
#define PROPOSAL_PROFILE_PATH "{pgle_profile}"

/* Frees what P owns and zeroes it. */
void proposal_clear(proposal *p);

#endif
