/* Unit tests for the local executor (exec.c): every hostile mode of stub_child on a real
 * libuv loop. Each case runs one trial on its own loop and ends by checking that on_exit
 * came exactly once and that the loop ends clean (CHECK_LOOP_END: no handle left open,
 * uv_loop_close() == 0). A case written as `static void name(int sup)` runs in both modes
 * from one body: TEST(name) directly, TEST(sup_...) under the supervisor (supervise.c). This
 * test binary is its own supervisor binary (the constructor below turns `test_exec __supervise
 * ...` into supervise_main), so exec_spec.supervisor is "/proc/self/exe" as in flagtune. The
 * other sup_* cases test what only the supervisor does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "exec.h"
#include "procstat.h"
#include "supervise.h"
#include "test.h"

#define KEEP_LINES 16
#define KEEP_BYTES 200

typedef struct {
  int stream;
  size_t len;
  int truncated;
  char text[KEEP_BYTES];
} kept_line;

typedef struct {
  uv_loop_t loop;
  exec_trial *t;
  int exits;
  int exited_during_start; /* on_exit must never run inside exec_start */
  int in_start;
  exec_result res;
  int n_lines[3]; /* by stream */
  int n_truncated;
  size_t max_len;
  int n_kept;
  kept_line kept[KEEP_LINES];
  const char *stop_on;        /* substring: exec_stop_trial twice when a line contains it */
  const char *kill_on;        /* substring: exec_kill_trial when a line contains it */
  const char *kill_server_on; /* substring: SIGKILL to the trial's parent (the fork server) */
  int server;                 /* ... whose pid that was */
  int group;                  /* the trial's process group, seen while it ran */
  int pgid_ok;                /* the pid leads its own group, seen while running */
  int block_ms;               /* the first line's callback blocks the loop this long (a pause) */
  int stale_ms;               /* the start comes this long after the loop last read its clock */
  int helpers[8];             /* pids from "helper PID" lines */
  int n_helpers;
  double elapsed;
  int loop_close;
} run_ctx;

static char *base_env[] = {"PATH=/usr/bin:/bin", "FLAGTUNE_TEST=1", NULL};

static void on_line(void *ud, int stream, const char *line, size_t len, int truncated) {
  run_ctx *c = ud;
  c->n_lines[stream]++;
  c->n_truncated += truncated;
  if (len > c->max_len) c->max_len = len;
  if (line[len] != '\0') c->n_truncated += 1000; /* must be NUL-terminated: fail loudly */
  if (c->n_kept < KEEP_LINES) {
    kept_line *k = &c->kept[c->n_kept++];
    k->stream = stream;
    k->len = len;
    k->truncated = truncated;
    memcpy(k->text, line, len < KEEP_BYTES - 1 ? len : KEEP_BYTES - 1);
    k->text[len < KEEP_BYTES - 1 ? len : KEEP_BYTES - 1] = '\0';
  }
  int helper = 0;
  if (sscanf(line, "helper %d", &helper) == 1 && c->n_helpers < 8)
    c->helpers[c->n_helpers++] = helper;
  if (c->block_ms > 0) { /* a whole pause: SIGCHLD would cut one usleep() short */
    uint64_t until = uv_hrtime() + (uint64_t)c->block_ms * 1000000;
    while (uv_hrtime() < until) usleep(10000);
    c->block_ms = 0;
  }
  int pid = exec_pid(c->t);
  if (pid > 0) c->group = pid;
  if (!c->pgid_ok && pid > 0 && getpgid(pid) == pid) c->pgid_ok = 1;
  if (c->stop_on && strstr(line, c->stop_on)) {
    exec_stop_trial(c->t);
    exec_stop_trial(c->t); /* idempotent */
  }
  if (c->kill_on && strstr(line, c->kill_on)) exec_kill_trial(c->t);
  if (c->kill_server_on && strstr(line, c->kill_server_on) && !c->server) {
    procstat st;
    if (procstat_read(exec_pid(c->t), &st) == 0 && st.ppid != getpid()) {
      c->server = st.ppid;
      kill(c->server, SIGKILL);
    }
  }
}

static void on_exit_cb(void *ud, const exec_result *r) {
  run_ctx *c = ud;
  c->exits++;
  if (c->in_start) c->exited_during_start = 1;
  c->res = *r;
}

static exec_spec spec_for(char **argv) {
  exec_spec s;
  memset(&s, 0, sizeof s);
  s.argv = argv;
  s.envp = base_env;
  s.timeout_s = 10; /* a safety net: no case may hang the suite */
  s.grace_s = 0.5;
  return s;
}

/* SUP value for the dedicated supervisor binary (flagtune-supervise, built beside flagtune one
 * directory above this test's stub_child), which trials really run under. */
#define OWN 2
static const char *own_supervisor(void) {
  static char path[4096];
  if (!path[0]) {
    snprintf(path, sizeof path, "%s", STUB_CHILD);
    for (int up = 0; up < 2; up++) {
      char *slash = strrchr(path, '/');
      if (slash) *slash = '\0';
    }
    size_t n = strlen(path);
    snprintf(path + n, sizeof path - n, "/%s", EXEC_SUPERVISOR_BIN);
  }
  return path;
}

/* SUP value for the local executor's fork server (flagtune-supervise --server, supervise.h):
 * run() then starts the trial through exec_local_new(), as the sweep does, and checks that
 * it really went through the server (no process handle of ours: no uv_spawn). */
#define SRV 3
static const char SERVED[] = "(the fork server)";

/* The same, run under the supervisor when SUP is set: this binary is its own supervisor (see
 * supervisor_hook), as flagtune is. */
static exec_spec spec_in(int sup, char **argv) {
  exec_spec s = spec_for(argv);
  if (sup) s.supervisor = sup == SRV ? SERVED : sup == OWN ? own_supervisor() : "/proc/self/exe";
  return s;
}

static void count_process_handle(uv_handle_t *h, void *arg) {
  if (h->type == UV_PROCESS) ++*(int *)arg;
}

/* How many uv_process_t handles LOOP has (a trial started by uv_spawn has one). */
static int process_handles(uv_loop_t *loop) {
  int n = 0;
  uv_walk(loop, count_process_handle, &n);
  return n;
}

/* A local executor whose trials go through the fork server of the flagtune-supervise built
 * beside flagtune. */
static executor *served_executor(uv_loop_t *loop) {
  return exec_local_new(loop, own_supervisor());
}

/* The end of a case that ran trials on its own loop through X: the loop ends clean, freeing X
 * closes the server's socket and reaps it, and no child of ours is left. Frees C. */
static void served_end(run_ctx *c, executor *x) {
  CHECK_LOOP_END(&c->loop);
  executor_free(x);
  CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
  free(c);
}

/* Runs one trial to its end on C's loop, through X (a served executor on that loop) when not
 * NULL; checks the invariants every case shares. */
/* Starts SPEC (on X when given, else on the per-trial exec path) and runs the loop until it
 * is idle: the part every run shares. */
static void start_and_wait(run_ctx *c, const exec_spec *spec, executor *x) {
  exec_callbacks cb = {.on_line = on_line, .on_exit = on_exit_cb};
  char *err = NULL;
  exec_spec s = *spec;
  if (x) s.supervisor = NULL;
  if (c->stale_ms > 0) { /* a pause in the turn that starts the trial */
    uint64_t until = uv_hrtime() + (uint64_t)c->stale_ms * 1000000;
    while (uv_hrtime() < until) usleep(10000);
  }
  uint64_t t0 = uv_hrtime();
  c->in_start = 1;
  int rc = x ? executor_start(x, &s, &cb, c, &c->t, &err)
             : exec_start(&c->loop, spec, &cb, c, &c->t, &err);
  c->in_start = 0;
  CHECK_INT(rc, 0);
  CHECK(err == NULL);
  CHECK(c->t != NULL);
  if (x) CHECK_INT(process_handles(&c->loop), 0); /* served: never uv_spawn */
  /* The pid leads its group as soon as the start returns (the server answers only then), and
   * it cannot be gone yet: it outlives its command. Seen from the lines alone, a loaded
   * machine could deliver them all after the server had reaped it. */
  int pid = c->t ? exec_pid(c->t) : 0;
  if (pid > 0 && getpgid(pid) == pid) c->pgid_ok = 1;
  uv_run(&c->loop, UV_RUN_DEFAULT);
  c->elapsed = (double)(uv_hrtime() - t0) / 1e9;
  free(err);
}

static void run_on(run_ctx *c, const exec_spec *spec, executor *x) {
  start_and_wait(c, spec, x);
  CHECK_INT(c->exits, 1);
  CHECK_INT(c->exited_during_start, 0);
}

/* Runs one trial to its end on a fresh loop; checks the invariants every case shares. */
static void run(run_ctx *c, const exec_spec *spec) {
  uv_loop_init(&c->loop);
  executor *x = spec->supervisor == SERVED ? served_executor(&c->loop) : NULL;
  start_and_wait(c, spec, x);
  c->loop_close = CHECK_LOOP_END(&c->loop);
  if (x) {
    executor_free(x); /* closes the server's socket and reaps it: no child of ours is left */
    CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
  }
  CHECK_INT(c->exits, 1);
  CHECK_INT(c->exited_during_start, 0);
}

