/* The trial supervisor (see supervise.h): owns one command's process, the promise that it
 * does not outlive the orchestrator, and the promise that nothing the command started
 * outlives the trial. It must stay small and synchronous: no libuv, no Lua, no store, nothing
 * allocated after fork but what exec needs. Signals are blocked and taken with sigtimedwait(),
 * so there is no asynchronous handler to get wrong.
 *
 * Who signals whom: the executor signals the whole group (kill(-pgid)), which already reaches
 * the command, so a SIGTERM/SIGINT sent by the original parent is not forwarded again (a
 * training script that treats a second SIGTERM as "die now" must see only one); it starts the
 * grace instead, after which the supervisor SIGKILLs every descendant (a process that left
 * the group included). SIGUSR2 from the parent means "kill everything now". A signal from
 * anyone else (a user's `kill PID`) is forwarded to the group. SIGTERM arriving after the
 * parent is gone (getppid() changed: the kernel's PR_SET_PDEATHSIG) ends the group and every
 * descendant: SIGTERM, then SIGKILL after the grace. PR_SET_PDEATHSIG fires when the parent
 * *thread* that forked us exits; flagtune spawns from its loop thread, which lives as long as
 * the process.
 *
 * Containment: the supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER), so whatever the
 * command leaves behind (a `sleep 600 &`, a setsid() daemon, a double fork) is re-parented to
 * it rather than to init and stays its descendant. When the command has ended, every
 * descendant found by walking /proc gets SIGTERM, then SIGKILL after the grace, and is reaped.
 * Where a writable cgroup v2 hierarchy exists, the command also runs in a child cgroup of its
 * own, which is killed as a whole (cgroup.kill) and removed at the end; without one, the
 * /proc walk alone holds. */
#define _GNU_SOURCE /* what strict C11 hides: sigset_t, O_DIRECTORY */
#include "supervise.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h> /* struct clone_args, CLONE_INTO_CGROUP */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procstat.h"
#include "supervise_impl.h"

#define SUPERVISE_DEFAULT_GRACE_S 5.0
#define SUP_MAX_DEPTH 512 /* longest ancestry followed from a process up to the supervisor */

int sup_usage(void) {
  fprintf(stderr, "usage: flagtune " SUPERVISE_ARG
                  " [--parent PID] [--grace SECONDS] [--report FD] [--no-cgroup] -- COMMAND "
                  "[ARGS...]\n");
  return 2;
}

int sup_parse_args(int argc, char **argv, sup_args *a) {
  a->parent = 0;
  a->grace_s = SUPERVISE_DEFAULT_GRACE_S;
  a->report_fd = -1;
  a->cgroup = 1;
  a->cmd = NULL;
  a->again = a->reusable = 0;
  a->back_fd = -1;
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (strcmp(argv[i], "--") == 0) {
      if (i + 1 >= argc) return -1;
      a->cmd = argv + i + 1;
      return 0;
    }
    if (strcmp(argv[i], "--no-cgroup") == 0) {
      a->cgroup = 0;
      continue;
    }
    if (i + 1 >= argc) return -1;
    if (strcmp(argv[i], "--parent") == 0) {
      long v = strtol(argv[++i], &end, 10);
      if (*end || v <= 0) return -1;
      a->parent = (pid_t)v;
    } else if (strcmp(argv[i], "--grace") == 0) {
      double v = strtod(argv[++i], &end);
      if (*end || !(v >= 0 && v <= 86400)) return -1;
      a->grace_s = v;
    } else if (strcmp(argv[i], "--report") == 0) {
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 3 || v > 1024 || fcntl((int)v, F_GETFD) < 0) return -1;
      a->report_fd = (int)v;
    } else {
      return -1;
    }
  }
  return -1;
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec to_timespec(double s) {
  if (s < 0) s = 0;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  return ts;
}

