/* Run or resume: finds the unfinished sweep that `flagtune run EXPERIMENT` continues instead
 * of starting a new one (rerun.h). Owns what "the same experiment" means here; must not
 * claim, change or run the sweep (sweep_resume does, and says how far it stood). */
#include "rerun.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "json.h"
#include "store.h"

/* The whole file, NUL-terminated; NULL when it cannot be read. */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0, n;
  char *buf = xmalloc(cap);
  while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (len + 1 == cap) buf = xrealloc(buf, cap *= 2);
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  return buf;
}

typedef struct {
  const char *text, *name; /* the experiment's text; the --name asked for, or NULL */
  int64_t id;
  char *found_name, *status;
} finder;

/* One row of (id, name, status, experiment_text), newest first: the first that matches. */
static int on_row(const cJSON *columns, cJSON *row, void *ud) {
  finder *f = ud;
  (void)columns;
  if (!row) return 0;
  const cJSON *id = cJSON_GetArrayItem(row, 0), *name = cJSON_GetArrayItem(row, 1);
  const cJSON *status = cJSON_GetArrayItem(row, 2), *text = cJSON_GetArrayItem(row, 3);
  if (!cJSON_IsNumber(id) || !cJSON_IsString(name) || !cJSON_IsString(status) ||
      !cJSON_IsString(text) || strcmp(text->valuestring, f->text) != 0)
    return 0;
  if (f->name && strcmp(name->valuestring, f->name) != 0) return 0;
  f->id = (int64_t)id->valuedouble;
  f->found_name = xstrdup(name->valuestring);
  f->status = xstrdup(status->valuestring);
  return 1; /* found: stop */
}

int rerun_find(const char *path, const sweep_opts *o, int64_t *id, char **err) {
  *id = 0;
  if (access(o->db_path, F_OK) != 0) return 0; /* no database yet: nothing to continue */
  char *text = read_text(path);
  if (!text) return 0; /* run says what is wrong with the file */
  store *db = NULL;
  finder f = {.text = text, .name = o->name};
  /* A database that cannot be read as one (empty, of an older schema, not flagtune's) holds
   * no sweep to continue: run opens it for writing and says what is wrong, if anything. */
  int rc = 0;
  if (store_open(o->db_path, STORE_READONLY, &db, NULL) == 0)
    rc = store_query(db,
                     "SELECT id, name, status, experiment_text FROM sweeps "
                     "WHERE status IN ('interrupted', 'running') ORDER BY id DESC",
                     on_row, &f, err);
  store_close(db);
  if (rc == 0 && f.id > 0) {
    *id = f.id;
    char *name = json_terminal_text(f.found_name, NULL);
    diag_note(
        "flagtune: continuing sweep %lld \"%s\" (%s): it ran this experiment and is unfinished "
        "in %s; `flagtune run --new` starts a fresh sweep instead",
        (long long)f.id, name, f.status, o->db_path);
    free(name);
  }
  free(f.found_name);
  free(f.status);
  free(text);
  return rc;
}
