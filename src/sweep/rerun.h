/* `flagtune run` of an experiment that already has an unfinished sweep in the database
 * continues that sweep (docs/CLI.md, "run or resume"): what makes a batch script that Slurm
 * requeues, or that is submitted again, safe to run twice. */
#ifndef FLAGTUNE_RERUN_H
#define FLAGTUNE_RERUN_H

#include <stdint.h>

#include "sweep.h"

/* The unfinished sweep `run PATH` continues, in *ID (0: none, start a new one): the newest
 * sweep of O->db_path that is `interrupted` or `running` (its orchestrator gone; claiming it
 * says so when not) and ran this same experiment: the file's text byte for byte, and the
 * name given by O->name when there is one. A missing database or unreadable file is no
 * sweep (run reports the file). FT_ESTORE etc. when the database cannot be read. */
int rerun_find(const char *path, const sweep_opts *o, int64_t *id, char **err);

#endif
