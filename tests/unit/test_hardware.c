/* Tests for src/exec/hardware.c: the nvidia-smi fingerprint from recorded outputs in tests/data/
 * (one GPU, eight, mixed models, empty, error text) and the jax/jaxlib version probe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "hardware.h"
#include "test.h"

static char *recorded(const char *name) {
  char *path = xasprintf("%s/tests/data/%s", SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  free(path);
  CHECK(f != NULL);
  if (!f) return xstrdup("");
  char *buf = xcalloc(1, 65536);
  size_t n = fread(buf, 1, 65535, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* The fingerprint of recorded output NAME (NULL when none); *driver set when found. */
static char *parse_file(const char *name, char **driver) {
  char *text = recorded(name);
  char *fp = hardware_parse_nvidia_smi(text, driver);
  free(text);
  return fp;
}

TEST(one_gpu) {
  char *drv = NULL, *fp = parse_file("nvidia_smi_1gpu.csv", &drv);
  CHECK_STR(fp, "1xNVIDIA-H100-80GB-HBM3");
  CHECK_STR(drv, "535.104.05");
  free(fp);
  free(drv);
}

TEST(eight_gpus) {
  char *fp = parse_file("nvidia_smi_8gpu.csv", NULL);
  CHECK_STR(fp, "8xNVIDIA-H100-80GB-HBM3");
  free(fp);
}

TEST(mixed_models) {
  char *drv = NULL, *fp = parse_file("nvidia_smi_mixed.csv", &drv);
  CHECK_STR(fp, "3xNVIDIA-A100-SXM4-80GB+1xNVIDIA-A100-SXM4-40GB");
  CHECK_STR(drv, "550.54.15");
  free(fp);
  free(drv);
}

TEST(empty_and_garbage) {
  char *drv = NULL;
  CHECK(parse_file("nvidia_smi_empty.csv", &drv) == NULL);
  CHECK(parse_file("nvidia_smi_garbage.csv", &drv) == NULL);
  CHECK(drv == NULL);
  CHECK(hardware_parse_nvidia_smi("a, b, c\n,,\n", NULL) == NULL);
  /* Runs of blanks become one dash; a CRLF line still reads. */
  char *fp = hardware_parse_nvidia_smi("Tesla  V100-SXM2-16GB, 16384 MiB, 470.57.02\r\n", NULL);
  CHECK_STR(fp, "1xTesla-V100-SXM2-16GB");
  free(fp);
}

TEST(versions) {
  char *lib = NULL, *text = recorded("jax_versions.txt");
  char *v = hardware_parse_versions(text, &lib);
  CHECK_STR(v, "jax 0.4.31, jaxlib 0.4.31");
  CHECK_STR(lib, "0.4.31");
  free(v);
  free(lib);
  free(text);
  lib = NULL;
  v = hardware_parse_versions("WARNING: x y z\n0.5.1 0.5.0+cuda12\n", &lib);
  CHECK_STR(v, "jax 0.5.1, jaxlib 0.5.0+cuda12");
  CHECK_STR(lib, "0.5.0+cuda12");
  free(v);
  free(lib);
  CHECK(hardware_parse_versions("ModuleNotFoundError: No module named 'jax'\n", NULL) == NULL);
  CHECK(hardware_parse_versions("1 2\n", NULL) == NULL);
}

TEST(software_probe) {
  char *lib = NULL, *v = hardware_software("echo 0.4.31 0.4.30", &lib);
  CHECK_STR(v, "jax 0.4.31, jaxlib 0.4.30");
  CHECK_STR(lib, "0.4.30");
  free(v);
  free(lib);
  CHECK(hardware_software("exit 1", NULL) == NULL);
  CHECK(hardware_software("echo hello", NULL) == NULL);
  CHECK(hardware_software("/nonexistent/python3 -c x", NULL) == NULL);
}

TEST(fingerprint_without_gpu) {
  char *note = NULL, *fp = hardware_fingerprint_for(NULL, 0, &note);
  CHECK(fp != NULL);
  /* Either a real GPU list or the host fallback with its note. */
  if (fp && strncmp(fp, "host:", 5) == 0) CHECK(note != NULL && strstr(note, "no GPU found"));
  free(fp);
  free(note);
}

