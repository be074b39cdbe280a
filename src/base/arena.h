/* A bounded small-block arena for the Lua state's allocator (lhost.c): what Lua allocates is
 * mostly small (tables, strings, closures, upvalues, hash parts, the code of a function), and
 * glibc's malloc/free cost several times what a free list does. Blocks of up to ARENA_SMALL
 * bytes come from a region of ARENA_BYTES, in classes of 16 bytes, each class with a free
 * list; larger blocks, and any once the region is used up, come from malloc. */
#ifndef FLAGTUNE_ARENA_H
#define FLAGTUNE_ARENA_H

#include <stddef.h>

#define ARENA_BYTES ((size_t)1 << 20)
#define ARENA_SMALL 4096
#define ARENA_CLASS(n) (((n) + 15) >> 4)

typedef struct {
  char *base, *next, *end; /* the region, its first unused byte, its end; NULL: none */
  void *free[ARENA_CLASS(ARENA_SMALL) + 1]; /* a list of freed blocks per class */
} arena;

/* Reserves the region. None (every block from malloc) under AddressSanitizer, so that it
 * sees every block, with FLAGTUNE_LUA_ARENA=0 (tests/valgrind.sh sets it, so that memcheck
 * does too), or when the mapping fails. */
void arena_open(arena *a);

/* Whether A has a region (arena_open made one). */
int arena_active(const arena *a);

/* Returns the region; the blocks still in it go with it. */
void arena_close(arena *a);

/* Block PTR of OLD bytes (PTR NULL: a new block) resized to NSIZE (> 0) bytes, from the
 * region or from malloc, or NULL. A block of the region shrinks in place (Lua requires that a
 * shrink never fails) and stays in place within its class. */
void *arena_resize(arena *a, void *ptr, size_t old, size_t nsize);

/* Frees block PTR (NULL: nothing) of N bytes, as Lua last sized it. */
void arena_free(arena *a, void *ptr, size_t n);

#endif
