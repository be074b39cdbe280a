/* libFuzzer target: trialcfg_shell_quote, trialcfg_flag_token and trialcfg_export.
 * The sh-quoted form must read back to the original bytes under a small POSIX parser of our
 * own (single quotes literal, backslash outside quotes escapes the next byte, nothing else
 * allowed, and never a closing quote directly followed by an opening one), and export must never
 * write a line that escapes its quotes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trialcfg.h"

/* Reads one POSIX-shell word made only of '...' strings and \x escapes, from W up to an
 * unquoted newline or the end; *next is where it stopped. Returns the bytes (caller frees) or
 * NULL when the word holds anything else (an unquoted byte a shell would interpret: $, `,
 * space, ...), ends inside quotes, or closes a quote right before opening one ('' inside
 * quotes: zsh's RC_QUOTES would read it as a quote). */
static char *sh_word(const char *w, size_t *out_len, const char **next) {
  size_t n = strlen(w), k = 0, i = 0;
  char *out = malloc(n + 1);
  while (i < n && w[i] != '\n') {
    if (w[i] == '\'') {
      const char *end = strchr(w + i + 1, '\'');
      if (!end) goto bad;
      size_t len = (size_t)(end - (w + i + 1));
      memcpy(out + k, w + i + 1, len);
      k += len;
      i += len + 2;
      if (w[i] == '\'') goto bad;
    } else if (w[i] == '\\' && i + 1 < n && w[i + 1] != '\n') {
      out[k++] = w[i + 1];
      i += 2;
    } else {
      goto bad;
    }
  }
  out[k] = '\0';
  *out_len = k;
  if (next) *next = w + i;
  return out;
bad:
  free(out);
  return NULL;
}

static char *sh_unquote(const char *w, size_t *out_len) {
  const char *next = NULL;
  char *v = sh_word(w, out_len, &next);
  if (v && *next) { /* a whole word: nothing may follow */
    free(v);
    return NULL;
  }
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 8192) return 0;
  char *s = malloc(size + 1);
  memcpy(s, data, size);
  s[size] = '\0'; /* C strings: the value ends at the first NUL, as in an environment */
  size_t len = strlen(s);

  char *q = trialcfg_shell_quote(s);
  size_t back_len = 0;
  char *back = sh_unquote(q, &back_len);
  if (!back || back_len != len || memcmp(back, s, len) != 0) abort();
  free(back);
  free(q);

  char *tok = trialcfg_flag_token("xla_fuzz", s);
  if (strncmp(tok, "--xla_fuzz=", 11) != 0) abort();
  free(tok);

  /* The export: one variable with this value; every line must be a comment or an export
   * whose value reads back. */
  const char *names[] = {"FUZZ_VAR"};
  const char *values[] = {s};
  const char *comments[] = {s};
  export_info info = {comments, 1, s, NULL, names, values, 1, 0};
  char *buf = NULL;
  size_t blen = 0;
  FILE *f = open_memstream(&buf, &blen);
  char *err = NULL;
  int rc = trialcfg_export(f, EXPORT_SH, &info, &err);
  fclose(f);
  if (rc == 0) {
    int exports = 0;
    for (const char *p = buf; *p;) {
      if (*p == '#') { /* a comment line: its control bytes were replaced, so it ends here */
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
        continue;
      }
      const char *eq = strchr(p, '=');
      if (strncmp(p, "export ", 7) != 0 || !eq) abort();
      size_t vlen = 0;
      const char *next = NULL;
      char *v = sh_word(eq + 1, &vlen, &next);
      if (!v || vlen != len || memcmp(v, s, len) != 0) abort();
      free(v);
      exports++;
      p = *next ? next + 1 : next;
    }
    if (exports != (len ? 2 : 1)) abort();
  }
  free(err);
  free(buf);
  free(s);
  return 0;
}
