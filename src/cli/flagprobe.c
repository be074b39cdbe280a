/* `flagtune flags probe`: which of a list of flags the installed XLA refuses, found by running a
 * short command with them in XLA_FLAGS: all at once, again without those it names, by halves
 * where a run fails naming none, each run in a process group of its own under a time limit,
 * and the verdicts so far printed when a signal stops it. Reads XLA's texts only through
 * flagcmd_probe_parse (src/cli/flagcmd.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "flagcmd.h"
#include "flagcmd_impl.h"
#include "lhost_catalog.h"
#include "trialcfg.h"

/* The first of XLA's unknown-flag texts in OUT: today "Unknown flag in XLA_FLAGS: --x=1" for
 * one flag and "flags" for more (xla/parse_flags_from_env.cc:224), "flags" for any number
 * before XLA commit b727c5cd (jax <= 0.5.0), "flag(s)" in TensorFlow-era builds. Returns the
 * list after the colon (to the end of its line: *LEN) and sets *SUSPECT when the list may
 * name flags XLA did accept: the older code joined its whole argv vector after tsl's
 * Flags::Parse had compacted it, so the list holds empty entries (a doubled or trailing
 * blank) and whatever tokens the vector still held from before. */
static const char *unknown_list(const char *out, size_t *len, int *suspect) {
  static const char *const heads[] = {
      "Unknown flag in XLA_FLAGS:", "Unknown flags in XLA_FLAGS:", "Unknown flag(s) in XLA_FLAGS:"};
  const char *p = NULL;
  int which = -1;
  for (int k = 0; k < 3; k++) {
    const char *q = strstr(out, heads[k]);
    if (q && (!p || q < p)) p = q, which = k;
  }
  if (!p) return NULL;
  p = strchr(p, ':') + 1;
  *len = strcspn(p, "\n");
  size_t body = *len;
  if (body > 0 && p[body - 1] == '\r') body--;
  int empty_entry = body > 1 && p[body - 1] == ' ';
  for (size_t k = 2; k < body && !empty_entry; k++) empty_entry = p[k] == ' ' && p[k - 1] == ' ';
  *suspect = which > 0 && empty_entry;
  return p;
}

/* Whether LIST (LEN bytes) names --NAME as a whole token ("--name" or "--name=..."). */
static int lists_flag(const char *list, size_t len, const char *name) {
  char *tok = xasprintf("--%s", name);
  size_t tl = strlen(tok);
  int found = 0;
  for (const char *q = list; !found && (q = strstr(q, tok)) && q < list + len; q += tl)
    found = q[tl] == '=' || q[tl] == ' ' || q[tl] == '\0' || q[tl] == '\n' || q[tl] == '\r';
  free(tok);
  return found;
}

/* The index in NAMES of the flag that tsl's "Couldn't interpret value V for flag NAME." at P
 * names, or -1. */
static int refused_value_at(const char *p, const char *const *names, int n) {
  const char *f = strstr(p, " for flag ");
  const char *nl = strchr(p, '\n');
  if (!f || (nl && f > nl)) return -1;
  f += strlen(" for flag ");
  for (int i = 0; i < n; i++) {
    size_t l = strlen(names[i]);
    if (strncmp(f, names[i], l) == 0 && (f[l] == '.' || f[l] == '\n' || f[l] == '\0')) return i;
  }
  return -1;
}

/* Whether OUT says XLA could not parse a value: tsl's "Couldn't interpret value V for flag
 * NAME." (naming it: *NAMED set to its index in NAMES, else -1), or only the QCHECK's
 * "Flag parsing failed." that follows it, and that an enum setter's refusal gets alone. */
static int value_refusal(const char *out, const char *const *names, int n, int *named) {
  *named = -1;
  for (const char *p = out; (p = strstr(p, "Couldn't interpret value ")); p++)
    if ((*named = refused_value_at(p, names, n)) >= 0) return 1;
  return strstr(out, "Flag parsing failed.") != NULL;
}