/* One report line for the executor (supervise.h); silently nothing without a report fd. */
__attribute__((format(printf, 2, 3))) static void report(const sup_args *a, const char *fmt, ...) {
  if (a->report_fd < 0) return;
  char line[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n <= 0 || n >= (int)sizeof line) return;
  ssize_t w;
  do w = write(a->report_fd, line, (size_t)n);
  while (w < 0 && errno == EINTR);
}

/* ---- the command ------------------------------------------------------------------------ */

/* The message and exit code for a command that could not be executed (shell conventions). */
static int report_exec_error(const char *file, int err) {
  if (err == ENOENT || err == ENOTDIR) {
    fprintf(stderr, "command not found: %s\n", file);
    return 127;
  }
  if (err == EACCES)
    fprintf(stderr, "permission denied: %s\n", file);
  else
    fprintf(stderr, "cannot start %s: %s\n", file, strerror(err));
  return 126;
}

/* What the command's process does before its exec: the trial's cgroup (when there is one and
 * it was not born in it: "0" moves the writer), the mask and dispositions the command expects,
 * then exec. Only system calls (no malloc, no stdio, no lock): it may run in our memory
 * (start_vfork). Returns errno when the exec failed. */
static int exec_command(char **cmd, const sigset_t *old, int cgroup_fd) {
  if (cgroup_fd >= 0) {
    ssize_t w = write(cgroup_fd, "0", 1); /* failing to join leaves the /proc walk */
    (void)w;
  }
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGTERM, &dfl, NULL);
  sigaction(SIGINT, &dfl, NULL);
  sigaction(SIGHUP, &dfl, NULL);
  sigaction(SIGPIPE, &dfl, NULL); /* ignored by the supervisor (supervise_run), default for it */
  sigprocmask(SIG_SETMASK, old, NULL);
  execvp(cmd[0], cmd); /* glibc's search keeps its buffers on the stack (posix_spawnp uses it) */
  return errno;
}

/* The fork path's child: on failure errno goes back through the close-on-exec pipe and the
 * child leaves without a word. */
static void run_child(char **cmd, const sigset_t *old, int errfd, int cgroup_fd) {
  int e = exec_command(cmd, old, cgroup_fd);
  ssize_t w = write(errfd, &e, sizeof e);
  (void)w;
  _exit(127);
}

/* fork(), but born in the trial's cgroup when there is one: clone3(CLONE_INTO_CGROUP) (Linux
 * 5.7) costs nothing, where moving a running process (a write to cgroup.procs) waits for the
 * kernel's cgroup lock, 10-40 ms. *JOINED says whether the child still has to join. The child
 * only execs or writes and leaves, so glibc's fork handlers are not missed. */
static pid_t fork_into(const sup_cgroup *cg, int *joined) {
  *joined = 0;
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
  if (cg->dir_fd >= 0) {
    struct clone_args ca;
    memset(&ca, 0, sizeof ca);
    ca.flags = CLONE_INTO_CGROUP;
    ca.exit_signal = SIGCHLD;
    ca.cgroup = (uint64_t)cg->dir_fd;
    long pid = syscall(SYS_clone3, &ca, sizeof ca);
    if (pid >= 0) {
      *joined = 1;
      return (pid_t)pid;
    }
  }
#endif
  return fork();
}

/* Starts the command by fork and exec. Returns its pid, or 0 with *code set when it could not
 * be executed. */
