/* The small-block arena (arena.h). The region is reserved at once, its first ARENA_PREFAULT
 * bytes populated in one call and the rest touched as blocks are handed out; it is bounded,
 * reused through the free lists, and returned when the state closes. A `check` (docs/COST.md
 * "Start-up") holds 299 KB of Lua heap, 298 KB of it in the arena. Knows nothing of Lua. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_PREFAULT ((size_t)320 << 10)

/* Sanitizer builds see every block through malloc, so that ASan finds a use after free. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_SANITIZED 1
#endif
#endif
#ifndef ARENA_SANITIZED
#define ARENA_SANITIZED 0
#endif

static int in_arena(const arena *a, const void *p) {
  uintptr_t u = (uintptr_t)p;
  return u >= (uintptr_t)a->base && u < (uintptr_t)a->end;
}

/* A block of N (1..ARENA_SMALL) bytes from the region, or NULL when it is used up. */
static void *arena_get(arena *a, size_t n) {
  size_t c = ARENA_CLASS(n);
  void *p = a->free[c];
  if (p) {
    a->free[c] = *(void **)p;
    return p;
  }
  if ((size_t)(a->end - a->next) < c << 4) return NULL;
  p = a->next;
  a->next += c << 4;
  return p;
}

/* Gives back block P of N bytes (N as Lua last sized it: its class is at most the one it
 * was handed out in, so the block holds the class it goes back to). */
static void arena_put(arena *a, void *p, size_t n) {
  size_t c = ARENA_CLASS(n);
  *(void **)p = a->free[c];
  a->free[c] = p;
}

/* FLAGTUNE_LUA_ARENA=0: a checking and measuring aid. */
static int plain_memory(void) {
  const char *s = getenv("FLAGTUNE_LUA_ARENA");
  return s && strcmp(s, "0") == 0;
}

void arena_open(arena *a) {
  memset(a, 0, sizeof *a);
  if (ARENA_SANITIZED || plain_memory()) return;
  void *p = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return; /* every block from malloc */
#ifdef MADV_POPULATE_WRITE
  /* The pages the runtime's modules fill at once (a check uses 298 KB) in one call rather
   * than a page fault each: on a virtual machine a fault costs microseconds (docs/COST.md
   * "Start-up"). Linux 5.14 and later; an older kernel says EINVAL and faults them in. */
  (void)madvise(p, ARENA_PREFAULT, MADV_POPULATE_WRITE);
#endif
  a->base = a->next = p;
  a->end = a->base + ARENA_BYTES;
}

int arena_active(const arena *a) {
  return a->base != NULL;
}

void arena_close(arena *a) {
  if (a->base) munmap(a->base, ARENA_BYTES);
  memset(a, 0, sizeof *a);
}

void *arena_resize(arena *a, void *ptr, size_t old, size_t nsize) {
  if (!ptr) {
    void *p = nsize <= ARENA_SMALL ? arena_get(a, nsize) : NULL;
    return p ? p : malloc(nsize);
  }
  if (!in_arena(a, ptr)) return realloc(ptr, nsize);
  if (nsize <= old || ARENA_CLASS(nsize) == ARENA_CLASS(old)) return ptr;
  void *p = nsize <= ARENA_SMALL ? arena_get(a, nsize) : NULL;
  if (!p) p = malloc(nsize);
  if (p) {
    memcpy(p, ptr, old);
    arena_put(a, ptr, old);
  }
  return p;
}

void arena_free(arena *a, void *ptr, size_t n) {
  if (in_arena(a, ptr))
    arena_put(a, ptr, n);
  else
    free(ptr);
}
