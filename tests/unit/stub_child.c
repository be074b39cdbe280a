/* The executor's hostile child: everything a training script can do to the process that
 * runs it. Modes run in argv order and can be combined, e.g. `stub_child text 2 exit 3`:
 *
 *   steps N MS             N lines {"step":i,"step_time_ms":MS}, sleeping MS ms between them
 *   text N                 N lines "line i"
 *   sleep SECONDS          sleeps (fractions allowed)
 *   exit CODE              exits with CODE
 *   signal SIGNUM          raises SIGNUM
 *   ignore-term SECONDS    ignores SIGTERM, says "ignoring SIGTERM", sleeps
 *   grandchild SECONDS     forks a grandchild that keeps stdout/stderr open and sleeps; the
 *                          parent prints "grandchild PID" and exits 0
 *   setsid-grandchild S    the same, but the grandchild first leaves the group with setsid()
 *   helper SECONDS         a background helper (`sleep 600 >/dev/null 2>&1 &`): a child that
 *                          prints "helper PID", points stdout/stderr at /dev/null and sleeps;
 *                          the stub goes on with the next mode
 *   setsid-helper S        the same, after leaving the session and group with setsid()
 *   double-fork S          the same, as a daemon: its parent exits at once (the stub waits
 *                          for that parent), so it is nobody's child any more
 *   stubborn-helper S      a helper that ignores SIGTERM
 *   shepherd MS            srun's shepherd: a child with every signal blocked that waits for
 *                          a byte the stub writes as it exits, then exits MS ms later (it
 *                          prints "helper PID" like the helpers)
 *   flood MB               MB MiB of 100-byte lines on stdout, as fast as possible
 *   longline MB            one line of MB MiB without a newline
 *   binary                 NULs, invalid UTF-8, \r\n and ANSI escapes
 *   stderr TEXT...         each TEXT as a line on stderr, then exits 1
 *   oom                    an XLA out-of-memory error on stderr, then sleeps until killed
 *   env NAME...            NAME=value (or "NAME unset") for each NAME
 *
 * Output goes through write(2), never stdio buffers, so nothing is lost or doubled by fork
 * or by a kill. It must stay a plain program: no libraries beyond libc. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../no_leak_check.h"

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(120); /* the reader went away */
    p += w;
    n -= (size_t)w;
  }
}

static void say(int fd, const char *s) {
  write_all(fd, s, strlen(s));
}

static void sleep_s(double s) {
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static const char *need(int argc, char **argv, int i) {
  if (i >= argc) {
    say(2, "stub_child: missing argument\n");
    exit(99);
  }
  return argv[i];
}

static void do_steps(int n, double ms) {
  char line[128];
  for (int i = 0; i < n; i++) {
    snprintf(line, sizeof line, "{\"step\":%d,\"step_time_ms\":%g}\n", i, ms);
    say(1, line);
    sleep_s(ms / 1000.0);
  }
}

static void do_text(int n) {
  char line[64];
  for (int i = 0; i < n; i++) {
    snprintf(line, sizeof line, "line %d\n", i);
    say(1, line);
  }
}

/* MB MiB of 100-byte lines, written in 64 KiB blocks so the reader is the bottleneck. */
static void do_flood(long mb, int newlines) {
  static char block[65600];
  for (size_t i = 0; i < sizeof block; i++) {
    block[i] = (char)('a' + (int)(i % 100) % 26);
    if (newlines && i % 100 == 99) block[i] = '\n';
  }
  long total = mb * 1024 * 1024;
  while (total > 0) {
    long n = total < 65600 ? total : 65600;
    write_all(1, block, (size_t)n);
    total -= n;
  }
}

static void do_binary(void) {
  static const char data[] =
      "a\0b\xff\xfe\r\n"
      "\x1b[31mred\x1b[0m\r\n"
      "\xc3\x28 bad utf8\n";
  write_all(1, data, sizeof data - 1);
}

/* The grandchild inherits stdout and stderr and sits on them; the parent leaves at once. */
/* The parent announces the grandchild, so that the line is out before anything can end it
 * (a supervisor ends leftovers as soon as the parent exits). */
static void do_grandchild(double seconds, int leave_group) {
  pid_t pid = fork();
  if (pid < 0) exit(98);
  if (pid > 0) {
    char line[64];
    snprintf(line, sizeof line, "grandchild %d\n", (int)pid);
    say(1, line);
    exit(0);
  }
  if (leave_group) setsid();
  sleep_s(seconds);
  exit(0);
}

static void announce_helper(pid_t pid) {
  char line[64];
  snprintf(line, sizeof line, "helper %d\n", (int)pid);
  say(1, line);
}

/* A helper that outlives the stub unless someone ends it; MODE is how it hides. Its pid is
 * announced by its parent, so the line is out before anything can end it. */
static void do_helper(double seconds, const char *mode) {
  int dfork = strcmp(mode, "double-fork") == 0;
  int stubborn = strcmp(mode, "stubborn-helper") == 0;
  if (stubborn) signal(SIGTERM, SIG_IGN); /* before fork: no moment where TERM still kills */
  pid_t pid = fork();
  if (pid < 0) exit(98);
  if (pid > 0 && stubborn) signal(SIGTERM, SIG_DFL);
  if (pid > 0) {
    if (!dfork) {
      announce_helper(pid);
      return;
    }
    int st; /* the daemon idiom: the middle process announces the helper and leaves */
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  if (dfork) {
    pid_t inner = fork();
    if (inner < 0) _exit(98);
    if (inner > 0) {
      announce_helper(inner);
      _exit(0);
    }
  }
  if (strcmp(mode, "setsid-helper") == 0) setsid();
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, 1);
    dup2(null, 2);
    close(null);
  }
  sleep_s(seconds);
  _exit(0);
}