static run_ctx *new_ctx(void) {
  run_ctx *c = calloc(1, sizeof *c);
  return c;
}

/* Readies C for another trial on the same loop: no exit, no stdout line, no result yet. */
static void ctx_again(run_ctx *c) {
  c->exits = 0;
  c->n_lines[EXEC_STDOUT] = 0;
  memset(&c->res, 0, sizeof c->res);
}

/* Reads a whole (small) file; *len gets its size. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = malloc(1 << 20);
  *len = fread(buf, 1, (1 << 20) - 1, f);
  buf[*len] = '\0';
  fclose(f);
  return buf;
}

/* A grandchild that was killed is gone or a zombie waiting for its new parent. */
static int process_dead(int pid) {
  for (int i = 0; i < 50; i++) {
    char path[64], stat[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 1;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *paren = strrchr(stat, ')');
    if (paren && paren[1] == ' ' && paren[2] == 'Z') return 1;
    usleep(20000);
  }
  return 0;
}

static void steps_lines(int sup) {
  char *argv[] = {STUB_CHILD, "steps", "5", "10", NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 5);
  CHECK_INT(c->n_lines[EXEC_STDERR], 0);
  CHECK_STR(c->kept[0].text, "{\"step\":0,\"step_time_ms\":10}");
  CHECK_STR(c->kept[4].text, "{\"step\":4,\"step_time_ms\":10}");
  CHECK_INT(c->kept[4].stream, EXEC_STDOUT);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.term_signal, 0);
  CHECK_INT(c->res.stopped, EXEC_STOP_NONE);
  CHECK_INT(c->res.spawn_error, 0);
  CHECK(c->res.wall_s >= 0.04 && c->res.wall_s < 2.0);
  CHECK(c->pgid_ok);
  free(c);
}
TEST(steps_lines) {
  steps_lines(0);
}
TEST(sup_steps_lines) {
  steps_lines(1);
}
TEST(srv_steps_lines) {
  steps_lines(SRV);
}

/* Under the supervisor the command's exit code is mirrored as its own. */
static void exit_code_reported(int sup) {
  char *argv[] = {STUB_CHILD, "text", "3", "exit", "7", NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 3);
  CHECK_STR(c->kept[2].text, "line 2");
  CHECK_INT(c->res.exit_status, 7);
  CHECK_INT(c->res.term_signal, 0);
  free(c);
}
TEST(exit_code_reported) {
  exit_code_reported(0);
}
TEST(sup_exit_code_mirrored) {
  exit_code_reported(1);
}
TEST(own_exit_code_mirrored) {
  exit_code_reported(OWN);
}
TEST(srv_exit_code_mirrored) {
  exit_code_reported(SRV);
}

/* Under the supervisor the command's death by a signal is mirrored: it re-raises it. */
static void signal_reported(int sup) {
  char sig[16];
  snprintf(sig, sizeof sig, "%d", SIGUSR1);
  char *argv[] = {STUB_CHILD, "text", "1", "signal", sig, NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 1);
  CHECK_INT(c->res.term_signal, SIGUSR1);
  CHECK_INT(c->res.stopped, EXEC_STOP_NONE);
  free(c);
}
TEST(signal_reported) {
  signal_reported(0);
}
TEST(sup_signal_mirrored) {
  signal_reported(1);
}
TEST(own_signal_mirrored) {
  signal_reported(OWN);
}
TEST(srv_signal_mirrored) {
  signal_reported(SRV);
}

TEST(stderr_lines) {
  char *argv[] = {STUB_CHILD, "stderr", "first error", "", "third", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDERR], 3);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 0);
  CHECK_STR(c->kept[0].text, "first error");
  CHECK_INT(c->kept[0].stream, EXEC_STDERR);
  CHECK_INT(c->kept[1].len, 0);
  CHECK_STR(c->kept[2].text, "third");
  CHECK_INT(c->res.exit_status, 1);
  free(c);
}

TEST(binary_output) {
  char *argv[] = {STUB_CHILD, "binary", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 3);
  CHECK_INT(c->kept[0].len, 5); /* NUL counted, '\r' stripped */
  CHECK(memcmp(c->kept[0].text, "a\0b\xff\xfe", 5) == 0);
  CHECK_STR(c->kept[1].text, "\x1b[31mred\x1b[0m");
  CHECK_STR(c->kept[2].text, "\xc3\x28 bad utf8");
  CHECK_INT(c->n_truncated, 0);
  free(c);
}

TEST(longline_truncated) {
  char *argv[] = {STUB_CHILD, "longline", "2", "text", "2", NULL};
  exec_spec spec = spec_for(argv);
  spec.max_line = 1024;
  run_ctx *c = new_ctx();
  run(c, &spec);
  /* The 2 MiB line absorbs "line 0" (no newline before it), then "line 1" stands alone. */
  CHECK_INT(c->n_lines[EXEC_STDOUT], 2);
  CHECK_INT(c->kept[0].len, 1024);
  CHECK_INT(c->kept[0].truncated, 1);
  CHECK(strncmp(c->kept[0].text, "abcdefghij", 10) == 0);
  CHECK_STR(c->kept[1].text, "line 1");
  CHECK_INT(c->kept[1].truncated, 0);
  CHECK_INT(c->max_len, 1024);
  free(c);
}

TEST(longline_without_newline_at_exit) {
  char *argv[] = {STUB_CHILD, "longline", "1", NULL};
  exec_spec spec = spec_for(argv);
  spec.max_line = 100;
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 1);
  CHECK_INT(c->n_truncated, 1);
  CHECK_INT(c->max_len, 100);
  free(c);
}

TEST(final_partial_line_delivered) {
  char *argv[] = {"/bin/sh", "-c", "printf 'whole\\nno newline'", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 2);
  CHECK_STR(c->kept[1].text, "no newline");
  free(c);
}

static long peak_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

TEST(flood_bounded_memory) {
  char log[64];
  snprintf(log, sizeof log, "/tmp/ft-exec-flood-%d.log", (int)getpid());
  char *argv[] = {STUB_CHILD, "flood", "200", NULL};
  exec_spec spec = spec_for(argv);
  spec.max_line = 4096;
  spec.log_path = log;
  spec.log_limit = 1 << 20;
  run_ctx *c = new_ctx();
  long before = peak_rss_kb();
  run(c, &spec);
  long after = peak_rss_kb();
  CHECK_INT(c->n_lines[EXEC_STDOUT], 200L * 1024 * 1024 / 100);
  CHECK_INT(c->max_len, 99);
  CHECK_INT(c->n_truncated, 0);
  CHECK_INT(c->res.exit_status, 0);
  CHECK(after - before < 16 * 1024);
  fprintf(stderr, "flood: %.2f s, peak RSS %ld -> %ld KiB\n", c->elapsed, before, after);
  struct stat st;
  CHECK_INT(stat(log, &st), 0);
  CHECK_INT(st.st_size, (1 << 20) + (long)strlen("\n[flagtune: log truncated at 1048576 bytes]\n"));
  unlink(log);
  free(c);
}

static void timeout_sends_sigterm(int sup) {
  char *argv[] = {STUB_CHILD, "sleep", "10", NULL};
  exec_spec spec = spec_in(sup, argv);
  spec.timeout_s = 0.3;
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.term_signal, SIGTERM);
  CHECK_INT(c->res.stopped, EXEC_STOP_TIMEOUT);
  CHECK_NEAR(c->res.wall_s, 0.3, 0.2);
  CHECK(c->elapsed < 1.0);
  free(c);
}
TEST(timeout_sends_sigterm) {
  timeout_sends_sigterm(0);
}
TEST(sup_timeout_plain_child) {
  timeout_sends_sigterm(1);
}
TEST(srv_timeout_sends_sigterm) {
  timeout_sends_sigterm(SRV);
}

static void ignore_term_needs_sigkill(int sup) {
  char *argv[] = {STUB_CHILD, "ignore-term", "10", NULL};
  exec_spec spec = spec_in(sup, argv);
  spec.timeout_s = 0.3;
  spec.grace_s = 0.5;
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 1);
  CHECK_STR(c->kept[0].text, "ignoring SIGTERM");
  CHECK_INT(c->res.term_signal, SIGKILL);
  CHECK_INT(c->res.stopped, EXEC_STOP_TIMEOUT);
  /* Killed after timeout + grace (0.8 s), not before, and long before the child's own 10 s:
   * bounds that tell the behaviours apart whatever the machine's load. */
  CHECK(c->res.wall_s > 0.55 && c->res.wall_s < 5.0);
  free(c);
}
TEST(ignore_term_needs_sigkill) {
  ignore_term_needs_sigkill(0);
}
TEST(sup_ignore_term_needs_sigkill) {
  ignore_term_needs_sigkill(1);
}
TEST(srv_ignore_term_needs_sigkill) {
  ignore_term_needs_sigkill(SRV);
}

