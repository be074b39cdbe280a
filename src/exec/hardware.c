/* The hardware and software fingerprints: asks nvidia-smi (when present) which GPUs this
 * machine has and how they are joined, and a probe command which jax and jaxlib it runs.
 * Owns only the probes, their parsing and the key's format (and how two keys compare);
 * never decides what is stored or when. */
#include "hardware.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "launch.h"

enum { MAX_MODELS = 16, MAX_GPUS = 64, FIELD_MAX = 256 };

/* The query hardware_fingerprint_for runs; the first three columns are the older query's,
 * whose recorded output still parses. */
#define SMI_QUERY                                                                        \
  "nvidia-smi --query-gpu=name,memory.total,driver_version,mig.mode.current,index,uuid " \
  "--format=csv,noheader 2>/dev/null"
/* For drivers that predate MIG, which refuse the query above as a whole. */
#define SMI_QUERY_OLD \
  "nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null"

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
  return s;
}

/* "81559 MiB": the memory.total column; its number goes to *MIB. */
static int is_mib(const char *s, long *mib) {
  if (!isdigit((unsigned char)*s)) return 0;
  char *end;
  *mib = strtol(s, &end, 10);
  return strcmp(end, " MiB") == 0;
}

/* "535.104.05": digits and dots, starting with a digit. */
static int is_version(const char *s) {
  if (!isdigit((unsigned char)*s)) return 0;
  return strspn(s, "0123456789.") == strlen(s);
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

/* One GPU as nvidia-smi lists it. */
typedef struct {
  char name[FIELD_MAX]; /* blanks as dashes */
  long mib;
  char drv[64];
  int mig;        /* MIG mode "Enabled" */
  int index;      /* nvidia-smi's index; the row number when the column is absent */
  char uuid[128]; /* "GPU-...", or "" */
} gpu;

/* Splits LINE (modified) into its trimmed CSV fields; returns how many (at most MAX). */
static int csv_fields(char *line, char **f, int max) {
  int n = 0;
  for (char *p = line; n < max;) {
    char *c = strchr(p, ',');
    if (c) *c = '\0';
    f[n++] = trim(p);
    if (!c) return n;
    p = c + 1;
  }
  return max + 1;
}

/* LINE as a GPU row: "name, N MiB, driver" and optionally ", mig mode, index, uuid". */
static int gpu_row(const char *line, size_t len, int row, gpu *g) {
  char *copy = xstrndup(line, len), *f[7];
  int n = csv_fields(copy, f, 6),
      ok = (n == 3 || n == 6) && *f[0] && is_mib(f[1], &g->mib) && is_version(f[2]);
  if (ok) {
    dashed(f[0], g->name, sizeof g->name);
    snprintf(g->drv, sizeof g->drv, "%s", f[2]);
    g->mig = n == 6 && strcmp(f[3], "Enabled") == 0;
    g->index = n == 6 && isdigit((unsigned char)*f[4]) ? atoi(f[4]) : row;
    snprintf(g->uuid, sizeof g->uuid, "%s", n == 6 ? f[5] : "");
  }
  free(copy);
  return ok;
}

/* The GPU rows of TEXT into G (at most MAX_GPUS); returns how many. */
static int parse_gpus(const char *text, gpu *g) {
  int n = 0;
  for (const char *line = text; line && *line && n < MAX_GPUS;) {
    const char *nl = strchr(line, '\n');
    if (gpu_row(line, nl ? (size_t)(nl - line) : strlen(line), n, &g[n])) n++;
    line = nl ? nl + 1 : NULL;
  }
  return n;
}

/* "8xNVIDIA-H100-80GB-HBM3", models joined with '+' in the order first seen, over the GPUs
 * PICK[0..N) of G. When MEM, the matching "80GiB" (memory per model) goes there. */
static char *count_by_model(const gpu *g, const int *pick, int n, char **mem) {
  int idx[MAX_MODELS], count[MAX_MODELS], m = 0;
  for (int k = 0; k < n; k++) {
    int i = 0;
    while (i < m && strcmp(g[idx[i]].name, g[pick[k]].name) != 0) i++;
    if (i == m && m < MAX_MODELS) idx[m] = pick[k], count[m++] = 0;
    if (i < m) count[i]++;
  }
  char *out = xstrdup(""), *mm = xstrdup("");
  for (int i = 0; i < m; i++) {
    char *next = xasprintf("%s%s%dx%s", out, i ? "+" : "", count[i], g[idx[i]].name);
    char *nm = xasprintf("%s%s%ldGiB", mm, i ? "+" : "", (g[idx[i]].mib + 512) / 1024);
    free(out), free(mm);
    out = next, mm = nm;
  }
  if (mem)
    *mem = mm;
  else
    free(mm);
  return out;
}

char *hardware_parse_nvidia_smi(const char *text, char **driver) {
  gpu g[MAX_GPUS];
  int n = parse_gpus(text, g), all[MAX_GPUS];
  if (n == 0) return NULL;
  for (int i = 0; i < n; i++) all[i] = i;
  if (driver) *driver = xstrdup(g[0].drv);
  return count_by_model(g, all, n, NULL);
}

/* The row of G that CUDA_VISIBLE_DEVICES entry E names (an index, or a unique prefix of a
 * "GPU-" uuid, as CUDA reads them), or -1. A "MIG-" instance is taken as the first GPU in
 * MIG mode: the query lists whole GPUs, so its name and memory are the parent's. */
static int visible_entry(const gpu *g, int n, const char *e) {
  if (strncmp(e, "MIG-", 4) == 0) {
    for (int k = 0; k < n; k++)
      if (g[k].mig) return k;
    return -1;
  }
  if (isdigit((unsigned char)*e)) {
    char *end;
    long i = strtol(e, &end, 10);
    for (int k = 0; *end == '\0' && k < n; k++)
      if (g[k].index == i) return k;
    return -1;
  }
  int found = -1;
  for (int k = 0; k < n; k++)
    if (g[k].uuid[0] && strncmp(g[k].uuid, e, strlen(e)) == 0) {
      if (found >= 0) return -1; /* ambiguous */
      found = k;
    }
  return found;
}

/* The rows of G a trial may use, into PICK: those VISIBLE names (NULL: all; CUDA stops at
 * the first entry it cannot resolve, MIG instances included), then the first GPUS_PER_TRIAL
 * of them (<= 0: all). Returns how many. */
static int trial_gpus(const gpu *g, int n, const char *visible, int gpus_per_trial, int *pick) {
  int m = 0;
  if (!visible) {
    for (int i = 0; i < n; i++) pick[m++] = i;
  } else {
    char *copy = xstrdup(visible), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && m < n; t = strtok_r(NULL, ",", &save)) {
      int k = visible_entry(g, n, trim(t));
      if (k < 0) break;
      pick[m++] = k;
    }
    free(copy);
  }
  return gpus_per_trial > 0 && gpus_per_trial < m ? gpus_per_trial : m;
}