int flagcmd_probe_parse(const char *out, const char *const *names, int n, int *state,
                        int *suspect) {
  int changed = 0, sus = 0;
  size_t len = 0;
  const char *list = out ? unknown_list(out, &len, &sus) : NULL;
  for (int i = 0; list && i < n; i++) {
    if (state[i] != PROBE_ACCEPTED || !lists_flag(list, len, names[i])) continue;
    state[i] = PROBE_UNKNOWN;
    if (suspect) suspect[i] = sus;
    changed++;
  }
  /* tsl's Flags::Parse goes on past a value it cannot parse and logs every one
   * (xla/tsl/util/command_line_flags.cc), so one run can name several. */
  for (const char *p = out; p && (p = strstr(p, "Couldn't interpret value ")); p++) {
    int i = refused_value_at(p, names, n);
    if (i >= 0 && state[i] == PROBE_ACCEPTED) state[i] = PROBE_BAD_VALUE, changed++;
  }
  return changed;
}

/* The probe's state: the flags, their verdicts so far and how each run went. */
typedef struct {
  const fargs *a;
  char **values;  /* per name: the value it is probed with (probe_value) */
  char **tokens;  /* per name: "--name=value" as XLA_FLAGS carries it */
  int *state;     /* PROBE_* per name */
  int *decided;   /* 1 once a run settled it: a refusal, a clean run with it, its lone run */
  int *timed_out; /* 1 when its lone run ran out of time: no verdict */
  int *suspect;   /* refused by a list that may be over-inclusive: to confirm alone */
  int runs;
} probe_ctx;

/* How one run of the command ended. */
enum { RUN_FAILED = 0, RUN_CLEAN = 1, RUN_ERROR = -1, RUN_TIMEOUT = -2, RUN_SIGNAL = -3 };

/* SIGINT or SIGTERM, once one arrived: the probe stops its run and prints what it knows. A
 * second one ends the process at once (as a sweep's does). */
static volatile sig_atomic_t probe_signal;

static void on_probe_signal(int sig) {
  if (probe_signal) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  probe_signal = sig;
}

