/* A proposal (proposal.h): what one owns, freed. */
#include "proposal.h"

#include <stdlib.h>
#include <string.h>

static void settings_free(setting *s, int n) {
  for (int i = 0; i < n; i++) {
    free((char *)s[i].name);
    free((char *)s[i].value);
  }
  free(s);
}

void proposal_clear(proposal *p) {
  if (!p) return;
  free(p->config_json);
  free(p->label);
  settings_free(p->settings, p->n_settings);
  settings_free(p->profile, p->n_profile);
  free(p->profile_suffix);
  trialcfg_free_strv(p->unset);
  memset(p, 0, sizeof *p);
}
