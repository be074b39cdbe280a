/* The hardware and software fingerprints recorded with a sweep: which GPUs (nvidia-smi) and
 * which jax/jaxlib (a probe command). */
#ifndef FLAGTUNE_HARDWARE_H
#define FLAGTUNE_HARDWARE_H

#include <stddef.h>

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

/* How many GPUs nvidia-smi lists on this machine; 0 when it is missing or lists none. */
int hardware_gpu_count(void);

/* Between a key's base (count x name, the whole of a key stored before details were
 * added) and its details. */
#define HARDWARE_KEY_SEP "@"

/* What a hardware key is made from: the outputs of
 *   nvidia-smi --query-gpu=name,memory.total,driver_version,mig.mode.current,index,uuid
 *     --format=csv,noheader   (GPUS; the first three columns alone also parse)
 *   nvidia-smi topo -m        (TOPO, may be NULL)
 *   nvidia-smi                (BANNER, for its "CUDA Version: X"; may be NULL). */
typedef struct {
  char *gpus, *topo, *banner;
} hardware_texts;

/* The key of the GPUs one trial uses: of the GPUs in T, those VISIBLE names (the
 * CUDA_VISIBLE_DEVICES the trials inherit: indices or GPU- uuid prefixes, read as CUDA does;
 * NULL: all), then the first GPUS_PER_TRIAL of them (<= 0: all visible). The key is
 *   "1xNVIDIA-H200@140GiB,drv550.54.15,cuda12.4"
 *   "8xNVIDIA-H100-80GB-HBM3@80GiB,drv535.104.05,cuda12.2,nvlink"
 * base "COUNTxNAME" (models joined with '+'), then HARDWARE_KEY_SEP and, comma-separated:
 * memory per model in GiB, the driver, the CUDA version the driver supports (when the banner
 * has it), the link between the trial's GPUs ("nvlink" for NVLink and NVSwitch, "pcie",
 * "mixed-link"; only for two or more GPUs with a readable matrix), and "mig" when MIG mode
 * is on. NULL when T lists no GPU or VISIBLE names none. Caller frees. */
char *hardware_key(const hardware_texts *t, const char *visible, int gpus_per_trial);

/* hardware_key of this machine, running the three nvidia-smi commands; "host:NAME" with
 * *NOTE set when there is no GPU (as hardware_fingerprint). Caller frees both. */
char *hardware_fingerprint_for(const char *visible, int gpus_per_trial, char **note);
/* The same, with each nvidia-smi run under PREFIX (a shell command prefix ending in `--`,
 * e.g. `srun --jobid=J ... --`: the compute node a Slurm sweep's trials run on). NULL: here. */
char *hardware_fingerprint_via(const char *prefix, const char *visible, int gpus_per_trial,
                               char **note);

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
