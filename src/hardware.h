/* The hardware fingerprint recorded with a sweep when `hardware = "auto"`. */
#ifndef FLAGTUNE_HARDWARE_H
#define FLAGTUNE_HARDWARE_H

/* Parses `nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader`
 * output into "8xNVIDIA-H100-80GB-HBM3" (count x name with spaces as dashes). Returns a new
 * string, or NULL when TEXT lists no GPU. *driver (may be NULL) receives the driver version. */
char *hardware_parse_nvidia_smi(const char *text, char **driver);

/* The fingerprint of this machine: from nvidia-smi when it works, else "host:NAME" with
 * *note set to a sentence saying why. Caller frees both. */
char *hardware_fingerprint(char **note);

#endif
