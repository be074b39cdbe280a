/* `flagtune check EXPERIMENT.lua --sample LOG`: what the experiment's metric reads from a
 * captured log of the user's own program (see sample.c). */
#ifndef FLAGTUNE_SAMPLE_H
#define FLAGTUNE_SAMPLE_H

#include "experiment.h"

/* "'step', 'step_time_ms', 'loss'": the top-level keys of LINE when it is one JSON object,
 * else NULL. Caller frees. What a no_metric trial says instead of quoting the line. */
char *sample_json_keys(const char *line);

/* sample_check's text appended to *SUMMARY (check's line) after a newline; on failure *SUMMARY
 * is freed and set to NULL. */
int sample_append(experiment *e, const char *path, char **summary, char **err);

#endif