/* The shepherd's pipe: the stub writes its byte as it exits (atexit), as srun does at its end. */
static int shepherd_fd = -1;

static void tell_shepherd(void) {
  if (shepherd_fd >= 0 && write(shepherd_fd, "", 1) < 0) return;
}

static void do_shepherd(double ms) {
  int p[2];
  if (pipe(p) != 0) exit(98);
  pid_t pid = fork();
  if (pid < 0) exit(98);
  if (pid > 0) {
    close(p[0]);
    shepherd_fd = p[1];
    atexit(tell_shepherd);
    announce_helper(pid);
    return;
  }
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  close(p[1]);
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, 1);
    dup2(null, 2);
    close(null);
  }
  char b;
  while (read(p[0], &b, 1) < 0 && errno == EINTR) {
  }
  sleep_s(ms / 1000.0);
  _exit(0);
}

static void do_env(int argc, char **argv, int i) {
  for (; i < argc; i++) {
    const char *v = getenv(argv[i]);
    say(1, argv[i]);
    say(1, v ? "=" : " unset");
    if (v) say(1, v);
    say(1, "\n");
  }
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *m = argv[i];
    if (strcmp(m, "steps") == 0) {
      int n = atoi(need(argc, argv, i + 1));
      do_steps(n, atof(need(argc, argv, i + 2)));
      i += 2;
    } else if (strcmp(m, "text") == 0) {
      do_text(atoi(need(argc, argv, ++i)));
    } else if (strcmp(m, "sleep") == 0) {
      sleep_s(atof(need(argc, argv, ++i)));
    } else if (strcmp(m, "exit") == 0) {
      exit(atoi(need(argc, argv, ++i)));
    } else if (strcmp(m, "signal") == 0) {
      raise(atoi(need(argc, argv, ++i)));
    } else if (strcmp(m, "ignore-term") == 0) {
      signal(SIGTERM, SIG_IGN);
      say(1, "ignoring SIGTERM\n");
      sleep_s(atof(need(argc, argv, ++i)));
    } else if (strcmp(m, "grandchild") == 0 || strcmp(m, "setsid-grandchild") == 0) {
      do_grandchild(atof(need(argc, argv, i + 1)), m[0] == 's');
      i++;
    } else if (strcmp(m, "helper") == 0 || strcmp(m, "setsid-helper") == 0 ||
               strcmp(m, "double-fork") == 0 || strcmp(m, "stubborn-helper") == 0) {
      do_helper(atof(need(argc, argv, i + 1)), m);
      i++;
    } else if (strcmp(m, "shepherd") == 0) {
      do_shepherd(atof(need(argc, argv, ++i)));
    } else if (strcmp(m, "flood") == 0 || strcmp(m, "longline") == 0) {
      do_flood(atol(need(argc, argv, i + 1)), m[0] == 'f');
      i++;
    } else if (strcmp(m, "binary") == 0) {
      do_binary();
    } else if (strcmp(m, "stderr") == 0) {
      for (i++; i < argc; i++) {
        say(2, argv[i]);
        say(2, "\n");
      }
      exit(1);
    } else if (strcmp(m, "oom") == 0) {
      say(2,
          "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while "
          "trying to allocate 17179869184 bytes.\n");
      sleep_s(60);
    } else if (strcmp(m, "env") == 0) {
      do_env(argc, argv, i + 1);
      break;
    } else {
      say(2, "stub_child: unknown mode\n");
      return 99;
    }
  }
  return 0;
}