/* The key from recorded outputs: GPUS (a tests/data file), TOPO and BANNER (files or NULL). */
static char *key_of(const char *gpus, const char *topo, const char *banner, const char *visible,
                    int per_trial) {
  hardware_texts t = {recorded(gpus), topo ? recorded(topo) : NULL,
                      banner ? recorded(banner) : NULL};
  char *k = hardware_key(&t, visible, per_trial);
  free(t.gpus), free(t.topo), free(t.banner);
  return k;
}

/* H200's name carries no memory size: the key's details do, with the driver, the CUDA
 * version from nvidia-smi's banner and the link between the trial's GPUs. */
TEST(key_details) {
  char *k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_nvswitch.txt",
                   "nvidia_smi_banner.txt", NULL, 0);
  CHECK_STR(k, "8xNVIDIA-H200@140GiB,drv550.54.15,cuda12.4,nvlink");
  free(k);
  /* The older three-column query still keys (no index: rows are 0..n-1). */
  k = key_of("nvidia_smi_8gpu.csv", "nvidia_smi_topo_nvswitch.txt", NULL, NULL, 0);
  CHECK_STR(k, "8xNVIDIA-H100-80GB-HBM3@80GiB,drv535.104.05,nvlink");
  free(k);
  /* No matrix: no link part. */
  k = key_of("nvidia_smi_mixed.csv", NULL, NULL, NULL, 0);
  CHECK_STR(k, "3xNVIDIA-A100-SXM4-80GB+1xNVIDIA-A100-SXM4-40GB@80GiB+40GiB,drv550.54.15");
  free(k);
}

/* A 1-GPU sweep on an 8-GPU host is keyed by the one GPU a trial uses, not by eight. */
TEST(key_counts_trial_gpus) {
  char *k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_nvswitch.txt",
                   "nvidia_smi_banner.txt", NULL, 1);
  CHECK_STR(k, "1xNVIDIA-H200@140GiB,drv550.54.15,cuda12.4");
  free(k);
  k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_nvswitch.txt", NULL, "4,5,6,7", 0);
  CHECK_STR(k, "4xNVIDIA-H200@140GiB,drv550.54.15,nvlink");
  free(k);
  k = key_of("nvidia_smi_h200_full.csv", NULL, NULL, "6,7", 8); /* capped at the visible two */
  CHECK_STR(k, "2xNVIDIA-H200@140GiB,drv550.54.15");
  free(k);
  /* UUID prefixes as CUDA takes them; an entry it cannot resolve ends the list. */
  k = key_of("nvidia_smi_h200_full.csv", NULL, NULL, "GPU-3c1e7f4a-58d2-4a41-9b0e-1f2a3b4c5d63,9,1",
             0);
  CHECK_STR(k, "1xNVIDIA-H200@140GiB,drv550.54.15");
  free(k);
  k = key_of("nvidia_smi_h200_full.csv", NULL, NULL, "GPU-3c1e", 0); /* ambiguous prefix */
  CHECK(k == NULL);
  k = key_of("nvidia_smi_h200_full.csv", NULL, NULL, "", 0); /* no GPU visible */
  CHECK(k == NULL);
  k = key_of("nvidia_smi_empty.csv", NULL, NULL, NULL, 0);
  CHECK(k == NULL);
  /* Mixed models: the trial's own GPUs decide (rows 2 and 3 are 40 GB and 80 GB). */
  k = key_of("nvidia_smi_mixed.csv", NULL, NULL, "2", 0);
  CHECK_STR(k, "1xNVIDIA-A100-SXM4-40GB@40GiB,drv550.54.15");
  free(k);
}

/* `nvidia-smi topo -m`: NV# between every pair of the trial's GPUs is NVLink (NVSwitch
 * boards show NV18 everywhere), PHB/SYS/... is PCIe; MIG mode on any of them is named. */