static void grandchild_does_not_hang(int sup) {
  char *argv[] = {STUB_CHILD, "grandchild", "10", NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.term_signal, 0);
  CHECK_INT(c->res.stopped, EXEC_STOP_NONE);
  CHECK(c->elapsed < 2.0);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 1);
  int gpid = 0;
  CHECK(sscanf(c->kept[0].text, "grandchild %d", &gpid) == 1);
  /* It stayed in the trial's group, so the drain's SIGKILL reached it. */
  if (gpid > 0) CHECK(process_dead(gpid));
  free(c);
}
TEST(grandchild_does_not_hang) {
  grandchild_does_not_hang(0);
}
TEST(sup_grandchild_does_not_hang) {
  grandchild_does_not_hang(1);
}
TEST(srv_grandchild_does_not_hang) {
  grandchild_does_not_hang(SRV);
}

TEST(setsid_grandchild_does_not_hang) {
  char *argv[] = {STUB_CHILD, "setsid-grandchild", "3", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 0);
  CHECK(c->elapsed < 2.0);
  int gpid = 0;
  CHECK(c->n_lines[EXEC_STDOUT] == 1 && sscanf(c->kept[0].text, "grandchild %d", &gpid) == 1);
  /* It escaped the group (nothing we can do about that); closing our ends freed us. Clean up
   * the process this test started. */
  if (gpid > 0) kill(gpid, SIGKILL);
  free(c);
}

/* Under the supervisor the spawn error is the supervisor's report (exit 127 and a held line),
 * turned back into the same result as a direct spawn's. */
static void spawn_missing_command(int sup) {
  char *argv[] = {"flagtune-no-such-command", "x", NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.spawn_error, UV_ENOENT);
  CHECK_INT(c->res.exit_status, 127);
  CHECK_STR(c->res.spawn_message, "command not found: flagtune-no-such-command");
  CHECK_INT(c->n_lines[EXEC_STDOUT] + c->n_lines[EXEC_STDERR], 0);
  free(c);
}
TEST(spawn_missing_command) {
  spawn_missing_command(0);
}
TEST(sup_missing_command) {
  spawn_missing_command(1);
}
TEST(own_missing_command) {
  spawn_missing_command(OWN);
}
TEST(srv_missing_command) {
  spawn_missing_command(SRV);
}

static void spawn_not_executable(int sup) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/ft-exec-%snoexec-%d", sup ? "sup" : "", (int)getpid());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("#!/bin/sh\necho hi\n", f);
  fclose(f);
  chmod(path, 0644);
  char *argv[] = {path, NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  char want[128];
  snprintf(want, sizeof want, "permission denied: %s", path);
  CHECK_INT(c->res.spawn_error, UV_EACCES);
  CHECK_STR(c->res.spawn_message, want);
  CHECK_INT(c->n_lines[EXEC_STDOUT] + c->n_lines[EXEC_STDERR], 0);
  unlink(path);
  free(c);
}
TEST(spawn_not_executable) {
  spawn_not_executable(0);
}
TEST(sup_not_executable) {
  spawn_not_executable(1);
}
TEST(srv_not_executable) {
  spawn_not_executable(SRV);
}

static void stop_oom_child(int sup) {
  char *argv[] = {STUB_CHILD, "oom", NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  c->stop_on = "RESOURCE_EXHAUSTED";
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDERR], 1);
  CHECK(strstr(c->kept[0].text, "Out of memory while trying to allocate 17179869184") != NULL);
  CHECK_INT(c->res.term_signal, SIGTERM);
  CHECK_INT(c->res.stopped, EXEC_STOP_REQUESTED);
  CHECK(c->elapsed < 1.5);
  CHECK(c->pgid_ok);
  free(c);
}
TEST(stop_oom_child) {
  stop_oom_child(0);
}
TEST(sup_stop_oom_child) {
  stop_oom_child(1);
}
TEST(srv_stop_oom_child) {
  stop_oom_child(SRV);
}

static void kill_trial_at_once(int sup) {
  char *argv[] = {STUB_CHILD, "ignore-term", "10", NULL};
  exec_spec spec = spec_in(sup, argv);
  spec.grace_s = 5;
  run_ctx *c = new_ctx();
  c->kill_on = "ignoring";
  run(c, &spec);
  CHECK_INT(c->res.term_signal, SIGKILL);
  CHECK_INT(c->res.stopped, EXEC_STOP_REQUESTED);
  CHECK(c->elapsed < 1.0);
  free(c);
}
TEST(kill_trial_at_once) {
  kill_trial_at_once(0);
}
TEST(sup_kill_trial_at_once) {
  kill_trial_at_once(1);
}
TEST(srv_kill_trial_at_once) {
  kill_trial_at_once(SRV);
}

TEST(log_file_content) {
  char log[64];
  snprintf(log, sizeof log, "/tmp/ft-exec-log-%d.log", (int)getpid());
  char *argv[] = {STUB_CHILD, "text", "2", "stderr", "oops", NULL};
  exec_spec spec = spec_for(argv);
  spec.log_path = log;
  run_ctx *c = new_ctx();
  run(c, &spec);
  size_t len = 0;
  char *text = slurp(log, &len);
  CHECK(text != NULL);
  if (text) {
    CHECK_INT(len, strlen("line 0\nline 1\noops\n"));
    CHECK(strstr(text, "line 0\nline 1\n") != NULL);
    CHECK(strstr(text, "oops\n") != NULL);
  }
  free(text);
  unlink(log);
  free(c);
}

TEST(log_file_cap) {
  char log[64];
  snprintf(log, sizeof log, "/tmp/ft-exec-cap-%d.log", (int)getpid());
  char *argv[] = {STUB_CHILD, "flood", "1", NULL};
  exec_spec spec = spec_for(argv);
  spec.log_path = log;
  spec.log_limit = 1050; /* mid-line: the marker still gets a line of its own */
  run_ctx *c = new_ctx();
  run(c, &spec);
  /* 10485 whole lines and a 76-byte tail without newline, delivered at EOF. */
  CHECK_INT(c->n_lines[EXEC_STDOUT], 1024 * 1024 / 100 + 1);
  size_t len = 0;
  char *text = slurp(log, &len);
  CHECK(text != NULL);
  if (text) {
    const char *mark = "\n[flagtune: log truncated at 1050 bytes]\n";
    CHECK_INT(len, 1050 + strlen(mark));
    CHECK(len > 1050 && strcmp(text + 1050, mark) == 0);
    CHECK(strncmp(text, "abcdefghijklmnopqrstuvwxyzabcd", 30) == 0);
    CHECK_INT(text[99], '\n');
  }
  free(text);
  unlink(log);
  free(c);
}

/* The log descriptor is O_CLOEXEC: no descriptor of the child points at the log. */
static int line_mentions(const run_ctx *c, const char *needle) {
  for (int i = 0; i < c->n_kept; i++)
    if (strstr(c->kept[i].text, needle)) return 1;
  return 0;
}

TEST(log_fd_not_inherited) {
  char log[64];
  snprintf(log, sizeof log, "/tmp/ft-exec-fd-%d.log", (int)getpid());
  char *argv[] = {"/bin/sh", "-c", "ls -l /proc/$$/fd", NULL};
  exec_spec spec = spec_for(argv);
  spec.log_path = log;
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK(line_mentions(c, "/dev/null")); /* the listing worked: stdin is /dev/null */
  CHECK(c->n_kept < KEEP_LINES);
  CHECK(!line_mentions(c, "ft-exec-fd-"));
  unlink(log);
  free(c);
}

static void env_cwd_and_path_search(int sup) {
  char *envp[] = {"FOO=bar baz", "PATH=/usr/bin:/bin", NULL};
  char *argv[] = {"sh", "-c", "pwd; " STUB_CHILD " env FOO HOME", NULL};
  exec_spec spec = spec_in(sup, argv);
  spec.envp = envp;
  spec.cwd = "/";
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 3);
  CHECK_STR(c->kept[0].text, "/");
  CHECK_STR(c->kept[1].text, "FOO=bar baz");
  CHECK_STR(c->kept[2].text, "HOME unset"); /* envp is the complete environment */
  CHECK_INT(c->res.exit_status, 0);
  free(c);
}
TEST(env_cwd_and_path_search) {
  env_cwd_and_path_search(0);
}
TEST(sup_env_and_cwd) {
  env_cwd_and_path_search(1);
}
TEST(srv_env_and_cwd) {
  env_cwd_and_path_search(SRV);
}