static pid_t start_fork(char **cmd, const sigset_t *old, const sup_cgroup *cg, int *code) {
  int p[2];
  if (pipe(p) != 0) {
    *code = report_exec_error(cmd[0], errno);
    return 0;
  }
  fcntl(p[0], F_SETFD, FD_CLOEXEC);
  fcntl(p[1], F_SETFD, FD_CLOEXEC);
  int joined = 0;
  pid_t pid = fork_into(cg, &joined);
  if (pid == 0) {
    close(p[0]);
    run_child(cmd, old, p[1], joined ? -1 : cg->procs_fd);
  }
  int saved = errno;
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    *code = report_exec_error(cmd[0], saved);
    return 0;
  }
  int e = 0;
  ssize_t n;
  do n = read(p[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close(p[0]);
  if (n == (ssize_t)sizeof e) { /* exec failed: the child is leaving; reap it quietly */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    *code = report_exec_error(cmd[0], e);
    return 0;
  }
  return pid;
}

/* Not under ASan: its shadow memory and interceptors assume one stack per thread, and a child
 * in our memory on a stack of its own would leave that stack's shadow poisoned (the sanitizer
 * build forks). */
#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define SUP_ASAN 1
#elif defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer)
#define SUP_ASAN 1
#endif
#endif
#if defined(__x86_64__) && defined(SYS_clone3) && defined(CLONE_INTO_CGROUP) && !defined(SUP_ASAN)
#define SUP_VFORK 1
/* The command's process in our memory, as posix_spawn starts one: clone3(CLONE_VM |
 * CLONE_VFORK) on a stack of its own, so that no page table is copied, we sleep until it has
 * exec'd or left, and (unlike posix_spawn) it can be born in the trial's cgroup. */
typedef struct {
  char **cmd;
  const sigset_t *old;
  int cgroup_fd;
  int err; /* set by the child when its exec failed */
} vfork_args;

static int vfork_child(void *p) {
  vfork_args *v = p;
  v->err = exec_command(v->cmd, v->old, v->cgroup_fd);
  _exit(127);
}

/* clone3(CA) with the child on CA's stack running FN(ARG) and leaving with its result, as
 * glibc's own clone3 wrapper does (sysdeps/unix/sysv/linux/x86_64/clone3.S), which glibc
 * 2.36 does not export. Returns the child's pid or -errno. */
static long clone3_run(struct clone_args *ca, int (*fn)(void *), void *arg) {
  long ret;
  register long r12 __asm__("r12") = (long)fn; /* kept by the kernel across the syscall */
  register long r13 __asm__("r13") = (long)arg;
  __asm__ volatile(
      "syscall\n\t"
      "testq %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xorl %%ebp, %%ebp\n\t" /* the child, on its own stack: the end of frames */
      "movq %%r13, %%rdi\n\t"
      "callq *%%r12\n\t"
      "movl %%eax, %%edi\n\t"
      "movl $60, %%eax\n\t" /* SYS_exit */
      "syscall\n\t"
      "hlt\n"
      "1:\n\t"
      : "=a"(ret)
      : "0"((long)SYS_clone3), "D"(ca), "S"(sizeof *ca), "r"(r12), "r"(r13)
      : "rcx", "r11", "memory", "cc");
  return ret;
}

/* Starts the command by vfork. Returns its pid; 0 with *code set when it could not be
 * executed; -1 when clone3 is refused here (an older kernel, a seccomp filter): the caller
 * forks instead. */
static pid_t start_vfork(char **cmd, const sigset_t *old, const sup_cgroup *cg, int *code) {
  /* glibc's execvp copies PATH and the name into stack arrays, and a script's argv. */
  const char *path = getenv("PATH");
  size_t argc = 0;
  while (cmd[argc]) argc++;
  size_t size =
      64 * 1024 + (path ? strlen(path) : 0) + strlen(cmd[0]) + (argc + 3) * sizeof(char *);
  size = (size + 4095) & ~(size_t)4095;
  /* Kept for the next trial a spare serves (its pages already faulted in): the child is done
   * with it once clone3 returns here, since the parent sleeps until the child exec'd or left. */
  static void *stack = NULL;
  static size_t stack_size = 0;
  if (size > stack_size) {
    if (stack) munmap(stack, stack_size);
    stack_size = 0;
    stack =
        mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) {
      stack = NULL;
      return -1;
    }
    stack_size = size;
  }
  size = stack_size;
  vfork_args v = {cmd, old, -1, 0};
  struct clone_args ca;
  memset(&ca, 0, sizeof ca);
  ca.flags = CLONE_VM | CLONE_VFORK;
  ca.exit_signal = SIGCHLD;
  ca.stack = (uint64_t)(uintptr_t)stack;
  ca.stack_size = size;
  long pid = -ENOSYS;
  if (cg->dir_fd >= 0) {
    ca.flags |= CLONE_INTO_CGROUP;
    ca.cgroup = (uint64_t)cg->dir_fd;
    pid = clone3_run(&ca, vfork_child, &v);
    ca.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
    ca.cgroup = 0;
  }
  if (pid < 0) {
    v.cgroup_fd = cg->procs_fd; /* not born in it: the child joins */
    pid = clone3_run(&ca, vfork_child, &v);
  }
  if (pid < 0) return -1;
  if (v.err) { /* exec failed: the child has left; reap it quietly */
    while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR) {
    }
    *code = report_exec_error(cmd[0], v.err);
    return 0;
  }
  return (pid_t)pid;
}
#endif

