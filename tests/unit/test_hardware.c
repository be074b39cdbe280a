/* Tests for src/hardware.c: the nvidia-smi fingerprint from recorded outputs in tests/data/
 * (one GPU, eight, mixed models, empty, error text) and the jax/jaxlib version probe. */
#include <stdio.h>
#include <stdlib.h>

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
  char *note = NULL, *fp = hardware_fingerprint(&note);
  CHECK(fp != NULL);
  /* Either a real GPU list or the host fallback with its note. */
  if (fp && strncmp(fp, "host:", 5) == 0) CHECK(note != NULL && strstr(note, "no GPU found"));
  free(fp);
  free(note);
}