static void probe_catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_probe_signal; /* no SA_RESTART: poll() returns at once */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Ends the process group PID leads (the run's shell and all it started): SIGTERM, SIGKILL
 * after a second, and reaps PID. */
static void stop_group(pid_t pid) {
  kill(-pid, SIGTERM);
  for (int i = 0; i < 20; i++) {
    if (waitpid(pid, NULL, WNOHANG) == pid) {
      kill(-pid, SIGKILL); /* what the leader left behind */
      return;
    }
    usleep(50000);
  }
  kill(-pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

/* Runs the command through /bin/sh in a process group of its own, with XLA_FLAGS=FLAGS, stdin
 * from /dev/null, stdout and stderr together into *OUT (new string, NULL unless it ended by
 * itself). Stops it after --timeout seconds (RUN_TIMEOUT) or when SIGINT/SIGTERM arrives
 * (RUN_SIGNAL); else RUN_CLEAN when it exited 0, RUN_FAILED otherwise, RUN_ERROR when it
 * could not start (ERR set). */
static int probe_exec(const probe_ctx *p, const char *flags, char **out, char **err) {
  *out = NULL;
  if (probe_signal) return RUN_SIGNAL;
  int fds[2];
  if (pipe(fds) != 0) return diag_set(err, FT_ESYS, "pipe: %s", strerror(errno)), RUN_ERROR;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return diag_set(err, FT_ESYS, "cannot run %s: %s", p->a->command, strerror(errno)), RUN_ERROR;
  }
  if (pid == 0) {
    signal(SIGINT, SIG_DFL); /* a stop sent to the group before the exec ends it, too */
    signal(SIGTERM, SIG_DFL);
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    setenv("XLA_FLAGS", flags, 1);
    execl("/bin/sh", "sh", "-c", p->a->command, (char *)NULL);
    _exit(127);
  }
  setpgid(pid, pid); /* either side may get there first */
  close(fds[1]);
  size_t cap = 8192, n = 0;
  char *buf = xmalloc(cap);
  double deadline = now_s() + p->a->timeout;
  int how = 0, status = 0;
  for (;;) {
    if (probe_signal) {
      how = RUN_SIGNAL;
      break;
    }
    double left = deadline - now_s();
    if (left <= 0) {
      how = RUN_TIMEOUT;
      break;
    }
    struct pollfd pf = {.fd = fds[0], .events = POLLIN};
    int r = poll(&pf, 1, left > 0.2 ? 200 : (int)(left * 1000) + 1);
    if (r <= 0) continue; /* EINTR or no output yet: look at the signal and the clock */
    if (n + 4096 > cap) buf = xrealloc(buf, cap *= 2);
    ssize_t k = read(fds[0], buf + n, cap - n - 1);
    if (k > 0)
      n += (size_t)k;
    else if (k == 0 || errno != EINTR)
      break; /* end of output */
  }
  close(fds[0]);
  buf[n] = '\0';
  /* Its output ended; the shell may still be on its way out (or hanging with its output
   * closed): wait for it under the same clock. */
  while (!how) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (probe_signal)
      how = RUN_SIGNAL;
    else if (now_s() >= deadline)
      how = RUN_TIMEOUT;
    else
      usleep(20000);
  }
  if (how) {
    stop_group(pid);
    free(buf);
    return how;
  }
  kill(-pid, SIGKILL); /* anything it left running in its group */
  *out = buf;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? RUN_CLEAN : RUN_FAILED;
}

/* XLA_FLAGS holding, as --name=value, every NAME still accepted whose IN is set (IN NULL:
 * every one), but for those whose lone run ran out of time (no verdict, likely the hang). */
static char *probe_flags(const probe_ctx *p, const int *in) {
  size_t cap = 256, len = 0;
  char *flags = xmalloc(cap);
  flags[0] = '\0';
  for (int i = 0; i < p->a->n_names; i++) {
    if (p->state[i] != PROBE_ACCEPTED || p->timed_out[i] || (in && !in[i])) continue;
    const char *tok = p->tokens[i];
    size_t tl = strlen(tok);
    if (len + tl + 2 > cap) flags = xrealloc(flags, cap = (len + tl + 2) * 2);
    if (len) flags[len++] = ' ';
    memcpy(flags + len, tok, tl + 1);
    len += tl;
  }
  return flags;
}

/* One progress line on stderr (not with -q): run K, its flags, what it taught, its time. */
static void probe_note(const probe_ctx *p, int k, const char *what, double t0) {
  diag_note("flags probe: run %d: %d flag%s: %s (%.1f s)", p->runs, k, k == 1 ? "" : "s", what,
            now_s() - t0);
}

/* What a run taught, for the progress line: C names refused, RC how it ended. */
static char *run_summary(const probe_ctx *p, int rc, int unknown, int values) {
  if (rc == RUN_TIMEOUT)
    return xasprintf("timed out after %g s, no verdict (--timeout)", p->a->timeout);
  if (rc == RUN_SIGNAL) return xstrdup("stopped by a signal, no verdict");
  if (unknown || values)
    return xasprintf("%d refused as unknown, %d with a value refused", unknown, values);
  return xstrdup(rc == RUN_CLEAN ? "clean" : "failed without naming a flag");
}

/* One run with the flags still accepted whose IN is set (IN NULL: all of them; NONE: no flag
 * at all). Reads what its output names into the state (unless it timed out or was stopped);
 * when it ran clean and named nothing, its flags are settled as accepted. *CHANGED (may be
 * NULL) gets how many it named. Returns RUN_*. */
static int probe_run(probe_ctx *p, const int *in, int none, int *changed, char **err) {
  int n = p->a->n_names, k = 0;
  int *inc = xcalloc((size_t)n + 1, sizeof *inc);
  for (int i = 0; i < n && !none; i++)
    if (p->state[i] == PROBE_ACCEPTED && !p->timed_out[i] && (!in || in[i])) inc[i] = 1, k++;
  char *flags = none ? xstrdup("") : probe_flags(p, in);
  char *out = NULL;
  double t0 = now_s();
  p->runs++;
  int rc = probe_exec(p, flags, &out, err), c = 0, values = 0;
  free(flags);
  if (out) {
    c = flagcmd_probe_parse(out, p->a->names, n, p->state, p->suspect);
    for (int i = 0; i < n; i++) {
      if (inc[i] && p->state[i] != PROBE_ACCEPTED) p->decided[i] = 1;
      values += inc[i] && p->state[i] == PROBE_BAD_VALUE;
      if (rc == RUN_CLEAN && c == 0 && inc[i]) p->decided[i] = 1;
    }
  }
  if (rc != RUN_ERROR) {
    char *what = run_summary(p, rc, c - values, values);
    probe_note(p, k, what, t0);
    free(what);
  }
  free(out);
  free(inc);
  if (changed) *changed = c;
  return rc;
}

/* Runs flag I alone and takes what that run says as the answer for it: a lone flag cannot
 * be listed for another's sake, and a lone failure with "Flag parsing failed." is its value.
 * A lone run that times out leaves it undecided. 0, or RUN_ERROR / RUN_SIGNAL. */
static int probe_alone(probe_ctx *p, int i, char **err) {
  int *in = xcalloc((size_t)p->a->n_names, sizeof *in), st[1] = {PROBE_ACCEPTED}, named;
  in[i] = 1;
  char *flags = probe_flags(p, in), *out = NULL;
  free(in);
  double t0 = now_s();
  p->runs++;
  int rc = probe_exec(p, flags, &out, err);
  free(flags);
  if (rc == RUN_ERROR) return RUN_ERROR;
  if (out) {
    const char *one[1] = {p->a->names[i]};
    flagcmd_probe_parse(out, one, 1, st, NULL);
    if (st[0] == PROBE_ACCEPTED && rc == RUN_FAILED && value_refusal(out, one, 1, &named))
      st[0] = PROBE_BAD_VALUE;
    p->state[i] = st[0];
    p->decided[i] = 1;
  } else if (rc == RUN_TIMEOUT) {
    p->timed_out[i] = 1;
  }
  char *how = out ? xstrdup(st[0] == PROBE_UNKNOWN     ? "refused as unknown"
                            : st[0] == PROBE_BAD_VALUE ? "value refused"
                                                       : "accepted")
                  : run_summary(p, rc, 0, 0);
  char *what = xasprintf("%s: %s", p->a->names[i], how);
  probe_note(p, 1, what, t0);
  free(how), free(what);
  free(out);
  return rc == RUN_SIGNAL ? RUN_SIGNAL : 0;
}

/* Confirms, one flag at a time, the refusals read from a list that may be over-inclusive.
 * Returns how many turned out accepted, or RUN_ERROR / RUN_SIGNAL. */
static int probe_confirm(probe_ctx *p, char **err) {
  int cleared = 0;
  for (int i = 0; i < p->a->n_names; i++) {
    if (p->state[i] != PROBE_UNKNOWN || !p->suspect[i]) continue;
    p->suspect[i] = 0;
    p->state[i] = PROBE_ACCEPTED;
    p->decided[i] = 0;
    int rc = probe_alone(p, i, err);
    if (rc < 0) return rc;
    cleared += p->state[i] == PROBE_ACCEPTED;
  }
  return cleared;
}

/* Settles the K flags IDX names (still accepted, but their run together failed without
 * naming why, as a list setter's refusal does, or ran out of time) by halves: a half that
 * runs clean is accepted, a half that names flags is run again without them, a failing half
 * is split, and a lone flag is decided alone. About 2 log2(K) runs per culprit instead of K
 * runs. FAILED: the caller's last run had just these flags and failed naming none, so the
 * first split needs no run of its own. 0, or RUN_ERROR / RUN_SIGNAL. */
static int probe_split(probe_ctx *p, const int *idx, int k, int failed, char **err) {
  if (k == 1) return probe_alone(p, idx[0], err);
  int n = p->a->n_names, *in = xcalloc((size_t)n, sizeof *in), rc = 0;
  for (;;) {
    int left = 0, changed = 0;
    for (int j = 0; j < k; j++) left += p->state[idx[j]] == PROBE_ACCEPTED, in[idx[j]] = 1;
    if (left == 0) break;
    int clean = failed ? RUN_FAILED : probe_run(p, in, 0, &changed, err);
    failed = 0;
    if (clean == RUN_ERROR || clean == RUN_SIGNAL) {
      rc = clean;
      break;
    }
    int cleared = probe_confirm(p, err);
    if (cleared < 0) {
      rc = cleared;
      break;
    }
    if (clean == RUN_CLEAN && changed == 0) break;
    if (changed > 0) continue;
    /* Failed (or timed out) without naming a flag: split what is left. */
    int *rest = xcalloc((size_t)k, sizeof *rest), m = 0;
    for (int j = 0; j < k; j++)
      if (p->state[idx[j]] == PROBE_ACCEPTED) rest[m++] = idx[j];
    if (m == 1) rc = probe_alone(p, rest[0], err);
    if (m > 1) {
      rc = probe_split(p, rest, m / 2, 0, err);
      if (rc == 0) rc = probe_split(p, rest + m / 2, m - m / 2, 0, err);
    }
    free(rest);
    break;
  }
  free(in);
  return rc;
}

/* The probe itself: first the command alone (when it fails without flags, no verdict can be
 * read and none is tried), then all flags at once, again without the refused ones until a
 * run names nothing new (an older jaxlib's malformed value hides unknown flags, so a run
 * that refused something does not count as clean); refusals from a suspect list are
 * confirmed one by one; if the last run still failed (or ran out of time), the flags still
 * undecided are settled by halves, and the survivors run together once more. Returns
 * RUN_CLEAN, RUN_FAILED (still failing), 2 (failing with no flags at all), 3 (no flags and
 * out of time), RUN_ERROR or RUN_SIGNAL. */
static int probe_all(probe_ctx *p, char **err) {
  int clean = probe_run(p, NULL, 1, NULL, err);
  if (clean == RUN_TIMEOUT) return 3;
  if (clean == RUN_FAILED) return 2;
  if (clean < 0) return clean;
  int quiet_failure = 0; /* the last run failed naming nothing, with the flags still open */
  for (int round = 0; round <= p->a->n_names; round++) {
    int changed = 0;
    clean = probe_run(p, NULL, 0, &changed, err);
    if (clean == RUN_ERROR || clean == RUN_SIGNAL) return clean;
    int cleared = probe_confirm(p, err);
    if (cleared < 0) return cleared;
    quiet_failure = clean != RUN_CLEAN && changed == 0 && cleared == 0;
    if (changed == 0 && cleared == 0) break;
    clean = RUN_FAILED;
  }
  if (clean == RUN_CLEAN) return RUN_CLEAN;
  int n = p->a->n_names, *idx = xcalloc((size_t)n + 1, sizeof *idx), k = 0;
  for (int i = 0; i < n; i++)
    if (p->state[i] == PROBE_ACCEPTED) idx[k++] = i;
  int rc = k > 0 ? probe_split(p, idx, k, quiet_failure, err) : 0;
  free(idx);
  if (rc < 0) return rc;
  clean = probe_run(p, NULL, 0, NULL, err); /* the verdicts together: a clean run? */
  return clean == RUN_TIMEOUT ? RUN_FAILED : clean;
}

/* Prints each flag's verdict and the count line of a probe that ran to CLEAN (RUN_CLEAN,
 * RUN_FAILED or RUN_SIGNAL); returns the exit status: 0 every flag decided on a clean run,
 * 1 otherwise, 128 + the signal when interrupted. */
static int probe_report(const probe_ctx *p, int clean) {
  int n = p->a->n_names, partial = clean == RUN_SIGNAL, n_refused = 0, n_values = 0, n_open = 0;
  for (int i = 0; i < n; i++) {
    if (p->state[i] == PROBE_BAD_VALUE) {
      printf("%-60s VALUE REFUSED (this XLA cannot parse '%s')\n", p->a->names[i], p->values[i]);
    } else if (p->state[i] == PROBE_UNKNOWN) {
      printf("%-60s REFUSED (unknown to this XLA)\n", p->a->names[i]);
    } else if (p->timed_out[i] && !p->decided[i]) {
      printf("%-60s undecided (its run timed out after %g s)\n", p->a->names[i], p->a->timeout);
    } else if (partial && !p->decided[i]) {
      printf("%-60s undecided\n", p->a->names[i]);
    } else {
      printf("%-60s accepted\n", p->a->names[i]);
    }
    n_refused += p->state[i] == PROBE_UNKNOWN;
    n_values += p->state[i] == PROBE_BAD_VALUE;
    n_open += p->state[i] == PROBE_ACCEPTED && !p->decided[i] && (partial || p->timed_out[i]);
  }
  if (clean == RUN_FAILED)
    diag_warn(
        "the probe command failed even without the refused flags: 'accepted' means only "
        "that XLA did not name them");
  printf("%s%d of %d refused", partial ? "partial: " : "", n_refused, n);
  if (n_values) printf(", %d known with a value refused", n_values);
  if (n_open) printf(", %d undecided", n_open);
  printf("\n");
  if (partial) {
    char *msg = xasprintf(
        "flags probe: interrupted by %s after %d runs: the verdicts above are partial "
        "('undecided': not settled yet)",
        probe_signal == SIGINT ? "SIGINT" : "SIGTERM", p->runs);
    diag_error(msg);
    free(msg);
    return 128 + probe_signal;
  }
  return clean == RUN_CLEAN && n_open == 0 ? 0 : 1;
}

int flagcmd_probe(fargs *a) {
  if (!a->command || (a->n_names == 0) == !a->catalog) {
    diag_error(a->command && a->catalog
                   ? "flags probe: give NAMEs or --catalog, not both"
                   : "usage: flagtune flags probe --command \"CMD\" (NAME... | --catalog)");
    return 2;
  }
  lcatalog *c = NULL;
  char *err = NULL;
  if (lcatalog_open(&c, &err) != 0) return diag_error(err), free(err), 1;
  probe_ctx p = {.a = a};
  char **owned = NULL;
  int n_owned = 0;
  if (a->catalog) {
    owned = lcatalog_flags(c, &n_owned);
    a->names = (const char **)owned;
    a->n_names = n_owned;
  }
  int n = a->n_names;
  p.values = xcalloc((size_t)n + 1, sizeof *p.values);
  p.tokens = xcalloc((size_t)n + 1, sizeof *p.tokens);
  for (int i = 0; i < n; i++) {
    p.values[i] = lcatalog_probe_value(c, a->names[i]);
    p.tokens[i] = trialcfg_flag_token(a->names[i], p.values[i]);
  }
  p.state = xcalloc((size_t)n, sizeof *p.state);
  p.decided = xcalloc((size_t)n, sizeof *p.decided);
  p.timed_out = xcalloc((size_t)n, sizeof *p.timed_out);
  p.suspect = xcalloc((size_t)n, sizeof *p.suspect);
  probe_catch_signals();
  int clean = probe_all(&p, &err), rc = 0;
  if (clean == 2)
    err = xasprintf(
        "flags probe: the command fails with XLA_FLAGS empty, so no flag can be judged: run "
        "it by hand (%s) and fix it first",
        a->command);
  if (clean == 3)
    err = xasprintf(
        "flags probe: the command ran out of time (--timeout %g) with XLA_FLAGS empty, so no "
        "flag can be judged: run it by hand (%s), or give a longer --timeout",
        a->timeout, a->command);
  if (clean == RUN_ERROR || clean == 2 || clean == 3) {
    diag_error(err);
    rc = 1;
  } else {
    rc = probe_report(&p, clean);
  }
  fflush(stdout);
  free(err);
  free(p.state), free(p.decided), free(p.timed_out), free(p.suspect);
  for (int i = 0; i < n; i++) free(p.values[i]), free(p.tokens[i]);
  free(p.values), free(p.tokens);
  for (int i = 0; i < n_owned; i++) free(owned[i]);
  free(owned);
  if (a->catalog) a->names = NULL, a->n_names = 0;
  lcatalog_free(c);
  return rc;
}