/* Starts the command: by vfork where this build can, otherwise (or when the kernel refuses
 * it) by fork. Returns its pid, or 0 with *code set when it could not be executed. */
static pid_t start(char **cmd, const sigset_t *old, const sup_cgroup *cg, int *code) {
#ifdef SUP_VFORK
  static int no_vfork = -1;
  if (no_vfork < 0) no_vfork = getenv("FLAGTUNE_SUPERVISE_FORK") != NULL;
  if (!no_vfork) {
    pid_t pid = start_vfork(cmd, old, cg, code);
    if (pid >= 0) return pid;
  }
#endif
  return start_fork(cmd, old, cg, code);
}

/* Ends this process the way the command ended: same exit code, or the same signal. */
static int mirror(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  int sig = WTERMSIG(status);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core); /* the command's crash, not ours: no second core file */
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  raise(sig);
  return 128 + sig; /* a signal whose default is not to terminate */
}

/* Reaps every child that has ended: the command (1, with *status set, when it is among them)
 * and the orphans re-parented to us as the subreaper. */
static int reap(pid_t child, int *status) {
  int found = 0, st;
  pid_t r;
  for (;;) {
    r = waitpid(-1, &st, WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return found;
    if (r == child) {
      *status = st;
      found = 1;
    }
  }
}

/* ---- the process tree ------------------------------------------------------------------- */

typedef struct {
  pid_t pid, ppid;
  char state;
} proc_ent;

typedef struct {
  proc_ent *v;
  size_t n, cap;
} proc_table;

typedef struct {
  pid_t *v;
  size_t n, cap;
} pid_set;

static int ent_cmp(const void *a, const void *b) {
  pid_t x = ((const proc_ent *)a)->pid, y = ((const proc_ent *)b)->pid;
  return (x > y) - (x < y);
}

/* One process's parent and state from /proc/PID/stat; 0 when it is gone. */
static int read_stat(const char *pid, proc_ent *e) {
  procstat st;
  if (procstat_read((pid_t)atoi(pid), &st) != 0) return 0;
  e->pid = (pid_t)atoi(pid);
  e->ppid = st.ppid;
  e->state = st.state;
  return 1;
}

/* A snapshot of every process's parent and state, sorted by pid. */
static void proc_scan(proc_table *pt) {
  pt->n = 0;
  DIR *d = opendir("/proc");
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
    if (pt->n == pt->cap) {
      size_t cap = pt->cap ? pt->cap * 2 : 512;
      proc_ent *v = realloc(pt->v, cap * sizeof *v);
      if (!v) break; /* out of memory: the processes seen so far still get their signal */
      pt->v = v;
      pt->cap = cap;
    }
    if (read_stat(de->d_name, &pt->v[pt->n])) pt->n++;
  }
  closedir(d);
  qsort(pt->v, pt->n, sizeof *pt->v, ent_cmp);
}

