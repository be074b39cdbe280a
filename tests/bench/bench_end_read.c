/* What the end of a sweep reads (docs/COST.md "Memory"): on a stored sweep, the plan's and the
 * winner's read of every trial (store_trials_load_some) against the read of
 * the trials the confirmation can use (store_trials_load_confirm), each in its own process:
 * rows and step arrays kept, wall time, and the process's peak RSS (VmHWM) before and after
 * the read. Not built by CMake; build it against a built tree:
 *   cc -O2 -Isrc tests/bench/bench_end_read.c build/libftcore.a \
 *      $(pkg-config --libs lua5.4 sqlite3 libuv libcjson) -lm -o /tmp/bench_end_read
 *   /tmp/bench_end_read DB SWEEP_ID [TOP] [FULL_STEPS]
 * (the database is opened read-only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "confirm.h"
#include "store.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long vm_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, strlen(field)) == 0) v = atol(line + strlen(field) + 1);
  if (f) fclose(f);
  return v;
}

/* The baseline's and the confirmed configurations' steps, as sweep.c's winner asks. */
static void want_pooled(const trial_record *t, int n, char *want, void *ud) {
  (void)ud;
  for (int i = 0; i < n; i++) {
    want[i] = strcmp(t[i].config_json, "{}") == 0;
    for (int c = 0; c < n && !want[i]; c++)
      want[i] = t[c].role == ROLE_CONFIRM && strcmp(t[c].config_json, t[i].config_json) == 0;
  }
}

/* WHICH 0: every trial (the plan's read), 1: the plan's selection, 2: every trial with the
 * winner's steps, 3: the winner's selection. */
static void one(const char *db, long long sweep, int top, int full, int which) {
  store *s = NULL;
  char *err = NULL;
  if (store_open(db, STORE_READONLY, &s, &err) != 0) {
    fprintf(stderr, "%s\n", err);
    exit(2);
  }
  long hwm0 = vm_kib("VmHWM:");
  trial_record *t = NULL;
  int n = 0, rc;
  double t0 = now();
  if (which == 0)
    rc = store_trials_load_some(s, sweep, NULL, NULL, &t, &n, &err);
  else if (which == 1)
    rc = store_trials_load_confirm(s, sweep, full, confirm_fastest_needed(top), NULL, NULL, &t, &n,
                                   &err);
  else if (which == 2)
    rc = store_trials_load_some(s, sweep, want_pooled, NULL, &t, &n, &err);
  else
    rc = store_trials_load_confirm(s, sweep, full, 0, want_pooled, NULL, &t, &n, &err);
  double dt = now() - t0;
  if (rc) {
    fprintf(stderr, "%s\n", err);
    exit(2);
  }
  long steps = 0;
  for (int i = 0; i < n; i++) steps += t[i].n_steps;
  const char *names[] = {"plan, every trial", "plan, its trials", "winner, every trial",
                         "winner, its trials"};
  printf("| %s | %d | %ld | %.1f | %.1f | %.1f |\n", names[which], n, steps, dt * 1e3,
         hwm0 / 1024.0, vm_kib("VmHWM:") / 1024.0);
  record_free(t, n);
  store_close(s);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DB SWEEP_ID [TOP] [FULL_STEPS]\n", argv[0]);
    return 2;
  }
  int top = argc > 3 ? atoi(argv[3]) : 3, full = argc > 4 ? atoi(argv[4]) : 0;
  printf("| read | trials kept | steps kept | ms | peak RSS before, MiB | after, MiB |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (int which = 0; which < 4; which++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      one(argv[1], atoll(argv[2]), top, full, which);
      fflush(stdout);
      _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
  }
  return 0;
}
