/* The hardware fingerprint: asks nvidia-smi (when present) which GPUs this machine has.
 * Owns only the probe and its parsing; never decides what is stored. */
#include "hardware.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
  return s;
}

/* Field I (0-based) of a CSV line, trimmed, copied into BUF. */
static void csv_field(const char *line, int i, char *buf, size_t n) {
  const char *p = line;
  for (int k = 0; k < i && p; k++) {
    p = strchr(p, ',');
    if (p) p++;
  }
  buf[0] = '\0';
  if (!p) return;
  size_t len = strcspn(p, ",\n");
  if (len >= n) len = n - 1;
  memcpy(buf, p, len);
  buf[len] = '\0';
  memmove(buf, trim(buf), strlen(trim(buf)) + 1);
}

char *hardware_parse_nvidia_smi(const char *text, char **driver) {
  char first[256] = "", name[256], drv[64] = "";
  int count = 0, mixed = 0;
  const char *line = text;
  while (line && *line) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    char *copy = xstrndup(line, len);
    csv_field(copy, 0, name, sizeof name);
    if (name[0] && strstr(copy, ",")) {
      if (count == 0) {
        snprintf(first, sizeof first, "%s", name);
        csv_field(copy, 2, drv, sizeof drv);
      } else if (strcmp(first, name) != 0) {
        mixed = 1;
      }
      count++;
    }
    free(copy);
    line = nl ? nl + 1 : NULL;
  }
  if (count == 0) return NULL;
  for (char *p = first; *p; p++)
    if (isspace((unsigned char)*p)) *p = '-';
  if (driver) *driver = xstrdup(drv);
  return xasprintf("%dx%s%s", count, first, mixed ? "-mixed" : "");
}

static char *run_probe(const char *cmd) {
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t cap = 4096, n = 0, r;
  char *buf = xmalloc(cap);
  while ((r = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += r;
    if (n + 1 >= cap) buf = xrealloc(buf, cap *= 2);
  }
  buf[n] = '\0';
  if (pclose(p) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
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