/* Whether PID's ancestry leads to ROOT. */
static int descends_from(const proc_table *pt, pid_t pid, pid_t root) {
  for (int depth = 0; depth < SUP_MAX_DEPTH; depth++) {
    proc_ent key = {.pid = pid};
    const proc_ent *e = bsearch(&key, pt->v, pt->n, sizeof key, ent_cmp);
    if (!e || e->ppid <= 0) return 0;
    if (e->ppid == root) return 1;
    pid = e->ppid;
  }
  return 0;
}

/* Adds PID to S; 1 when it was not there yet. */
static int pid_set_add(pid_set *s, pid_t pid) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i] == pid) return 0;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    pid_t *v = realloc(s->v, cap * sizeof *v);
    if (!v) return 1; /* still signalled, just not counted */
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = pid;
  return 1;
}

/* Sends SIG (0: none) to every live descendant of this process, or with ONLY_NEW to those not
 * yet in SEEN, and records them in SEEN. A stopped process gets SIGCONT after a SIGTERM, so
 * that it can act on it. Returns how many live descendants there are. */
static int signal_descendants(proc_table *pt, pid_set *seen, int sig, int only_new) {
  proc_scan(pt);
  pid_t self = getpid();
  int live = 0;
  for (size_t i = 0; i < pt->n; i++) {
    const proc_ent *e = &pt->v[i];
    if (e->state == 'Z' || e->state == 'X' || !descends_from(pt, e->pid, self)) continue;
    live++;
    int fresh = pid_set_add(seen, e->pid);
    if (sig == 0 || (only_new && !fresh)) continue;
    kill(e->pid, sig);
    if (sig == SIGTERM) kill(e->pid, SIGCONT);
  }
  return live;
}

/* ---- the end of a trial ------------------------------------------------------------------ */

/* Waits up to S seconds for a child to change state or for SIGUSR2 (kill now). Returns 1 when
 * SIGUSR2 came from the parent. */
static int pause_for_child(double s, pid_t parent) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGUSR2);
  struct timespec ts = to_timespec(s);
  siginfo_t si;
  int sig = sigtimedwait(&set, &si, &ts);
  return sig == SIGUSR2 && si.si_pid == parent;
}

/* Whether any child is left (alive or not yet reaped). As the subreaper we are the ancestor of
 * every living descendant through a chain of living processes, whose top is our child: no
 * child, no descendant, and the /proc walk can be skipped (the common case). */
static int has_children(void) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* How long what the command leaves behind may take to end by itself before it is ended: srun
 * forks a shepherd that it tells to exit as it ends itself (SchedMD/slurm
 * src/srun/srun_job.c, _shepherd_notify in fini_srun), so the shepherd can still be running,
 * all signals blocked, when srun is reaped; it is no leftover of the trial. */
#define SUP_SETTLE_S 0.2

/* Waits up to SUP_SETTLE_S for the command's descendants to end of themselves, reaping them.
 * Returns how many still live; *NOW is set when SIGUSR2 from PARENT asked to end them at once. */
static int settle(proc_table *pt, pid_t parent, int *now) {
  pid_set counted = {0};
  int dummy;
  int live = signal_descendants(pt, &counted, 0, 0);
  double until = mono_s() + SUP_SETTLE_S;
  while (live > 0 && !*now && mono_s() < until) {
    *now = pause_for_child(until - mono_s(), parent);
    reap(0, &dummy);
    live = has_children() ? signal_descendants(pt, &counted, 0, 0) : 0;
  }
  free(counted.v);
  return live;
}

/* After the command: every process it left behind that does not end by itself at once
 * (settle) gets SIGTERM, then SIGKILL after GRACE_S (at once on SIGUSR2 from PARENT), and is
 * reaped; then the cgroup, if any, is killed as a whole and removed. Returns how many
 * processes were ended. */
