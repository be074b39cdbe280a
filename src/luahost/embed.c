/* Lookup over the embedded file table. Owns nothing; the table itself is generated. */
#include "embed.h"

#include <string.h>

const embed_file *embed_find(const char *path) {
  for (const embed_file *f = embed_files; f->path; f++) {
    if (strcmp(f->path, path) == 0) return f;
  }
  return NULL;
}