TEST(invalid_arguments) {
  uv_loop_t loop;
  exec_callbacks cb = {.on_line = on_line, .on_exit = on_exit_cb};
  run_ctx c;
  memset(&c, 0, sizeof c);
  char *err = NULL;
  exec_trial *t = (exec_trial *)&c; /* must be reset to NULL on failure */
  uv_loop_init(&loop);
  char *none[] = {NULL};
  exec_spec spec = spec_for(none);
  CHECK_INT(exec_start(&loop, &spec, &cb, &c, &t, &err), FT_EINPUT);
  CHECK(t == NULL);
  CHECK(err != NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_INT(c.exits, 0);
  CHECK_LOOP_END(&loop);
  CHECK_INT(exec_pid(NULL), 0);
  free(err);
}

/* The log is not the result: a log that cannot be opened (its directory removed mid-sweep)
 * leaves the trial running without one, and the result says why. */
static void log_unopenable_trial_runs(int sup) {
  char *argv[] = {STUB_CHILD, "steps", "3", "10", NULL};
  exec_spec spec = spec_in(sup, argv);
  spec.log_path = "/nonexistent-dir/x/trial.log";
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 3);
  CHECK_INT(c->res.exit_status, 0);
  CHECK(strstr(c->res.log_error,
               "flagtune: trial log not written: cannot open "
               "/nonexistent-dir/x/trial.log: ") != NULL);
  free(c);
}
TEST(log_unopenable_trial_runs) {
  log_unopenable_trial_runs(0);
}
TEST(sup_log_unopenable_trial_runs) {
  log_unopenable_trial_runs(1);
}
TEST(srv_log_unopenable_trial_runs) {
  log_unopenable_trial_runs(SRV);
}

/* A log that fills its disk mid-trial (/dev/full: every write is ENOSPC): the trial still
 * ends normally and the result says where the log stopped. */
TEST(log_full_disk_trial_runs) {
  char *argv[] = {STUB_CHILD, "text", "3", NULL};
  exec_spec spec = spec_for(argv);
  spec.log_path = "/dev/full";
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 3);
  CHECK_INT(c->res.exit_status, 0);
  CHECK(strstr(c->res.log_error,
               "flagtune: trial log incomplete: writing /dev/full failed "
               "after 0 bytes: No space left on device") != NULL);
  free(c);
}

/* Two trials on one loop, one stopped from the other's callback: the loop still ends clean. */
TEST(two_trials_one_loop) {
  run_ctx a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  exec_callbacks cb = {.on_line = on_line, .on_exit = on_exit_cb};
  uv_loop_t loop;
  uv_loop_init(&loop);
  char *argv_a[] = {STUB_CHILD, "steps", "3", "20", NULL};
  char *argv_b[] = {STUB_CHILD, "oom", NULL};
  exec_spec sa = spec_for(argv_a), sb = spec_for(argv_b);
  b.stop_on = "RESOURCE_EXHAUSTED";
  CHECK_INT(exec_start(&loop, &sa, &cb, &a, &a.t, NULL), 0);
  CHECK_INT(exec_start(&loop, &sb, &cb, &b, &b.t, NULL), 0);
  CHECK(exec_pid(a.t) != exec_pid(b.t));
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK_LOOP_END(&loop);
  CHECK_INT(a.exits, 1);
  CHECK_INT(b.exits, 1);
  CHECK_INT(a.n_lines[EXEC_STDOUT], 3);
  CHECK_INT(a.res.exit_status, 0);
  CHECK_INT(b.res.stopped, EXEC_STOP_REQUESTED);
}

/* ---- the supervisor ---------------------------------------------------------------------- */

/* glibc passes argc/argv to constructors of the executable: `test_exec __supervise ...` is
 * the supervisor, as `flagtune __supervise ...` is in the real program. */
__attribute__((constructor)) static void supervisor_hook(int argc, char **argv, char **envp) {
  (void)envp;
  if (argc > 1 && strcmp(argv[1], SUPERVISE_ARG) == 0) exit(supervise_main(argc - 1, argv + 1));
}

TEST(sup_segv_mirrored_without_core) {
  char sig[16];
  snprintf(sig, sizeof sig, "%d", SIGSEGV);
  char *argv[] = {STUB_CHILD, "signal", sig, NULL};
  exec_spec spec = spec_in(1, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
#if defined(__SANITIZE_ADDRESS__)
  /* ASan's own SIGSEGV handler catches the supervisor's re-raise and exits 1 instead. */
  CHECK(c->res.term_signal == SIGSEGV || c->res.exit_status != 0);
#else
  CHECK_INT(c->res.term_signal, SIGSEGV);
#endif
  free(c);
}

TEST(sup_timeout_sends_sigterm_once) {
  /* The executor signals the group; the supervisor must not forward a second SIGTERM. */
  char *argv[] = {"/bin/sh", "-c",
                  "n=0; trap 'n=$((n+1)); echo term $n' TERM; sleep 3 & wait; sleep 0.3 & wait; "
                  "exit 9",
                  NULL};
  exec_spec spec = spec_in(1, argv);
  spec.timeout_s = 0.3;
  spec.grace_s = 3;
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 9);
  CHECK_INT(c->res.stopped, EXEC_STOP_TIMEOUT);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 1);
  CHECK_STR(c->kept[0].text, "term 1");
  free(c);
}

/* A command that itself prints a look-alike line is not a spawn error: the held line is
 * delivered, in order, when the exit code or a later line shows it was the command's. */
TEST(sup_lookalike_line_delivered) {
  char *argv[] = {STUB_CHILD, "stderr", "command not found: zz", "after", NULL};
  exec_spec spec = spec_in(1, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.spawn_error, 0);
  CHECK_INT(c->res.exit_status, 1);
  CHECK_INT(c->n_lines[EXEC_STDERR], 2);
  CHECK_STR(c->kept[0].text, "command not found: zz");
  CHECK_STR(c->kept[1].text, "after");
  free(c);
  char *argv2[] = {"/bin/sh", "-c", "echo 'permission denied: x' >&2; exit 3", NULL};
  spec = spec_in(1, argv2);
  c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.spawn_error, 0);
  CHECK_INT(c->res.exit_status, 3);
  CHECK_INT(c->n_lines[EXEC_STDERR], 1);
  CHECK_STR(c->kept[0].text, "permission denied: x");
  free(c);
}

TEST(sup_bad_supervisor_path) {
  char *argv[] = {STUB_CHILD, "text", "1", NULL};
  exec_spec spec = spec_in(1, argv);
  spec.supervisor = "/nonexistent/flagtune";
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.spawn_error, UV_ENOENT);
  CHECK(strstr(c->res.spawn_message, "trial supervisor") != NULL);
  free(c);
}

/* Runs supervise_main in a forked child that leads its own session, as the executor would
 * start it; returns the wait status. */
static int supervise_in_child(char **argv) {
  int argc = 0;
  while (argv[argc]) argc++;
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    _exit(supervise_main(argc, argv));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(sup_direct_codes) {
  char *exit5[] = {"__supervise", "--", "/bin/sh", "-c", "exit 5", NULL};
  int st = supervise_in_child(exit5);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);
  char *usr1[] = {"__supervise", "--grace", "1", "--", "/bin/sh", "-c", "kill -USR1 $$", NULL};
  st = supervise_in_child(usr1);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
  char *missing[] = {"__supervise", "--", "flagtune-no-such-command", NULL};
  st = supervise_in_child(missing);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 127);
  char *dir[] = {"__supervise", "--", "/tmp", NULL};
  st = supervise_in_child(dir);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 126);
  char *bad1[] = {"__supervise", "/bin/true", NULL};
  st = supervise_in_child(bad1);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  char *bad2[] = {"__supervise", "--grace", "x", "--", "/bin/true", NULL};
  st = supervise_in_child(bad2);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  char *bad3[] = {"__supervise", "--", NULL};
  st = supervise_in_child(bad3);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  /* A parent that is already gone (a pid that is not our parent): nothing starts. */
  char *gone[] = {"__supervise", "--parent", "999999", "--", "/bin/true", NULL};
  st = supervise_in_child(gone);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

/* A signal from someone else than the parent (a user's kill PID) is forwarded to the group. */
TEST(sup_forwards_foreign_signal) {
  char file[64];
  snprintf(file, sizeof file, "/tmp/ft-sup-fwd-%d", (int)getpid());
  char script[256];
  snprintf(script, sizeof script, "trap 'echo got > %s; exit 4' TERM; sleep 5 & wait", file);
  char *argv[] = {"__supervise", "--", "/bin/sh", "-c", script, NULL};
  pid_t sup = fork();
  if (sup == 0) {
    setsid();
    _exit(supervise_main(5, argv));
  }
  usleep(300000);
  pid_t killer = fork();
  if (killer == 0) {
    kill(sup, SIGTERM); /* a foreign sender: not the supervisor's parent */
    _exit(0);
  }
  waitpid(killer, NULL, 0);
  int st = 0;
  waitpid(sup, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 4);
  size_t len = 0;
  char *text = slurp(file, &len);
  CHECK(text != NULL && strcmp(text, "got\n") == 0);
  free(text);
  unlink(file);
}

static int read_pid_file(const char *path, double wait_s) {
  for (int i = 0; i < (int)(wait_s * 50); i++) {
    size_t len = 0;
    char *text = slurp(path, &len);
    int pid = text && len > 1 && text[len - 1] == '\n' ? atoi(text) : 0;
    free(text);
    if (pid > 0) return pid;
    usleep(20000);
  }
  return 0;
}