static int contain(sup_cgroup *cg, double grace_s, pid_t parent) {
  proc_table pt = {0};
  pid_set seen = {0};
  int dummy, now = 0;
  reap(0, &dummy);
  int live = has_children();
  if (live && grace_s > 0) live = settle(&pt, parent, &now);
  if (live > 0) live = signal_descendants(&pt, &seen, SIGTERM, 1);
  double until = mono_s() + (now ? 0 : grace_s);
  while (live > 0 && mono_s() < until) {
    if (pause_for_child(0.02, parent)) break;
    reap(0, &dummy);
    live = signal_descendants(&pt, &seen, SIGTERM, 1);
  }
  for (int round = 0; live > 0 && round < 200; round++) {
    signal_descendants(&pt, &seen, SIGKILL, 0);
    pause_for_child(0.005, parent);
    reap(0, &dummy);
    live = signal_descendants(&pt, &seen, 0, 0);
  }
  int killed = (int)seen.n + sup_cgroup_drain(cg);
  reap(0, &dummy);
  free(pt.v);
  free(seen.v);
  return killed;
}

/* Whether a SIGTERM/SIGINT from the parent is waiting: a group signal reaches us no later than
 * the command, so one that ended the command is pending here by the time we reap it. */
static int stop_pending(pid_t parent) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  struct timespec zero = {0, 0};
  siginfo_t si;
  int seen = 0, sig;
  while ((sig = sigtimedwait(&set, &si, &zero)) > 0) seen |= si.si_pid == parent;
  return seen;
}

/* With A->again, once the trial is over: whether this process can serve another (no child is
 * left), and if so 'b' to the fork server before the trial's "end" is written, so that the
 * server counts us waiting before the orchestrator, having read the "end", can start another
 * trial (its spare's 't' then never finds us still counted busy). */
static void back(sup_args *a) {
  a->reusable = !has_children();
  if (a->reusable && a->back_fd >= 0 && send(a->back_fd, "b", 1, MSG_NOSIGNAL) != 1)
    a->reusable = 0;
}

/* Nothing of the trial is left (its "end" line is written): EOF on every pipe to the
 * orchestrator, which ends the trial there, before our cgroup's removal and our own exit (and
 * the fork server's record of it), or the next request, are done. */
static void let_go(const sup_args *a) {
  if (a->report_fd < 0) return;
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, 1);
    dup2(null, 2);
    close(null);
  }
  close(a->report_fd);
}

/* The command ended: report its own duration and whether a stop had reached it, end its
 * leftovers, report them, and end as it did. When it left no process behind (the common
 * case: no child of ours is left once it is reaped), the three lines go in one write, so the
 * orchestrator wakes once for them; otherwise "exit" goes at once, before the grace. */
static int command_done(sup_args *a, sup_cgroup *cg, int status, double started, int stopped) {
  stopped |= stop_pending(a->boss);
  double wall = mono_s() - started;
  int dummy;
  reap(0, &dummy);
  int alone = !has_children();
  if (!alone) report(a, "exit %.6f %d\n", wall, stopped);
  int killed = contain(cg, a->grace_s, a->boss);
  if (a->again) back(a);
  if (alone)
    report(a, "exit %.6f %d\nkilled %d\nend %d\n", wall, stopped, killed, status);
  else
    report(a, "killed %d\nend %d\n", killed, status);
  let_go(a);
  if (a->again) {
    if (!cg->drained || !a->reusable) sup_cgroup_end(cg); /* else kept, empty, for the next */
    cg->drained = 0;
    return status;
  }
  sup_cgroup_end(cg);
  return mirror(status);
}

/* The parent is gone: SIGTERM to the group and to every descendant now, SIGKILL to all of them
 * once the command ended or the grace ran out. The final SIGKILL to the group reaches this
 * process too, which is the point: nothing is left. */
