/* Files compiled into the binary (lua/, search/, store/), generated at build time by
 * tools/embed.c: a .lua file is held as its Lua bytecode (lua_dump with line info, without
 * local variable and upvalue names but _ENV), any other file as it is; the catalog also split, each
 * entry's chunk in "lua/catalog.entries" and their index in "lua/catalog_index.lua"
 * (lua/catindex.lua). */
#ifndef FLAGTUNE_EMBED_H
#define FLAGTUNE_EMBED_H

#include <stddef.h>

typedef struct {
  const char *path; /* relative to the source root, e.g. "search/grid.lua" */
  const char *data; /* NUL-terminated; Lua bytecode for a .lua file */
  size_t len;
} embed_file;

/* Terminated by an entry whose path is NULL. */
extern const embed_file embed_files[];

/* The embedded file at PATH, or NULL. */
const embed_file *embed_find(const char *path);

#endif