/* Live (not zombie) members of process group GROUP, from /proc. */
static int group_live_members(int group) {
  int live = 0;
  DIR *d = opendir("/proc");
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    int pid = atoi(e->d_name);
    if (pid <= 0) continue;
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *paren = strrchr(stat, ')');
    char state = 0;
    int ppid = 0, pgrp = 0;
    if (paren && sscanf(paren + 2, "%c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == group &&
        state != 'Z')
      live++;
  }
  if (d) closedir(d);
  return live;
}

static void on_exit_quiet(void *ud, const exec_result *r) {
  (void)ud;
  (void)r;
}

/* The point of the supervisor: the orchestrator is SIGKILLed mid-trial, and the command (one
 * that even ignores SIGTERM) and its group are gone within the grace. */
TEST(sup_parent_death_kills_group) {
  char file[64], script[512];
  snprintf(file, sizeof file, "/tmp/ft-sup-pd-%d", (int)getpid());
  unlink(file);
  snprintf(script, sizeof script,
           "%s grandchild 30 > /dev/null; echo $$ > %s.tmp && mv %s.tmp %s; exec %s ignore-term 30",
           STUB_CHILD, file, file, file, STUB_CHILD);
  pid_t orch = fork();
  if (orch == 0) { /* a stand-in orchestrator: one supervised trial on its own loop */
    uv_loop_t loop;
    uv_loop_init(&loop);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    exec_spec spec = spec_in(1, argv);
    spec.grace_s = 0.3;
    spec.timeout_s = 0;
    exec_callbacks cb = {.on_exit = on_exit_quiet};
    exec_trial *t = NULL;
    if (exec_start(&loop, &spec, &cb, NULL, &t, NULL) != 0) _exit(3);
    uv_run(&loop, UV_RUN_DEFAULT);
    _exit(0);
  }
  int cmd = read_pid_file(file, 5);
  CHECK(cmd > 0);
  int group = cmd > 0 ? getpgid(cmd) : -1;
  CHECK(group > 0 && group != getpgrp());
  kill(orch, SIGKILL);
  waitpid(orch, NULL, 0);
  if (cmd > 0) CHECK(process_dead(cmd)); /* ignores SIGTERM: needed the SIGKILL */
  if (group > 0) {
    int left = 1;
    for (int i = 0; i < 50 && left; i++) {
      left = group_live_members(group) > 0;
      if (left) usleep(20000);
    }
    if (left) kill(-group, SIGKILL); /* clean up what the test started, then fail */
    CHECK(!left);
  }
  unlink(file);
}

/* ---- containment: nothing a trial starts outlives it ------------------------------------- */

/* Every helper the trial announced is gone (or a zombie about to be). */
static int helpers_dead(const run_ctx *c) {
  int dead = 1;
  for (int i = 0; i < c->n_helpers; i++) {
    if (process_dead(c->helpers[i])) continue;
    kill(c->helpers[i], SIGKILL); /* clean up what the test started, then fail */
    dead = 0;
  }
  return dead;
}

/* A background helper, a setsid() one and a double-forked daemon, all with their output on
 * /dev/null (nothing holds our pipes): the command exits 0 at once, and the supervisor ends
 * all three before it mirrors that exit. */
static void leftovers_killed(int sup) {
  char *argv[] = {STUB_CHILD, "helper", "600", "setsid-helper", "600", "double-fork", "600",
                  "text",     "1",      NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.term_signal, 0);
  CHECK_INT(c->res.stopped, EXEC_STOP_NONE);
  CHECK_INT(c->n_helpers, 3);
  CHECK_INT(c->res.leftovers, 3);
  CHECK(helpers_dead(c));
  CHECK(c->elapsed < 2.0);
  free(c);
}
TEST(sup_leftovers_killed) {
  leftovers_killed(1);
}
TEST(own_leftovers_killed) {
  leftovers_killed(OWN);
}
TEST(srv_leftovers_killed) {
  leftovers_killed(SRV);
}

/* A child that ends by itself just after the command (srun's shepherd, told to exit as srun
 * ends) is no leftover: nothing is killed or counted, and it is gone when the trial ends. */
static void shepherd_not_counted(int sup) {
  char *argv[] = {STUB_CHILD, "shepherd", "30", "text", "1", NULL};
  exec_spec spec = spec_in(sup, argv);
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->n_helpers, 1);
  CHECK_INT(c->res.leftovers, 0);
  CHECK(helpers_dead(c));
  CHECK(c->elapsed < 2.0);
  free(c);
}
TEST(sup_shepherd_not_counted) {
  shepherd_not_counted(1);
}
TEST(srv_shepherd_not_counted) {
  shepherd_not_counted(SRV);
}

/* The executor runs trials under flagtune-supervise when it sits beside the flagtune binary
 * (symlinks resolved), and under the flagtune binary itself otherwise. */
TEST(supervisor_path_prefers_own_binary) {
  char dir[] = "/tmp/ft-suppath-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char ft[128], own[128], link[128];
  snprintf(ft, sizeof ft, "%s/flagtune", dir);
  snprintf(own, sizeof own, "%s/" EXEC_SUPERVISOR_BIN, dir);
  snprintf(link, sizeof link, "%s/ft-link", dir);
  FILE *f = fopen(ft, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  chmod(ft, 0755);
  char *p = exec_supervisor_path(ft);
  CHECK_STR(p, ft); /* nothing beside it */
  free(p);
  f = fopen(own, "w");
  if (f) fclose(f);
  chmod(own, 0644);
  p = exec_supervisor_path(ft);
  CHECK_STR(p, ft); /* there but not executable */
  free(p);
  chmod(own, 0755);
  p = exec_supervisor_path(ft);
  CHECK_STR(p, own);
  free(p);
  CHECK_INT(symlink(ft, link), 0);
  p = exec_supervisor_path(link);
  CHECK_STR(p, own);
  free(p);
  CHECK(exec_supervisor_path(NULL) == NULL);
  p = exec_supervisor_path("/nonexistent/flagtune");
  CHECK_STR(p, "/nonexistent/flagtune");
  free(p);
  unlink(link);
  unlink(own);
  unlink(ft);
  rmdir(dir);
}

/* A leftover that ignores SIGTERM gets SIGKILL after the grace; the trial's duration is the
 * command's own, without the cleanup. */
TEST(sup_stubborn_leftover_killed_after_grace) {
  char *argv[] = {STUB_CHILD, "stubborn-helper", "600", "text", "1", NULL};
  exec_spec spec = spec_in(1, argv);
  spec.grace_s = 0.5;
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.leftovers, 1);
  CHECK_INT(c->n_helpers, 1);
  CHECK(helpers_dead(c));
  CHECK(c->elapsed >= 0.45 && c->elapsed < 2.5);
  CHECK(c->res.wall_s < 0.4);
  free(c);
}

/* A timeout whose command ignores SIGTERM and left a setsid() helper: the supervisor's own
 * SIGKILL after the grace reaches both (a group SIGKILL would miss the helper). */
TEST(sup_timeout_reaches_setsid_helper) {
  char *argv[] = {STUB_CHILD, "setsid-helper", "600", "ignore-term", "10", NULL};
  exec_spec spec = spec_in(1, argv);
  spec.timeout_s = 0.3;
  spec.grace_s = 0.5;
  run_ctx *c = new_ctx();
  run(c, &spec);
  CHECK_INT(c->res.term_signal, SIGKILL);
  CHECK_INT(c->res.stopped, EXEC_STOP_TIMEOUT);
  CHECK_INT(c->n_helpers, 1);
  CHECK(helpers_dead(c));
  CHECK(c->res.wall_s > 0.5 && c->res.wall_s < 5.0); /* timeout + grace, as without the helper */
  free(c);
}

/* Kill at once (a second Ctrl-C) reaches a setsid() helper too, still at once. */
TEST(sup_kill_at_once_reaches_setsid_helper) {
  char *argv[] = {STUB_CHILD, "setsid-helper", "600", "ignore-term", "10", NULL};
  exec_spec spec = spec_in(1, argv);
  spec.grace_s = 5;
  run_ctx *c = new_ctx();
  c->kill_on = "ignoring";
  run(c, &spec);
  CHECK_INT(c->res.term_signal, SIGKILL);
  CHECK_INT(c->res.stopped, EXEC_STOP_REQUESTED);
  CHECK(helpers_dead(c));
  CHECK(c->elapsed < 1.0);
  free(c);
}

/* A 0.2 s command with a 0.5 s timeout, the orchestrator paused for longer than that: a pause
 * is not the trial's time. BLOCK_MS: the loop blocks in the first line's callback (the timer
 * fires first on the next loop turn, but the process already exited). STALE_MS: the pause
 * came in the turn that starts the trial, after the loop last read its clock (e.g. between a
 * trial's log being opened and its command's start): the timeout counts from the start. */