static void end_group(pid_t child, const sup_args *a, sup_cgroup *cg) {
  kill(0, SIGTERM);
  proc_table pt = {0};
  pid_set seen = {0};
  signal_descendants(&pt, &seen, SIGTERM, 1);
  free(pt.v);
  free(seen.v);
  double until = mono_s() + a->grace_s;
  int status;
  while (!reap(child, &status)) {
    double left = until - mono_s();
    if (left <= 0) break;
    pause_for_child(left, 0);
  }
  contain(cg, 0, 0);
  kill(0, SIGKILL);
}

static int watch(pid_t child, double started, sup_args *a, sup_cgroup *cg) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR2);
  double kill_at = 0; /* when a stop's grace ends; 0: none */
  int stopped = 0;
  proc_table pt = {0};
  pid_set seen = {0};
  for (;;) {
    int status;
    if (reap(child, &status)) {
      free(pt.v);
      free(seen.v);
      return command_done(a, cg, status, started, stopped);
    }
    if (getppid() != a->parent) {
      end_group(child, a, cg);
      return 1;
    }
    double wait = 1.0; /* a parent death between checks is seen within a second */
    if (kill_at > 0 && mono_s() >= kill_at) {
      signal_descendants(&pt, &seen, SIGKILL, 0); /* the grace is over: the group and strays */
      kill_at = mono_s() + 0.1;                   /* again, for any it forked meanwhile */
    }
    if (kill_at > 0 && kill_at - mono_s() < wait) wait = kill_at - mono_s();
    siginfo_t si;
    struct timespec ts = to_timespec(wait);
    int sig = sigtimedwait(&set, &si, &ts);
    if (sig <= 0 || sig == SIGCHLD) continue;
    if (getppid() != a->parent) continue; /* the kernel's death signal: handled above */
    if (si.si_pid == getpid()) continue;  /* our own forward came back */
    if (si.si_pid == a->boss) {           /* the group already has it: start the grace */
      if (sig == SIGUSR2) kill_at = mono_s();
      if (sig == SIGTERM || sig == SIGINT) stopped = 1;
      if (kill_at == 0 && sig != SIGHUP) kill_at = mono_s() + a->grace_s;
      continue;
    }
    if (sig != SIGUSR2) kill(0, sig);
  }
}

/* The signals the supervisor takes with sigtimedwait() rather than by their default action. */
void sup_watched_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGCHLD);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGHUP);
  sigaddset(set, SIGUSR2);
}

/* The supervisor once it leads its own group with the watched signals blocked (OLD: the mask
 * the command gets) and its parent's death is asked for: contain, start, watch. */
int supervise_run(sup_args *a, const sigset_t *old, sup_cgroup *made) {
  /* The report pipe and stderr lead to the orchestrator. Once it is dead, the command's next
   * write ends the command with SIGPIPE, and our own "exit" report line would end us the same
   * way, between reaping the command and ending its leftovers: a setsid() helper would then
   * go to init, uncontained. So a write to a closed pipe fails here (EPIPE) and we go on. */
  signal(SIGPIPE, SIG_IGN);
  /* Orphans of the command become our children, not init's: the /proc walk finds them. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sup_cgroup own = {.dir = "", .dir_fd = -1, .procs_fd = -1}, *cg = made ? made : &own;
  if (made) { /* made ahead (a spare): kept unless the request says no cgroup */
    if (!a->cgroup) sup_cgroup_end(cg);
  } else {
    sup_cgroup_begin(cg, a->cgroup);
  }
  int code = 0;
  double started = mono_s();
  pid_t child = start(a->cmd, old, cg, &code);
  if (child == 0) {
    if (a->again) { /* nothing ran: the cgroup stays as it was, empty */
      back(a);
      report(a, "end %d\n", W_EXITCODE(code, 0));
      let_go(a);
      return code;
    }
    sup_cgroup_end(cg);
    return code;
  }
  /* Where the command runs, for the executor: should we die before our cleanup (the command
   * may kill us), it ends the cgroup itself. */
  if (cg->dir[0]) report(a, "cgroup %s\n", cg->dir);
  return watch(child, started, a, cg);
}
