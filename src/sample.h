/* `flagtune check EXPERIMENT.lua --sample LOG`: what the experiment's metric reads from a
 * captured log of the user's own program (see sample.c). */
#ifndef FLAGTUNE_SAMPLE_H
#define FLAGTUNE_SAMPLE_H

#include "experiment.h"

/* Reads the log at PATH line by line as a trial's output would be read: the step times (and
 * metric.check's losses) the metric takes, which are skipped, the value a trial would record,
 * and the lines that carried the metric with a bad value. *OUT: the text to print (caller
 * frees). 0, or FT_EINPUT with *ERR when the log cannot be read or the metric reads no step
 * time from it (the message names what the log holds instead: the JSON keys found, or lines
 * that look like steps). */
int sample_check(experiment *e, const char *path, char **out, char **err);
/* "'step', 'step_time_ms', 'loss'": the top-level keys of LINE when it is one JSON object,
 * else NULL. Caller frees. What a no_metric trial says instead of quoting the line. */
char *sample_json_keys(const char *line);

/* sample_check's text appended to *SUMMARY (check's line) after a newline; on failure *SUMMARY
 * is freed and set to NULL. */
int sample_append(experiment *e, const char *path, char **summary, char **err);

#endif