/* The link between two GPUs in a `nvidia-smi topo -m` cell: 1 NVLink ("NV18"), 0 PCIe or
 * the CPU interconnect (PIX, PXB, PHB, NODE, SYS), -1 unknown. */
static int cell_link(const char *c) {
  if (strncmp(c, "NV", 2) == 0 && isdigit((unsigned char)c[2])) return 1;
  static const char *const pcie[] = {"PIX", "PXB", "PHB", "NODE", "SYS", "PCIE", "SOC"};
  for (size_t i = 0; i < sizeof pcie / sizeof pcie[0]; i++)
    if (strcmp(c, pcie[i]) == 0) return 0;
  return -1;
}

/* Removes the ANSI underline/bold escapes ("\033[4m") some nvidia-smi versions put in the
 * matrix's header, in place. */
static void strip_escapes(char *s) {
  char *w = s;
  for (char *r = s; *r;) {
    if (r[0] == '\033' && r[1] == '[') {
      r += 2;
      while (*r && !isalpha((unsigned char)*r)) r++;
      if (*r) r++;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

/* Cell (row GPU A, column GPU B) of a topo -m matrix: rows and the header are tab-separated;
 * the header's columns are "GPU0", "GPU1", ... after an empty first cell. */
static int topo_cell(const char *topo, int a, int b) {
  char head[16], row[16];
  snprintf(head, sizeof head, "GPU%d", b);
  snprintf(row, sizeof row, "GPU%d", a);
  int col = -1, link = -1;
  for (const char *line = topo; line && *line && link < 0;) {
    const char *nl = strchr(line, '\n');
    char *copy = xstrndup(line, nl ? (size_t)(nl - line) : strlen(line)), *save = NULL;
    strip_escapes(copy);
    int first = copy[0] == '\t' || copy[0] == ' ';
    char *t = strtok_r(copy, "\t", &save);
    if (first && col < 0) {
      for (int c = 1; t; t = strtok_r(NULL, "\t", &save), c++)
        if (strcmp(trim(t), head) == 0) col = c;
    } else if (t && col > 0 && strcmp(trim(t), row) == 0) {
      for (int c = 1; (t = strtok_r(NULL, "\t", &save)); c++)
        if (c == col) link = cell_link(trim(t));
      if (link < 0) link = -2; /* the row, but no usable cell */
    }
    free(copy);
    line = nl ? nl + 1 : NULL;
  }
  return link < 0 ? -1 : link;
}

/* "nvlink" when every pair of the picked GPUs is joined by NVLink (NVSwitch systems show
 * NV# for all pairs too), "pcie" when none is, "mixed-link" otherwise; NULL for one GPU or
 * an unreadable matrix. Topology rows use nvidia-smi's indices. */
static const char *link_kind(const char *topo, const gpu *g, const int *pick, int n) {
  int nv = 0, other = 0;
  if (!topo || n < 2) return NULL;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      int l = topo_cell(topo, g[pick[i]].index, g[pick[j]].index);
      if (l < 0) return NULL;
      if (l)
        nv++;
      else
        other++;
    }
  return other == 0 ? "nvlink" : nv == 0 ? "pcie" : "mixed-link";
}

/* "12.4" from nvidia-smi's banner ("| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA
 * Version: 12.4 |") into OUT; 0 when absent. */
static int cuda_version(const char *banner, char *out, size_t n) {
  const char *p = banner ? strstr(banner, "CUDA Version:") : NULL;
  if (!p) return 0;
  p += strlen("CUDA Version:");
  while (*p == ' ') p++;
  size_t k = strspn(p, "0123456789.");
  if (k == 0 || k >= n) return 0;
  memcpy(out, p, k);
  out[k] = '\0';
  return 1;
}

char *hardware_key(const hardware_texts *t, const char *visible, int gpus_per_trial) {
  gpu g[MAX_GPUS];
  int pick[MAX_GPUS], n = t && t->gpus ? parse_gpus(t->gpus, g) : 0;
  int m = n ? trial_gpus(g, n, visible, gpus_per_trial, pick) : 0;
  if (m == 0) return NULL;
  char *mem = NULL, *base = count_by_model(g, pick, m, &mem), cuda[32] = "";
  int mig = 0;
  for (int i = 0; i < m; i++) mig |= g[pick[i]].mig;
  const char *link = link_kind(t->topo, g, pick, m);
  int has_cuda = cuda_version(t->banner, cuda, sizeof cuda);
  char *key = xasprintf("%s" HARDWARE_KEY_SEP "%s,drv%s%s%s%s%s%s", base, mem, g[pick[0]].drv,
                        has_cuda ? ",cuda" : "", has_cuda ? cuda : "", link ? "," : "",
                        link ? link : "", mig ? ",mig" : "");
  free(base), free(mem);
  return key;
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

/* PREFIX (a launcher such as `srun ... --`) then CMD, run as run_probe does. */
static char *run_on(const char *prefix, const char *cmd) {
  if (!prefix) return run_probe(cmd);
  char *full = xasprintf("%s %s", prefix, cmd);
  char *out = run_probe(full);
  free(full);
  return out;
}

/* 1 when NAME is an executable file in a directory of $PATH (unset or empty: /usr/bin:/bin;
 * an empty or relative entry against the current directory): a local query of a machine that
 * has no nvidia-smi costs no shell (two `sh -c` spawns were most of `flagtune check`'s time). */
static int on_path(const char *name) {
  const char *path = getenv("PATH");
  char *found = launch_which(name, path && *path ? path : "/usr/bin:/bin", NULL);
  int ok = found != NULL;
  free(found);
  return ok;
}

/* The GPU list (run under PREFIX when not NULL): the full query, else the older one. This
 * machine's answer is asked for twice by a sweep (the slots' GPU count, the fingerprint) and
 * is kept for the process's life; a prefixed one (another node) is not. Caller frees. */
static char *gpu_query(const char *prefix) {
  static int asked;
  static char *here;
  if (!prefix && asked) return here ? xstrdup(here) : NULL;
  char *out = NULL;
  if (prefix || on_path("nvidia-smi")) {
    out = run_on(prefix, SMI_QUERY);
    if (!out) out = run_on(prefix, SMI_QUERY_OLD);
  }
  if (!prefix) {
    asked = 1;
    here = out ? xstrdup(out) : NULL;
  }
  return out;
}

/* "host:NAME" with *NOTE (may be NULL) saying why: no GPU to fingerprint. */
static char *host_key(char **note, const char *why) {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  if (note)
    *note = xasprintf("%s: hardware recorded as 'host:%s'; set `hardware = \"...\"` to name it",
                      why, host);
  return xasprintf("host:%s", host);
}

int hardware_gpu_count(void) {
  char *out = gpu_query(NULL);
  int n = 0;
  for (char *line = out; line && *line;) {
    char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len > 0 && memchr(line, ',', len)) n++; /* "name, memory, driver, ..." */
    line = end ? end + 1 : line + len;
  }
  free(out);
  return n;
}

char *hardware_fingerprint_for(const char *visible, int gpus_per_trial, char **note) {
  return hardware_fingerprint_via(NULL, visible, gpus_per_trial, note);
}

char *hardware_fingerprint_via(const char *prefix, const char *visible, int gpus_per_trial,
                               char **note) {
  hardware_texts t = {gpu_query(prefix), NULL, NULL};
  char *any = t.gpus ? hardware_parse_nvidia_smi(t.gpus, NULL) : NULL, *fp = NULL;
  if (any) {
    t.topo = run_on(prefix, "nvidia-smi topo -m 2>/dev/null");
    t.banner = run_on(prefix, "nvidia-smi 2>/dev/null");
    fp = hardware_key(&t, visible, gpus_per_trial);
  }
  free(t.gpus), free(t.topo), free(t.banner);
  if (fp) return free(any), fp;
  fp = host_key(note, any ? "CUDA_VISIBLE_DEVICES names no GPU that nvidia-smi lists"
                          : "no GPU found (nvidia-smi is missing or lists none)");
  free(any);
  return fp;
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
  /* The probe (python3 importing jax) takes seconds; a run asks twice (the catalog's release
   * warnings while loading the experiment, then the sweep's record), so the answer of the last
   * command is kept for the process's life. */
  static char *last_cmd, *last_out;
  char *cmd = xasprintf("%s 2>/dev/null", probe_cmd ? probe_cmd : HARDWARE_SOFTWARE_PROBE);
  if (!last_cmd || strcmp(last_cmd, cmd) != 0) {
    free(last_cmd);
    free(last_out);
    last_out = run_probe(cmd);
    last_cmd = cmd;
  } else {
    free(cmd);
  }
  return last_out ? hardware_parse_versions(last_out, jaxlib) : NULL;
}
