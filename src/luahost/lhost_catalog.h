/* The flag catalog (lua/catalog.lua) read from C through the Lua host: its entries by index,
 * a field as display text, an entry as JSON, a name's did-you-mean and the value a probe
 * gives it. `flagtune flags` (src/cli/flagcmd.c, src/cli/flagprobe.c) reads the catalog only
 * through here, so that neither calls the Lua API nor the other for it. */
#ifndef FLAGTUNE_LHOST_CATALOG_H
#define FLAGTUNE_LHOST_CATALOG_H

#include <cjson/cJSON.h>

typedef struct lcatalog lcatalog;

/* A new Lua host with the catalog loaded. FT_ELUA with *err (ERR may be NULL) when it
 * cannot load; *out is then NULL. */
int lcatalog_open(lcatalog **out, char **err);
void lcatalog_free(lcatalog *c);
/* The number of entries; they are numbered 1..count in the catalog's order. */
int lcatalog_count(const lcatalog *c);
/* Entry I's KEY as display text (new string): '' for "", booleans and numbers as XLA writes
 * them, lists joined with " | "; NULL when absent. */
char *lcatalog_field(lcatalog *c, int i, const char *key);
/* The number of the entry named NAME, 0 when there is none. */
int lcatalog_find(lcatalog *c, const char *name);
/* Entry I as a JSON object (caller deletes). */
cJSON *lcatalog_json(lcatalog *c, int i);
/* util.did_you_mean(NAME, every catalog name) as a new string, or NULL. */
char *lcatalog_suggest(lcatalog *c, const char *name);
/* The value `flags probe` gives NAME in XLA_FLAGS (new string; see lhost_catalog.c). */
char *lcatalog_probe_value(lcatalog *c, const char *name);
/* Every non-TPU flag of the catalog, in its order: *N new strings in a NULL-terminated
 * array (caller frees each and the array). */
char **lcatalog_flags(lcatalog *c, int *n);

#endif