TEST(key_link_and_mig) {
  char *k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_pcie.txt", NULL, "0,1,2,3", 0);
  CHECK_STR(k, "4xNVIDIA-H200@140GiB,drv550.54.15,pcie");
  free(k);
  k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_pairs.txt", NULL, "0,1", 0);
  CHECK_STR(k, "2xNVIDIA-H200@140GiB,drv550.54.15,nvlink");
  free(k);
  k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_pairs.txt", NULL, "1,2", 0);
  CHECK_STR(k, "2xNVIDIA-H200@140GiB,drv550.54.15,pcie");
  free(k);
  k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_pairs.txt", NULL, "0,1,2", 0);
  CHECK_STR(k, "3xNVIDIA-H200@140GiB,drv550.54.15,mixed-link");
  free(k);
  /* A matrix that lacks a trial GPU's row says nothing. */
  k = key_of("nvidia_smi_h200_full.csv", "nvidia_smi_topo_pcie.txt", NULL, "4,5", 0);
  CHECK_STR(k, "2xNVIDIA-H200@140GiB,drv550.54.15");
  free(k);
  k = key_of("nvidia_smi_a100_mig.csv", NULL, NULL, NULL, 0);
  CHECK_STR(k, "2xNVIDIA-A100-SXM4-40GB@40GiB,drv535.104.05,mig");
  free(k);
  k = key_of("nvidia_smi_a100_mig.csv", NULL, NULL, "MIG-8a3e5c1d-2b4f-5e6a-9c8d-7e6f5a4b3c21", 0);
  CHECK_STR(k, "1xNVIDIA-A100-SXM4-40GB@40GiB,drv535.104.05,mig");
  free(k);
  k = key_of("nvidia_smi_a100_mig.csv", NULL, NULL, "1", 0);
  CHECK_STR(k, "1xNVIDIA-A100-SXM4-40GB@40GiB,drv535.104.05");
  free(k);
}

/* The length of KEY's base: up to HARDWARE_KEY_SEP, or all of it (KEY_BASE in store.c). */
static size_t hardware_key_base_len(const char *key) {
  const char *sep = key ? strstr(key, HARDWARE_KEY_SEP) : NULL;
  return key ? (size_t)(sep ? sep - key : (ptrdiff_t)strlen(key)) : 0;
}

/* The matching rule that store.c applies in SQL (KEY_BASE; unit.store's
 * best_and_warm_match_hardware_base runs it), written out in C over hardware_key_base_len:
 * equal keys; a bare base matches every key with that base; two detailed keys must be equal. */
static int hardware_key_matches(const char *asked, const char *stored) {
  if (!asked || !stored) return 0;
  if (strcmp(asked, stored) == 0) return 1;
  size_t a = hardware_key_base_len(asked), s = hardware_key_base_len(stored);
  if (asked[a] != '\0' && stored[s] != '\0') return 0;
  return a == s && strncmp(asked, stored, a) == 0;
}

/* Old keys stay readable: a bare base (an older sweep's whole key, or what a user types)
 * matches every key with that base; two detailed keys must be equal. */
TEST(key_matching) {
  const char *old = "8xNVIDIA-H100-80GB-HBM3";
  const char *now = "8xNVIDIA-H100-80GB-HBM3@80GiB,drv535.104.05,cuda12.2,nvlink";
  CHECK_INT((int)hardware_key_base_len(now), (int)strlen(old));
  CHECK_INT((int)hardware_key_base_len(old), (int)strlen(old));
  CHECK(hardware_key_matches(old, now));
  CHECK(hardware_key_matches(now, old));
  CHECK(hardware_key_matches(now, now));
  CHECK(!hardware_key_matches(now, "8xNVIDIA-H100-80GB-HBM3@80GiB,drv550.54.15,cuda12.4,nvlink"));
  CHECK(!hardware_key_matches("1xNVIDIA-H100-80GB-HBM3", now));
  CHECK(!hardware_key_matches("8xNVIDIA-H100", now));      /* a base is matched whole */
  CHECK(hardware_key_matches("8xH100-SXM", "8xH100-SXM")); /* a user's own string */
  CHECK(!hardware_key_matches(NULL, now));
}
