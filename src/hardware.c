/* The hardware and software fingerprints: asks nvidia-smi (when present) which GPUs this
 * machine has, and a probe command which jax and jaxlib it runs. Owns only the probes and
 * their parsing; never decides what is stored or compared. */
#include "hardware.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

enum { MAX_MODELS = 16, FIELD_MAX = 256 };

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
  return s;
}

/* "81559 MiB": the memory.total column. */
static int is_mib(const char *s) {
  if (!isdigit((unsigned char)*s)) return 0;
  while (isdigit((unsigned char)*s)) s++;
  return strcmp(s, " MiB") == 0;
}

/* "535.104.05": digits and dots, starting with a digit. */
static int is_version(const char *s) {
  if (!isdigit((unsigned char)*s)) return 0;
  return strspn(s, "0123456789.") == strlen(s);
}

/* Splits LINE (modified) into exactly 3 trimmed CSV fields; 0 when it is not a GPU row. */
static int gpu_row(char *line, char **name, char **mem, char **drv) {
  char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
  if (!c2 || strchr(c2 + 1, ',')) return 0;
  *c1 = *c2 = '\0';
  *name = trim(line);
  *mem = trim(c1 + 1);
  *drv = trim(c2 + 1);
  return **name && is_mib(*mem) && is_version(*drv);
}

/* NAME with every run of blanks turned into one dash. */
static void dashed(const char *name, char *out, size_t n) {
  size_t k = 0;
  for (const char *p = name; *p && k + 1 < n; p++) {
    if (isspace((unsigned char)*p)) {
      if (k > 0 && out[k - 1] != '-') out[k++] = '-';
    } else {
      out[k++] = *p;
    }
  }
  out[k] = '\0';
}

typedef struct {
  char name[FIELD_MAX];
  int count;
} model_count;

/* Counts LINE's GPU into MODELS; the first GPU's driver goes to DRV. */
static void count_line(const char *line, size_t len, model_count *models, int *n, char *drv) {
  char *copy = xstrndup(line, len), *name, *mem, *d;
  if (gpu_row(copy, &name, &mem, &d)) {
    char key[FIELD_MAX];
    dashed(name, key, sizeof key);
    int i = 0;
    while (i < *n && strcmp(models[i].name, key) != 0) i++;
    if (i == *n && *n < MAX_MODELS) {
      snprintf(models[*n].name, FIELD_MAX, "%s", key);
      models[(*n)++].count = 0;
    }
    if (i < *n) models[i].count++;
    if (!drv[0]) snprintf(drv, 64, "%s", d);
  }
  free(copy);
}

char *hardware_parse_nvidia_smi(const char *text, char **driver) {
  model_count models[MAX_MODELS];
  int n = 0;
  char drv[64] = "";
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    count_line(line, nl ? (size_t)(nl - line) : strlen(line), models, &n, drv);
    line = nl ? nl + 1 : NULL;
  }
  if (n == 0) return NULL;
  char *out = xstrdup("");
  for (int i = 0; i < n; i++) {
    char *next = xasprintf("%s%s%dx%s", out, i ? "+" : "", models[i].count, models[i].name);
    free(out);
    out = next;
  }
  if (driver) *driver = xstrdup(drv);
  return out;
}

/* The command's stdout, or NULL when it cannot start or exits non-zero. */
char *hardware_capture(const char *cmd, int *status) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 4096, n = 0, r;
  char *buf = xmalloc(cap);
  while ((r = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += r;
    if (n + 1 >= cap) buf = xrealloc(buf, cap *= 2);
  }
  buf[n] = '\0';
  int st = pclose(p);
  if (status) *status = st;
  return buf;
}

/* CMD's stdout, or NULL when it could not run or failed. */
static char *run_probe(const char *cmd) {
  int status = 0;
  char *out = hardware_capture(cmd, &status);
  if (out && status != 0) {
    free(out);
    return NULL;
  }
  return out;
}

char *hardware_fingerprint(char **note) {
  char *out = run_probe(
      "nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null");
  char *fp = out ? hardware_parse_nvidia_smi(out, NULL) : NULL;
  free(out);
  if (fp) return fp;
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  if (note)
    *note = xasprintf("no GPU found (nvidia-smi is missing or lists none): hardware recorded as "
                      "'host:%s'; set `hardware = \"...\"` to name it",
                      host);
  return xasprintf("host:%s", host);
}

/* A version as jax prints it: a digit first, then digits, dots, letters, '+', '-'
 * ("0.4.31", "0.4.36.dev20241122", "0.5.0+cuda12"). */
static int looks_like_version(const char *s) {
  if (!isdigit((unsigned char)*s) || !strchr(s, '.')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr(".+-_", *s)) return 0;
  return 1;
}

/* "A B" with two versions: sets the two (pointers into the modified LINE). */
static int version_pair(char *line, char **jax, char **lib) {
  char *save = NULL;
  *jax = strtok_r(line, " \t\r", &save);
  *lib = *jax ? strtok_r(NULL, " \t\r", &save) : NULL;
  return *lib && !strtok_r(NULL, " \t\r", &save) && looks_like_version(*jax) &&
         looks_like_version(*lib);
}

char *hardware_parse_versions(const char *text, char **jaxlib) {
  char *found = NULL;
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    char *copy = xstrndup(line, nl ? (size_t)(nl - line) : strlen(line)), *jax, *lib;
    if (version_pair(copy, &jax, &lib)) {
      free(found);
      found = xasprintf("jax %s, jaxlib %s", jax, lib);
      if (jaxlib) {
        free(*jaxlib);
        *jaxlib = xstrdup(lib);
      }
    }
    free(copy);
    line = nl ? nl + 1 : NULL;
  }
  return found;
}

char *hardware_software(const char *probe_cmd, char **jaxlib) {
  char *cmd = xasprintf("%s 2>/dev/null", probe_cmd ? probe_cmd : HARDWARE_SOFTWARE_PROBE);
  char *out = run_probe(cmd);
  free(cmd);
  char *v = out ? hardware_parse_versions(out, jaxlib) : NULL;
  free(out);
  return v;
}