static void pause_is_not_a_timeout(int sup, int block_ms, int stale_ms) {
  char *argv[] = {STUB_CHILD, "text", "1", "sleep", "0.2", NULL};
  exec_spec spec = spec_in(sup, argv);
  spec.timeout_s = 0.5;
  run_ctx *c = new_ctx();
  c->block_ms = block_ms;
  c->stale_ms = stale_ms;
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.term_signal, 0);
  CHECK_INT(c->res.stopped, EXEC_STOP_NONE);
  CHECK(c->elapsed >= block_ms / 1000.0);
  if (sup) CHECK(c->res.wall_s < 0.5); /* the command's own time, not the pause */
  free(c);
}
static void late_timeout_is_not_a_timeout(int sup) {
  pause_is_not_a_timeout(sup, 900, 0);
}
TEST(late_timeout_is_not_a_timeout) {
  late_timeout_is_not_a_timeout(0);
}
TEST(sup_late_timeout_is_not_a_timeout) {
  late_timeout_is_not_a_timeout(1);
}
TEST(srv_late_timeout_is_not_a_timeout) {
  late_timeout_is_not_a_timeout(SRV);
}
static void paused_before_start_is_not_a_timeout(int sup) {
  pause_is_not_a_timeout(sup, 0, 800);
}
TEST(paused_before_start_is_not_a_timeout) {
  paused_before_start_is_not_a_timeout(0);
}
TEST(sup_paused_before_start_is_not_a_timeout) {
  paused_before_start_is_not_a_timeout(1);
}
TEST(srv_paused_before_start_is_not_a_timeout) {
  paused_before_start_is_not_a_timeout(SRV);
}

/* The same while the supervisor is still ending a stubborn leftover (so it is no zombie when
 * the timer fires): its report that the command ended before any stop clears the timeout. */
TEST(sup_late_timeout_during_cleanup) {
  char *argv[] = {STUB_CHILD, "text", "1", "stubborn-helper", "600", "sleep", "0.1", NULL};
  exec_spec spec = spec_in(1, argv);
  spec.timeout_s = 0.4;
  spec.grace_s = 1.0;
  run_ctx *c = new_ctx();
  c->block_ms = 600;
  run(c, &spec);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.term_signal, 0);
  CHECK_INT(c->res.stopped, EXEC_STOP_NONE);
  CHECK_INT(c->res.leftovers, 1);
  CHECK(helpers_dead(c));
  CHECK(c->res.wall_s < 0.4);
  free(c);
}

/* ---- the fork server ----------------------------------------------------------------------- */

/* The fork server is SIGKILLed mid-trial (the OOM killer, a user's kill): the trial's
 * supervisor sees its parent gone and ends the command (one that ignores SIGTERM) and the
 * helper that left its session; the trial ends once, failed, saying why; the next trial on
 * the same executor gets a new server; nothing is left behind. */
TEST(srv_server_killed_ends_trial_and_restarts) {
  char *argv[] = {STUB_CHILD, "setsid-helper", "600", "text", "1", "ignore-term", "30", NULL};
  exec_spec spec = spec_for(argv);
  spec.timeout_s = 20;
  run_ctx *c = new_ctx();
  c->kill_server_on = "ignoring SIGTERM";
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  run_on(c, &spec, x);
  CHECK(c->server > 0);
  CHECK_INT(c->n_helpers, 1);
  CHECK_INT(c->res.term_signal, SIGKILL);
  CHECK_INT(c->res.spawn_error, 0);
  CHECK(strstr(c->res.log_error, "fork server") != NULL);
  CHECK(strstr(c->res.log_error, "ended with it") != NULL);
  CHECK(c->elapsed < 5.0);
  CHECK(helpers_dead(c));
  int left = 1; /* the command's group, the supervisor's */
  for (int i = 0; i < 100 && left; i++) {
    left = c->group > 0 && group_live_members(c->group) > 0;
    if (left) usleep(20000);
  }
  if (left && c->group > 0) kill(-c->group, SIGKILL); /* clean up, then fail */
  CHECK(c->group > 0 && !left);
  /* The next trial: a new server, the trial as usual. */
  char *argv2[] = {STUB_CHILD, "steps", "2", "10", NULL};
  exec_spec spec2 = spec_for(argv2);
  ctx_again(c);
  c->kill_server_on = NULL;
  run_on(c, &spec2, x);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 2);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.term_signal, 0);
  CHECK_STR(c->res.log_error, "");
  served_end(c, x);
}

/* The orchestrator is SIGKILLed mid-trial with the fork server running the trial: the server
 * dies with it (PR_SET_PDEATHSIG), and the trial's supervisor then ends the command (one that
 * ignores SIGTERM), its group and what it started: nothing is left. */
TEST(srv_parent_death_kills_everything) {
  char file[64], script[512];
  snprintf(file, sizeof file, "/tmp/ft-srv-pd-%d", (int)getpid());
  unlink(file);
  snprintf(script, sizeof script,
           "%s grandchild 30 > /dev/null; echo $$ > %s.tmp && mv %s.tmp %s; exec %s ignore-term 30",
           STUB_CHILD, file, file, file, STUB_CHILD);
  pid_t orch = fork();
  if (orch == 0) { /* a stand-in orchestrator: one served trial on its own loop */
    uv_loop_t loop;
    uv_loop_init(&loop);
    executor *x = served_executor(&loop);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    exec_spec spec = spec_for(argv);
    spec.grace_s = 0.3;
    spec.timeout_s = 0;
    exec_callbacks cb = {.on_exit = on_exit_quiet};
    exec_trial *t = NULL;
    if (executor_start(x, &spec, &cb, NULL, &t, NULL) != 0) _exit(3);
    if (process_handles(&loop) != 0) _exit(4); /* not served */
    uv_run(&loop, UV_RUN_DEFAULT);
    _exit(0);
  }
  int cmd = read_pid_file(file, 5);
  CHECK(cmd > 0);
  procstat st;
  int sup = cmd > 0 && procstat_read(cmd, &st) == 0 ? st.ppid : 0;
  int server = sup > 0 && procstat_read(sup, &st) == 0 ? st.ppid : 0;
  CHECK(sup > 0 && server > 0 && server != orch); /* command < supervisor < server < orch */
  CHECK(server > 0 && procstat_read(server, &st) == 0 && st.ppid == orch);
  int group = cmd > 0 ? getpgid(cmd) : -1;
  CHECK(group > 0 && group == sup && group != getpgrp());
  kill(orch, SIGKILL);
  waitpid(orch, NULL, 0);
  if (server > 0) CHECK(process_dead(server));
  if (cmd > 0) CHECK(process_dead(cmd)); /* ignores SIGTERM: needed the SIGKILL */
  if (group > 0) {
    int left = 1;
    for (int i = 0; i < 50 && left; i++) {
      left = group_live_members(group) > 0;
      if (left) usleep(20000);
    }
    if (left) kill(-group, SIGKILL); /* clean up what the test started, then fail */
    CHECK(!left);
  }
  unlink(file);
}

/* ---- the spare: a supervisor the server forked ahead ----------------------------------------- */

/* The live children of PID (none that is a zombie), at most MAX of them into OUT. */
static int children_of(int pid, int *out, int max) {
  int n = 0;
  DIR *d = opendir("/proc");
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    int p = atoi(e->d_name);
    procstat st;
    if (p > 0 && procstat_read(p, &st) == 0 && st.ppid == pid && st.state != 'Z' && n < max)
      out[n++] = p;
  }
  if (d) closedir(d);
  return n;
}

enum { SPARES = 2, POOL = 8 }; /* the spares that wait at least (SUP_SPARES); the most here */

/* The fork server (our only child once a served trial has ended) and its children (then each a
 * spare waiting for a request: SPARES forked ahead, and one that served a trial and waits for
 * the next) into SPARE (0 after the last), waiting up to 5 s for SPARES of them to be forked
 * and each to be asleep. Returns how many were found: SPARES or more, or 0. */
static int find_spares(int *server, int spare[POOL]) {
  int kids[POOL], n = 0;
  *server = children_of(getpid(), kids, POOL) == 1 ? kids[0] : 0;
  for (int i = 0; i < 250 && *server > 0 && !n; i++) {
    int k = children_of(*server, kids, POOL), asleep = 0;
    procstat st;
    for (int j = 0; j < k; j++) asleep += procstat_read(kids[j], &st) == 0 && st.state == 'S';
    if (k >= SPARES && asleep == k) n = k;
    if (!n) usleep(20000);
  }
  for (int i = 0; i < POOL; i++) spare[i] = i < n ? kids[i] : 0;
  return n;
}

/* Waits (up to 5 s each) until each of SPARE waits for its request (asleep, prepared). */
static void wait_asleep(const int spare[POOL]) {
  procstat st;
  for (int k = 0; k < POOL; k++)
    for (int i = 0; i < 250 && spare[k] > 0; i++) {
      if (procstat_read(spare[k], &st) == 0 && st.state == 'S') break;
      usleep(20000);
    }
}

/* Runs one trial of SPEC on X, waits until the spares forked after it wait for their requests,
 * then stops the server (SIGSTOP): a start from here on can only be a spare's. The spares'
 * pids in SPARE; returns the server's (0: not found). */
static int stop_server_spares_waiting(run_ctx *c, const exec_spec *spec, executor *x,
                                      int spare[POOL]) {
  run_on(c, spec, x);
  int server = 0;
  CHECK(find_spares(&server, spare) >= SPARES);
  wait_asleep(spare);
  if (server > 0) kill(server, SIGSTOP);
  return server;
}

