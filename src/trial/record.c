/* The stored trial's shape and the names of roles. Owns nothing but these; must not read
 * the database or know about processes. */
#include "record.h"

#include <stdlib.h>
#include <string.h>

static const char *const role_names[ROLE_COUNT] = {"search", "baseline", "rerun", "confirm",
                                                   "minimize"};

const char *record_role_name(trial_role r) {
  return (r >= 0 && r < ROLE_COUNT) ? role_names[r] : "unknown";
}

int record_role_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < ROLE_COUNT; i++)
    if (strcmp(name, role_names[i]) == 0) return i;
  return -1;
}

void record_free(trial_record *t, int n) {
  for (int i = 0; t && i < n; i++) {
    free((char *)t[i].config_json);
    free((double *)t[i].steps);
  }
  free(t);
}
