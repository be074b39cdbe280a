/* A fault-injection shim for flagtune's database, loaded with LD_PRELOAD (tests/fault/run.sh,
 * docs/RELIABILITY.md "Fault injection"), in the manner of SQLite's own I/O-error and
 * out-of-memory tests: it makes the Nth call of one kind fail, once.
 *   FT_FAULT=write   write(), pwrite(), pwrite64() on a file whose path starts with
 *                    FT_FAULT_PATH (the database: its -wal, -shm, -journal and lock files too)
 *   FT_FAULT=fsync   fsync(), fdatasync() on such a file
 *   FT_FAULT=malloc  malloc(), realloc() called by SQLite's allocator (returns NULL): found
 *                    as libsqlite3's code, or SQLite linked in, as sqlite3MemMalloc and
 *                    sqlite3MemRealloc in the program's symbol table
 *   FT_FAULT_N=N     which matching call fails (1 = the first); 0: none, only count
 *   FT_FAULT_ERRNO   the errno of a failed write or fsync: EIO (default) or ENOSPC
 *   FT_FAULT_LOG     a file that gets "calls C hit H" at exit: C matching calls, H = 1 when
 *                    the Nth one was made to fail
 * LD_PRELOAD is removed from the environment at load, so the trials flagtune starts run
 * without the shim. Linux and glibc only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

enum { KIND_NONE, KIND_WRITE, KIND_FSYNC, KIND_MALLOC };

static int kind, fail_errno = EIO, hit;
static long target, calls;
static char prefix[4096];
static size_t prefix_len;
static const char *log_path;
/* Where SQLite's allocator calls malloc from: libsqlite3's code when it is a shared library,
 * else SQLite's own two allocator functions in the program (SQLite linked in, the default). */
static uintptr_t sqlite_lo, sqlite_hi, alloc_lo[2], alloc_hi[2];

extern void *__libc_malloc(size_t n);
extern void *__libc_realloc(void *p, size_t n);

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static int find_sqlite(struct dl_phdr_info *info, size_t size, void *ud) {
  (void)size;
  (void)ud;
  if (!info->dlpi_name || !strstr(info->dlpi_name, "libsqlite3")) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (!sqlite_lo || lo < sqlite_lo) sqlite_lo = lo;
    if (hi > sqlite_hi) sqlite_hi = hi;
  }
  return 1;
}

static int main_base(struct dl_phdr_info *info, size_t size, void *ud) {
  (void)size;
  *(uintptr_t *)ud = info->dlpi_addr; /* the first entry is the program */
  return 1;
}

/* SQLite linked into the program: sqlite3MemMalloc and sqlite3MemRealloc (static functions,
 * so in .symtab: the program must not be stripped) are where it calls malloc and realloc. */
static void find_allocator(void) {
  static const char *const names[2] = {"sqlite3MemMalloc", "sqlite3MemRealloc"};
  uintptr_t base = 0;
  dl_iterate_phdr(main_base, &base);
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return;
  const unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return;
  const ElfW(Ehdr) *eh = (const void *)m;
  const ElfW(Shdr) *sh = (const void *)(m + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    const ElfW(Sym) *sym = (const void *)(m + sh[i].sh_offset);
    const char *str = (const char *)(m + sh[sh[i].sh_link].sh_offset);
    for (size_t j = 0; j < sh[i].sh_size / sizeof *sym; j++)
      for (int k = 0; k < 2; k++)
        if (strcmp(str + sym[j].st_name, names[k]) == 0) {
          alloc_lo[k] = base + sym[j].st_value;
          alloc_hi[k] = alloc_lo[k] + sym[j].st_size;
        }
  }
  munmap((void *)m, (size_t)st.st_size);
}

static void report(void) {
  if (!log_path) return;
  FILE *f = fopen(log_path, "w");
  if (!f) return;
  fprintf(f, "calls %ld hit %d\n", calls, hit);
  fclose(f);
}

__attribute__((constructor)) static void shim_init(void) {
  /* POSIX's way to store dlsym's answer in a function pointer (dlsym(3)). */
  *(void **)&real_write = dlsym(RTLD_NEXT, "write");
  *(void **)&real_pwrite = dlsym(RTLD_NEXT, "pwrite");
  *(void **)&real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
  *(void **)&real_fsync = dlsym(RTLD_NEXT, "fsync");
  *(void **)&real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
  const char *k = getenv("FT_FAULT"), *n = getenv("FT_FAULT_N"), *p = getenv("FT_FAULT_PATH");
  const char *e = getenv("FT_FAULT_ERRNO");
  kind = !k                         ? KIND_NONE
         : strcmp(k, "write") == 0  ? KIND_WRITE
         : strcmp(k, "fsync") == 0  ? KIND_FSYNC
         : strcmp(k, "malloc") == 0 ? KIND_MALLOC
                                    : KIND_NONE;
  target = n ? atol(n) : 0;
  if (e && strcmp(e, "ENOSPC") == 0) fail_errno = ENOSPC;
  if (p) {
    snprintf(prefix, sizeof prefix, "%s", p);
    prefix_len = strlen(prefix);
  }
  log_path = getenv("FT_FAULT_LOG");
  if (log_path) log_path = strdup(log_path);
  if (kind == KIND_MALLOC) {
    dl_iterate_phdr(find_sqlite, NULL);
    if (!sqlite_lo) find_allocator();
  }
  unsetenv("LD_PRELOAD");
  atexit(report);
}

/* Whether FD is one of the database's files. */
static int is_db_fd(int fd) {
  if (!prefix_len) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  return strncmp(path, prefix, prefix_len) == 0;
}

/* Counts a matching call; 1 when it is the one to fail. */
static int strike(void) {
  calls++;
  if (target <= 0 || calls != target) return 0;
  hit = 1;
  report(); /* a process that dies of the fault still leaves its record */
  return 1;
}

static int io_fault(int want, int fd) {
  if (kind != want || !is_db_fd(fd) || !strike()) return 0;
  errno = fail_errno;
  return 1;
}

ssize_t write(int fd, const void *buf, size_t n) {
  if (io_fault(KIND_WRITE, fd)) return -1;
  return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  if (io_fault(KIND_WRITE, fd)) return -1;
  return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
  if (io_fault(KIND_WRITE, fd)) return -1;
  return real_pwrite64(fd, buf, n, off);
}

int fsync(int fd) {
  if (io_fault(KIND_FSYNC, fd)) return -1;
  return real_fsync(fd);
}

int fdatasync(int fd) {
  if (io_fault(KIND_FSYNC, fd)) return -1;
  return real_fdatasync(fd);
}

static int from_sqlite(const void *caller) {
  uintptr_t a = (uintptr_t)caller;
  if (kind != KIND_MALLOC) return 0;
  return (a >= sqlite_lo && a < sqlite_hi) || (a >= alloc_lo[0] && a < alloc_hi[0]) ||
         (a >= alloc_lo[1] && a < alloc_hi[1]);
}

void *malloc(size_t n) {
  if (from_sqlite(__builtin_return_address(0)) && strike()) return NULL;
  return __libc_malloc(n);
}

void *realloc(void *p, size_t n) {
  if (from_sqlite(__builtin_return_address(0)) && strike()) return NULL;
  return __libc_realloc(p, n);
}
