/* The hardware and software fingerprints recorded with a sweep: which GPUs (nvidia-smi) and
 * which jax/jaxlib (a probe command). */
#ifndef FLAGTUNE_HARDWARE_H
#define FLAGTUNE_HARDWARE_H

/* The probe hardware_software runs when given NULL. */
#define HARDWARE_SOFTWARE_PROBE \
  "python3 -c \"import jax, jaxlib; print(jax.__version__, jaxlib.__version__)\""

/* Parses `nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader`
 * output into "8xNVIDIA-H100-80GB-HBM3" (count x name, blanks as dashes). Different models
 * are joined with '+' in the order first seen: "4xNVIDIA-A100-SXM4-80GB+4xNVIDIA-A100-SXM4-40GB".
 * Lines that are not "name, N MiB, driver" (headers, error text) are ignored. Returns a new
 * string, or NULL when TEXT lists no GPU. *driver (may be NULL) receives the first GPU's
 * driver version (new string; untouched when NULL is returned). */
char *hardware_parse_nvidia_smi(const char *text, char **driver);

/* The fingerprint of this machine: from nvidia-smi when it works, else "host:NAME" with
 * *note set to a sentence saying why. Caller frees both. */
char *hardware_fingerprint(char **note);

/* Parses the probe's output, "0.4.31 0.4.31" (jax, then jaxlib; the last such line counts),
 * into "jax 0.4.31, jaxlib 0.4.31". *jaxlib (may be NULL) receives the jaxlib version alone.
 * NULL when no line holds two version numbers. */
char *hardware_parse_versions(const char *text, char **jaxlib);

/* Runs PROBE_CMD (a shell command; NULL: HARDWARE_SOFTWARE_PROBE) and parses its stdout with
 * hardware_parse_versions. NULL when the command fails or prints no versions. Caller frees. */
char *hardware_software(const char *probe_cmd, char **jaxlib);

/* Runs shell command CMD and returns its stdout (new string), whatever its exit status,
 * which goes to *status (may be NULL) as pclose reports it; NULL when it cannot be run. */
char *hardware_capture(const char *cmd, int *status);

#endif