/* Whether PID is one of the spares in SPARE. */
static int is_spare(int pid, const int spare[POOL]) {
  for (int i = 0; i < POOL; i++)
    if (pid > 0 && pid == spare[i]) return 1;
  return 0;
}

/* Waits for each of SPARE to be gone (killed when still there after that); 1 when all were. */
static int spares_dead(const int spare[POOL]) {
  int all = 1;
  for (int i = 0; i < POOL; i++) {
    if (spare[i] <= 0) continue;
    int dead = process_dead(spare[i]);
    if (!dead) kill(spare[i], SIGKILL);
    all = all && dead;
  }
  return all;
}

/* Whether process PID holds an fd whose /proc link reads TARGET. */
static int holds(int pid, const char *target) {
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
  DIR *d = opendir(dir);
  struct dirent *e;
  int found = 0;
  while (d && !found && (e = readdir(d)) != NULL) {
    char path[400], t[256] = "";
    snprintf(path, sizeof path, "%s/%.255s", dir, e->d_name);
    ssize_t len = readlink(path, t, sizeof t - 1);
    if (len > 0) t[len] = '\0';
    found = len > 0 && strcmp(t, target) == 0;
  }
  if (d) closedir(d);
  return found;
}

/* What the spare PID holds, from /proc/PID/fd: *SOCKETS gets how many sockets, *STRANGE how
 * many fds that are neither /dev/null, nor a socket, nor its own trial cgroup's (made ahead),
 * nor held by this process too (one this
 * test inherited from whoever started it passes down to the server and its children, as it
 * would to a trial on the per-trial exec path). Returns the count. */
static int fds_of(int pid, int *sockets, int *strange) {
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  *sockets = *strange = 0;
  char own_cgroup[64]; /* its trial's cgroup, made ahead where cgroup v2 is writable */
  snprintf(own_cgroup, sizeof own_cgroup, "/flagtune-trial-%d", pid);
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[400], target[256] = "";
    snprintf(path, sizeof path, "%s/%.255s", dir, e->d_name);
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len > 0) target[len] = '\0';
    if (strncmp(target, "socket:", 7) == 0)
      ++*sockets;
    else if (strcmp(target, "/dev/null") != 0 && !strstr(target, own_cgroup) &&
             !holds((int)getpid(), target))
      ++*strange;
    n++;
  }
  if (d) closedir(d);
  return n;
}

/* Whether signal SIG is blocked in PID (the SigBlk mask of /proc/PID/status). */
static int sig_blocked(int pid, int sig) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  FILE *f = fopen(path, "r");
  unsigned long long mask = 0;
  int found = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "SigBlk: %llx", &mask) == 1) found = 1;
  if (f) fclose(f);
  return found && (mask >> (sig - 1)) & 1;
}

/* After a served trial the server has two children forked ahead for the next trials: each
 * leads a session of its own with the supervisor's signals blocked, holds nothing of the trial
 * nor of the server nor of the other spare (/dev/null, its link to the server, its request
 * socket, its trial's cgroup, and what this process inherited), runs nothing, and leaves when
 * the server does (here: the executor closes the server's socket). */
TEST(srv_spare_waits_holding_nothing_and_leaves_with_the_server) {
  char *argv[] = {STUB_CHILD, "steps", "1", "1", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  run_on(c, &spec, x);
  CHECK_INT(c->res.exit_status, 0);
  int server = 0, spares[POOL];
  CHECK(find_spares(&server, spares) >= SPARES);
  for (int k = 0; k < POOL && spares[k] > 0; k++) {
    int spare = spares[k];
    procstat st;
    /* Until it waits for its request (asleep, its preparation done); at most 5 s. */
    int sockets = -1, strange = -1, nfd = 0;
    for (int i = 0; i < 250 && spare > 0; i++) {
      nfd = fds_of(spare, &sockets, &strange);
      if (procstat_read(spare, &st) == 0 && st.state == 'S' && strange == 0) break;
      usleep(20000);
    }
    CHECK(spare > 0 && getsid(spare) == spare && getpgid(spare) == spare);
    CHECK(spare > 0 && procstat_read(spare, &st) == 0 && st.ppid == server);
    int kids[2];
    CHECK_INT(children_of(spare, kids, 2), 0);
    CHECK(nfd >= 5);       /* 0, 1, 2 (/dev/null) and its two sockets */
    CHECK_INT(sockets, 2); /* its link and its request socket: not the server's, not the other's */
    CHECK_INT(strange, 0); /* no pipe of a trial, no ready pipe, no signalfd */
    CHECK(sig_blocked(spare, SIGTERM) && sig_blocked(spare, SIGCHLD));
  }
  CHECK_LOOP_END(&c->loop);
  executor_free(x);
  CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
  CHECK(spares_dead(spares));
  free(c);
}

/* The fork server is SIGKILLed between trials: its spares leave with it (EOF on their links),
 * and the next trial gets a new server. */
TEST(srv_spare_leaves_when_the_server_is_killed) {
  char *argv[] = {STUB_CHILD, "steps", "1", "1", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  run_on(c, &spec, x);
  int server = 0, spares[POOL];
  CHECK(find_spares(&server, spares) >= SPARES);
  if (server > 0) kill(server, SIGKILL);
  CHECK(spares_dead(spares));
  c->exits = 0;
  memset(&c->res, 0, sizeof c->res);
  run_on(c, &spec, x);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 2);
  served_end(c, x);
}

/* A stray SIGKILL to the spares (a user's kill, the OOM killer): the next trial still starts,
 * by a fresh fork or a new spare when they are gone, with its output and exit as usual; then
 * new spares wait again. One of them first, then all. */
TEST(srv_spare_killed_next_trial_still_runs) {
  char *argv[] = {STUB_CHILD, "steps", "3", "1", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  for (int round = 0; round < 3; round++) {
    ctx_again(c);
    run_on(c, &spec, x);
    CHECK_INT(c->res.exit_status, 0);
    CHECK_INT(c->res.spawn_error, 0);
    CHECK_INT(c->n_lines[EXEC_STDOUT], 3);
    CHECK_STR(c->res.log_error, "");
    int server = 0, spares[POOL];
    CHECK(find_spares(&server, spares) >= SPARES);
    for (int k = 0; k < POOL; k++)
      if (spares[k] > 0 && (k == 0 || round > 0)) kill(spares[k], SIGKILL); /* one, then all */
    if (round == 1) CHECK(spares_dead(spares)); /* the server has reaped them */
  }
  served_end(c, x);
}

/* A spare that does not take its request (stopped here, both of them; a stalled one alike) is
 * cut off after 2 s: the trial runs under a fresh fork, once, and the spares, let go on, leave
 * without running anything (their word can no longer be sent). */
TEST(srv_spare_stopped_is_cut_off_and_runs_nothing) {
  char file[64], script[512];
  snprintf(file, sizeof file, "/tmp/ft-spare-cut-%d", (int)getpid());
  unlink(file);
  snprintf(script, sizeof script, "echo run >> %s; exec %s steps 2 1", file, STUB_CHILD);
  char *argv[] = {"/bin/sh", "-c", script, NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  run_on(c, &spec, x);
  int server = 0, spares[POOL];
  CHECK(find_spares(&server, spares) >= SPARES);
  for (int k = 0; k < POOL; k++)
    if (spares[k] > 0) kill(spares[k], SIGSTOP);
  ctx_again(c);
  run_on(c, &spec, x);
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->res.term_signal, 0);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 2);
  CHECK(c->group > 0 && !is_spare(c->group, spares)); /* a fresh fork ran it */
  for (int k = 0; k < POOL && spares[k] > 0; k++) {
    int kids[2];
    CHECK_INT(children_of(spares[k], kids, 2), 0);
    if (spares[k] > 0) kill(spares[k], SIGCONT);
  }
  CHECK(spares_dead(spares));
  usleep(200000); /* a command the spare would (wrongly) start now has time to say so */
  size_t len = 0;
  char *runs = slurp(file, &len);
  CHECK_STR(runs ? runs : "", "run\nrun\n"); /* the two trials, nothing more */
  free(runs);
  unlink(file);
  served_end(c, x);
}

/* A spare takes its request from the orchestrator itself: with the server stopped, the next
 * trial still starts at once under a spare (the server neither hands it on nor answers), runs
 * and ends as usual. */
TEST(srv_spare_takes_its_request_without_the_server) {
  char *argv[] = {STUB_CHILD, "steps", "2", "1", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx();
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  int spares[POOL];
  int server = stop_server_spares_waiting(c, &spec, x, spares);
  ctx_again(c);
  uint64_t t0 = uv_hrtime();
  run_on(c, &spec, x);
  double took_s = (double)(uv_hrtime() - t0) / 1e9;
  CHECK_INT(c->res.exit_status, 0);
  CHECK_INT(c->n_lines[EXEC_STDOUT], 2);
  CHECK_STR(c->res.log_error, "");
  CHECK(is_spare(c->group, spares));
  CHECK(took_s < 4.0); /* not the replacement of a server that did not answer within 5 s */
  if (server > 0) kill(server, SIGCONT);
  served_end(c, x);
}

/* Two starts in a row (parallel 2) both find a spare at hand: with the server stopped, both
 * trials start at once under the two spares, neither waits for the server's next
 * announcement, and both run and end as usual. */
TEST(srv_two_starts_in_a_row_take_two_spares) {
  char *argv[] = {STUB_CHILD, "steps", "2", "1", NULL};
  exec_spec spec = spec_for(argv);
  run_ctx *c = new_ctx(), *d = new_ctx();
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  int spares[POOL];
  int server = stop_server_spares_waiting(c, &spec, x, spares);
  run_ctx *both[2] = {c, d};
  exec_callbacks cb = {.on_line = on_line, .on_exit = on_exit_cb};
  spec.supervisor = NULL; /* X's own */
  uint64_t t0 = uv_hrtime();
  for (int k = 0; k < 2; k++) {
    char *err = NULL;
    ctx_again(both[k]);
    CHECK_INT(executor_start(x, &spec, &cb, both[k], &both[k]->t, &err), 0);
    free(err);
  }
  uv_run(&c->loop, UV_RUN_DEFAULT);
  double took_s = (double)(uv_hrtime() - t0) / 1e9;
  for (int k = 0; k < 2; k++) {
    CHECK_INT(both[k]->exits, 1);
    CHECK_INT(both[k]->res.exit_status, 0);
    CHECK_INT(both[k]->n_lines[EXEC_STDOUT], 2);
    CHECK_STR(both[k]->res.log_error, "");
    CHECK(is_spare(both[k]->group, spares));
  }
  CHECK(c->group != d->group);
  CHECK(took_s < 4.0); /* not the replacement of a server that did not answer within 5 s */
  if (server > 0) kill(server, SIGCONT);
  free(d);
  served_end(c, x);
}

/* A spare serves trial after trial: once nothing of a trial is left it waits for the next
 * request, so that a sweep forks no supervisor a trial. Nothing of one trial reaches the next
 * on the same supervisor: its environment and working directory are the request's, a stop
 * (the timeout's SIGTERM) ends only its own trial, its leftovers are counted and ended with
 * it, its exit code or signal is its own, and a command that cannot start ends its trial alone.
 * Fourteen trials in turn of seven kinds; at parallel 1 two spares and the one that ran the last
 * trial take them all, so at most a few supervisors (and the first trial's fresh fork) run the
 * fourteen. */
TEST(srv_spare_serves_trial_after_trial_and_nothing_carries_over) {
  char here[4096];
  CHECK(getcwd(here, sizeof here) != NULL);
  char *envp_foo[] = {"FOO=bar", "PATH=/usr/bin:/bin", NULL};
  char *env_args[] = {"sh", "-c", "pwd; " STUB_CHILD " env FOO", NULL};
  char *helper_args[] = {STUB_CHILD, "helper", "600", "text", "1", NULL};
  char *timeout_args[] = {STUB_CHILD, "text", "1", "sleep", "10", NULL};
  char *exit_args[] = {STUB_CHILD, "text", "1", "exit", "3", NULL};
  char *signal_args[] = {STUB_CHILD, "text", "1", "signal", "10", NULL}; /* SIGUSR1 */
  char *plain_args[] = {STUB_CHILD, "steps", "2", "1", NULL};
  char *missing_args[] = {"flagtune-no-such-command", "x", NULL};
  run_ctx *c = new_ctx();
  uv_loop_init(&c->loop);
  executor *x = served_executor(&c->loop);
  int groups[14], distinct = 0;
  for (int i = 0; i < 14; i++) {
    int kind = i % 7;
    exec_spec spec = spec_for(kind == 0 || kind == 1 ? env_args
                              : kind == 2            ? helper_args
                              : kind == 3            ? timeout_args
                              : kind == 4            ? (i < 7 ? exit_args : signal_args)
                              : kind == 5            ? plain_args
                                                     : missing_args);
    if (kind == 0) {
      spec.envp = envp_foo;
      spec.cwd = "/";
    }
    if (kind == 3) spec.timeout_s = 0.3;
    ctx_again(c);
    c->n_kept = 0;
    c->group = 0;
    c->res.leftovers = 0;
    run_on(c, &spec, x);
    if (kind == 0) {
      CHECK_STR(c->kept[0].text, "/");
      CHECK_STR(c->kept[1].text, "FOO=bar");
    } else if (kind == 1) { /* no cwd, no FOO: not the last trial's */
      CHECK_STR(c->kept[0].text, here);
      CHECK_STR(c->kept[1].text, "FOO unset");
    }
    CHECK_INT(c->res.leftovers, kind == 2 ? 1 : 0);
    CHECK_INT(c->res.stopped, kind == 3 ? EXEC_STOP_TIMEOUT : EXEC_STOP_NONE);
    CHECK_INT(c->res.term_signal, kind == 3 ? SIGTERM : kind == 4 && i >= 7 ? SIGUSR1 : 0);
    CHECK_INT(c->res.exit_status, kind == 4 && i < 7 ? 3 : kind == 6 ? 127 : 0);
    CHECK_INT(c->res.spawn_error, kind == 6 ? UV_ENOENT : 0);
    CHECK_STR(c->res.log_error, "");
    if (kind == 6) continue; /* no line: its supervisor's pid is not seen */
    CHECK(c->group > 0);
    int seen = 0;
    for (int j = 0; j < distinct; j++) seen |= groups[j] == c->group;
    if (!seen) groups[distinct++] = c->group;
  }
  CHECK(helpers_dead(c));
  CHECK(distinct <= 4); /* a supervisor a trial would be 12 */
  served_end(c, x);
}

/* A trial's group as a dead run can leave it: a leader without the trial's environment (as a
 * supervisor forked by the fork server has the server's), alive or, with LEADER_EXITS, gone,
 * and one member that execs the command with FLAGTUNE_SWEEP=77 FLAGTUNE_TRIAL=3. Returns the
 * group's id; *MEMBER gets the member's pid once it runs the command. */
static pid_t orphan_group(int leader_exits, pid_t *member) {
  int p[2];
  CHECK_INT(pipe(p), 0);
  pid_t leader = fork();
  if (leader == 0) {
    setpgid(0, 0);
    pid_t m = fork();
    if (m == 0) {
      char *argv[] = {STUB_CHILD, "sleep", "30", NULL};
      char *envp[] = {"PATH=/usr/bin:/bin", "FLAGTUNE_SWEEP=77", "FLAGTUNE_TRIAL=3", NULL};
      execve(STUB_CHILD, argv, envp);
      _exit(127);
    }
    ssize_t w = write(p[1], &m, sizeof m);
    _exit(w == sizeof m && leader_exits ? 0 : pause());
  }
  close(p[1]);
  *member = 0;
  CHECK_INT(read(p[0], member, sizeof *member), (int)sizeof *member);
  close(p[0]);
  if (leader_exits) CHECK_INT(waitpid(leader, NULL, 0), leader);
  for (int i = 0; i < 200; i++) { /* until the member has exec'd */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)*member);
    char exe[4096];
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n > 0 && (exe[n] = '\0', strcmp(exe, STUB_CHILD) == 0)) break;
    usleep(10000);
  }
  return leader;
}

/* Whether group PGID has no live process left (waits up to 2 s): a killed member whose
 * parent is gone waits for init to reap it, and a zombie runs nothing. */
static int group_gone(pid_t pgid) {
  for (int i = 0; i < 200; i++) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    int alive = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && !alive && (e = readdir(d)) != NULL) {
      procstat st;
      int pid = atoi(e->d_name);
      alive = pid > 0 && procstat_read(pid, &st) == 0 && st.pgrp == pgid && st.state != 'Z';
    }
    if (d) closedir(d);
    if (!alive) return 1;
    usleep(10000);
  }
  return 0;
}

/* exec_reap of a dead run's trial finds the trial in its group when the group's leader does
 * not carry the trial's environment (served supervisors), or is gone, and kills the whole
 * group; a group none of whose processes is that trial is left alone. */
static void reap_finds_the_trial_in_its_group(int leader_exits) {
  pid_t member = 0, pgid = orphan_group(leader_exits, &member);
  CHECK(member > 0);
  exec_orphan wrong[2] = {{.pid = pgid, .number = 4}, {.pid = pgid, .number = 3}};
  CHECK_INT(exec_reap(78, &wrong[1], 1), 0); /* another sweep's trial 3 */
  CHECK_INT(exec_reap(77, &wrong[0], 1), 0); /* this sweep's trial 4 */
  CHECK_INT(kill(member, 0), 0);             /* both left alone */
  CHECK_INT(exec_reap(77, &wrong[1], 1), 1);
  CHECK(group_gone(pgid));
}
TEST(reap_leader_without_the_trials_environment) {
  reap_finds_the_trial_in_its_group(0);
}
TEST(reap_leader_gone) {
  reap_finds_the_trial_in_its_group(1);
}
