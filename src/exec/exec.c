/* The local executor (executor.h's interface for this machine): one trial = one child
 * process on the caller's libuv loop. Owns the child's lifetime (spawn as its own process
 * group, SIGTERM then SIGKILL to the group), its output (two pipes cut into bounded lines, a
 * capped raw log) and the moment the trial is over.
 * It must not interpret output (classification and step parsing live elsewhere) and must not
 * touch the store: it reports only through the callbacks it was given. It also ends the
 * orphans a dead orchestrator left (exec_reap), since only it knows what a trial's pid means.
 *
 * A trial ends when every handle it owns is closed (a refcount, as neovim's proc.c): the
 * process handle after its exit callback, the two pipes after EOF (or after a drain delay, so
 * that a grandchild holding stdout cannot hang us), and the three timers last.
 *
 * Under a supervisor (spec.supervisor, see supervise.h) the process we spawn is the supervisor,
 * which leads the group, mirrors the command's end and ends whatever the command left behind.
 * Its report of a command that could not start is its first stderr line: that line is held
 * back until the exit status shows whether it was the supervisor's (exit 127/126: a spawn
 * error, no line delivered) or the command's own (delivered as usual, before the next line).
 * Its other reports (the command's own duration, whether a stop had reached it, how many
 * leftovers it killed) come on a third pipe, its fd 3, which the command never sees. A
 * supervised trial is started through the fork server where one runs (exec_server.c, the
 * client; exec_impl.h is what the two files share).
 *
 * Time: a trial is a timeout only if the command itself ran into its limit. When the
 * orchestrator was paused (SIGSTOP, Ctrl-Z, a frozen VM), the timeout timer may fire on the
 * first loop turn after the pause, before the exit that happened meanwhile is processed; so
 * the timer first looks whether the process is already a zombie, and the supervisor's report
 * that the command ended before any stop reached it clears a timeout that came late.
 *
 * The log is not the result: a log that cannot be opened or written leaves the trial running
 * without it, and exec_result.log_error says what happened. */
#define _GNU_SOURCE /* pipe2, POSIX_SPAWN_SETSID */
#include "exec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "exec_impl.h"
#include "exec_log.h"
#include "lines.h"
#include "procstat.h"

static void on_handle_closed(uv_handle_t *h);

static uint64_t seconds_to_ms(double s) {
  return s <= 0 ? 0 : (uint64_t)(s * 1000.0 + 0.5);
}

/* ---- log ---------------------------------------------------------------------------------- */

static void log_raw(exec_trial *t, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(t->log_fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) { /* a full disk must not stop the trial; the log just ends, and says so */
      snprintf(t->res.log_error, sizeof t->res.log_error,
               "flagtune: trial log incomplete: writing %s failed after %lld bytes: %s",
               t->log_path, (long long)t->log_written, w < 0 ? strerror(errno) : "no progress");
      t->log_capped = 1;
      return;
    }
    p += w;
    n -= (size_t)w;
  }
}

/* Appends a chunk of output to the log, and the truncation marker once the cap is reached. */
static void log_append(exec_trial *t, const char *p, size_t n) {
  if (t->log_fd < 0 || t->log_capped || n == 0) return;
  int64_t room = t->log_limit - t->log_written;
  size_t take = (int64_t)n < room ? n : (size_t)room;
  log_raw(t, p, take);
  t->log_written += (int64_t)take;
  if (take > 0) t->log_at_bol = p[take - 1] == '\n';
  if (take == n || t->log_capped) return;
  char mark[96];
  int len = snprintf(mark, sizeof mark, "%s[flagtune: log truncated at %lld bytes]\n",
                     t->log_at_bol ? "" : "\n", (long long)t->log_limit);
  log_raw(t, mark, (size_t)len);
  t->log_capped = 1;
}

/* Opens the log. One that cannot be opened (a removed directory, a full disk, a link planted
 * in its place) is no reason to lose the trial: it runs without a log and the result says
 * so. */
static void log_open(exec_trial *t, const exec_spec *spec, exec_log_spare *spare) {
  t->log_fd = -1;
  t->log_at_bol = 1;
  t->log_limit = spec->log_limit > 0 ? spec->log_limit : EXEC_DEFAULT_LOG_LIMIT;
  if (!spec->log_path) return;
  t->log_path = xstrdup(spec->log_path);
  char why[200];
  t->log_fd = exec_log_open(spec->log_path, spare, why, sizeof why);
  if (t->log_fd < 0)
    snprintf(t->res.log_error, sizeof t->res.log_error,
             "flagtune: trial log not written: cannot open %s: %s", spec->log_path, why);
}

/* ---- signals and teardown ----------------------------------------------------------------- */

/* Signals the whole group. Once the leader is reaped and our pipes are closed, nothing of the
 * trial is left to signal and the id could, in principle, name a stranger's group by now. */
static void signal_group(exec_trial *t, int sig) {
  if (t->pid <= 0 || t->srv_ended) return; /* its supervisor may be serving another trial */
  if (t->exited && !t->out.open && !t->err.open) return;
  if (kill(-t->pid, sig) != 0 && errno != ESRCH)
    diag_warn("kill(-%d): %s", t->pid, strerror(errno));
}

/* Every handle's data points at its trial, except the pipes' (reads need to know which
 * stream); on_handle_closed looks through a pipe to its trial. */
static void close_handle(uv_handle_t *h) {
  if (!uv_is_closing(h)) uv_close(h, on_handle_closed);
}

/* The last step of a trial: once the process is gone and both pipes are closed, nothing
 * can happen any more, so the timers go too. Their close callbacks end the trial. */
static void maybe_close_timers(exec_trial *t) {
  if (!t->exited || t->out.open || t->err.open || t->rep.open || t->timers_closed) return;
  t->timers_closed = 1;
  close_handle((uv_handle_t *)&t->timeout_timer);
  close_handle((uv_handle_t *)&t->grace_timer);
  close_handle((uv_handle_t *)&t->drain_timer);
  close_handle((uv_handle_t *)&t->quiet_timer);
  if (t->srv) close_handle((uv_handle_t *)&t->exit_timer);
}

/* ---- the supervisor's spawn report -------------------------------------------------------- */

static const char *const spawn_prefixes[] = {
    "command not found: ", "permission denied: ", "cannot start "};

static int spawn_report_kind(const char *line, size_t len) {
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(spawn_prefixes[i]);
    if (len > n && len < sizeof(((exec_result *)0)->spawn_message) &&
        memcmp(line, spawn_prefixes[i], n) == 0 && !memchr(line, '\0', len))
      return i + 1;
  }
  return 0;
}

/* Delivers the held first stderr line: it was the command's own after all. */
static void flush_held(exec_trial *t) {
  if (!t->held) return;
  char *line = t->held;
  t->held = NULL;
  if (t->cb.on_line) t->cb.on_line(t->ud, EXEC_STDERR, line, t->held_len, 0);
  free(line);
}

/* Once the supervisor has exited and its stderr is closed: exit 127/126 after a held report
 * means the command never started. */
static void settle_held(exec_trial *t) {
  if (!t->held || !t->exited || t->err.open) return;
  int kind = spawn_report_kind(t->held, t->held_len);
  if (t->res.term_signal == 0 && (t->res.exit_status == 127 || t->res.exit_status == 126)) {
    t->res.spawn_error = kind == 1 ? UV_ENOENT : kind == 2 ? UV_EACCES : UV_EINVAL;
    t->res.exit_status = 127;
    snprintf(t->res.spawn_message, sizeof t->res.spawn_message, "%s", t->held);
    free(t->held);
    t->held = NULL;
    return;
  }
  flush_held(t);
}

/* One line of the supervisor's report (supervise.h): "cgroup DIR" (the command's, once it
 * runs), "exit SECONDS STOPPED", "killed N", "end STATUS". A served trial ends at "end": nothing of
 * it is left, and the fork server's record of its supervisor's exit (after the cgroup's removal)
 * would only come later; that record, or this line, whichever comes second, finds the trial no
 * longer live (exec_served_end). */
static void take_report(exec_trial *t, const char *line) {
  double wall = 0;
  int stopped = 0, killed = 0, status = 0;
  if (sscanf(line, "exit %lf %d", &wall, &stopped) == 2 && wall >= 0) {
    t->rep_exit = 1;
    t->rep_wall_s = wall;
    t->rep_stopped = stopped != 0;
  } else if (sscanf(line, "killed %d", &killed) == 1) {
    t->contained = 1;
    if (killed > 0) t->res.leftovers = killed;
  } else if (strncmp(line, "cgroup /", 8) == 0 && !t->cgroup) {
    t->cgroup = xstrdup(line + 7);
  } else if (sscanf(line, "end %d", &status) == 1 && t->srv) {
    exec_served_end(t->srv, t, status, 1);
  }
}

static void deliver_line(void *ud, const char *line, size_t len, int truncated) {
  exec_stream *s = ud;
  exec_trial *t = s->t;
  s->shown = 0;
  if (s->id == EXEC_REPORT) {
    if (!truncated) take_report(t, line);
    return;
  }
  if (s->id == EXEC_STDERR && t->supervised) {
    if (t->err_lines++ == 0 && !truncated && spawn_report_kind(line, len)) {
      t->held = xstrndup(line, len);
      t->held_len = len;
      return;
    }
    flush_held(t);
  }
  if (t->cb.on_line) t->cb.on_line(t->ud, s->id, line, len, truncated);
}

/* Stops reading a stream for good: its last partial line goes out, then the pipe closes. */
static void stream_close(exec_stream *s) {
  if (!s->open) return;
  s->open = 0;
  uv_read_stop((uv_stream_t *)&s->pipe);
  lines_finish(&s->lb, deliver_line, s);
  close_handle((uv_handle_t *)&s->pipe);
  settle_held(s->t);
  maybe_close_timers(s->t);
}

/* What the supervisor knew better than the loop: the command's own duration, and that it
 * ended before any stop reached it (a timer that fired late, after a pause, is no timeout). */
static void apply_report(exec_trial *t) {
  if (!t->rep_exit || t->res.spawn_error) return;
  t->res.wall_s = t->rep_wall_s;
  if (t->res.stopped == EXEC_STOP_TIMEOUT && !t->rep_stopped) t->res.stopped = EXEC_STOP_NONE;
}

/* A supervisor that died before it ended the command's leftovers (the trial SIGKILLed it, or
 * our backstop did) cannot end them: so what it would have ended is ended here, the trial's
 * cgroup at once (cgroup.kill, atomic against forks) and its process group, which outlives
 * its dead leader while a member lives. A process that left both (setsid() where no cgroup
 * could be made) is out of reach. The cgroup itself is removed by the next supervisor (a
 * stale one, its pid gone). */
static void contain_after_supervisor(exec_trial *t) {
  /* Only a supervisor ended by a signal: one that exited did its cleanup or had nothing to
   * clean (its command could not start). */
  if (!t->supervised || t->contained || t->srv_ended || t->pid <= 0 || t->res.term_signal == 0)
    return;
  if (t->cgroup) {
    char *path = xasprintf("%s/cgroup.kill", t->cgroup);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      if (write(fd, "1", 1) != 1 && errno != ENOENT)
        diag_warn("cannot end the trial's cgroup %s: %s", t->cgroup, strerror(errno));
      close(fd);
    }
    free(path);
  }
  if (kill(-t->pid, SIGKILL) != 0 && errno != ESRCH)
    diag_warn("kill(-%d): %s", t->pid, strerror(errno));
}

static void finish(exec_trial *t) {
  contain_after_supervisor(t);
  if (t->log_fd >= 0) close(t->log_fd);
  t->log_fd = -1;
  apply_report(t);
  exec_server *srv = t->srv;
  if (t->cb.on_exit) t->cb.on_exit(t->ud, &t->res);
  /* Served: when the callback started no trial of the server's, nothing is left to hear and
   * the poll goes, so that the loop can end; when it did (at parallel 1, every trial but the
   * last) it stays: closing and opening it again cost 5 epoll_ctl and an ioctl a trial. */
  if (srv && srv->n_live == 0) exec_server_unpoll(srv);
  lines_free(&t->out.lb);
  lines_free(&t->err.lb);
  lines_free(&t->rep.lb);
  free(t->held);
  free(t->file);
  free(t->log_path);
  free(t->cgroup);
  free(t);
}

static void on_handle_closed(uv_handle_t *h) {
  exec_trial *t = h->data;
  if (h->type == UV_NAMED_PIPE) t = ((exec_stream *)h->data)->t;
  if (--t->refs == 0) finish(t);
}

/* ---- timers ------------------------------------------------------------------------------- */

static void on_grace(uv_timer_t *timer) {
  exec_trial *t = timer->data;
  signal_group(t, SIGKILL);
}

/* SIGTERM now and SIGKILL after the grace; a second call changes nothing. Under the
 * supervisor the SIGKILL after the grace is the supervisor's own (it reaches the processes
 * that left the group too); ours comes later, only if the supervisor hangs. */
static void terminate(exec_trial *t) {
  if (t->term_sent || t->exited) return;
  t->term_sent = 1;
  signal_group(t, SIGTERM);
  uv_timer_start(&t->grace_timer, on_grace, t->grace_ms + (t->supervised ? EXEC_BACKSTOP_MS : 0),
                 0);
}

/* Whether process PID has exited and waits to be reaped (state Z in /proc/PID/stat). */
static int is_zombie(int pid) {
  procstat st;
  return procstat_read(pid, &st) == 0 && st.state == 'Z';
}

/* Timers run before the loop looks at exits: after a pause of the orchestrator, this can be
 * the first callback of a turn whose exit callback is already due. A process that has
 * already exited was not stopped by its timeout. */
static void on_timeout(uv_timer_t *timer) {
  exec_trial *t = timer->data;
  if (t->pid > 0 && is_zombie(t->pid)) return;
  if (t->res.stopped == EXEC_STOP_NONE) t->res.stopped = EXEC_STOP_TIMEOUT;
  terminate(t);
}

/* The child is gone but something (a grandchild, or one that left with setsid) still holds
 * our pipes. Kill what is left of the group and stop listening. */
static void on_drain(uv_timer_t *timer) {
  exec_trial *t = timer->data;
  signal_group(t, SIGKILL);
  stream_close(&t->out);
  stream_close(&t->err);
  stream_close(&t->rep);
}

/* ---- process and pipes -------------------------------------------------------------------- */

/* The process we watch (the command, or its supervisor) has ended. */
static void process_ended(exec_trial *t, int64_t exit_status, int term_signal) {
  t->res.exit_status = exit_status;
  t->res.term_signal = term_signal;
  t->res.wall_s = (double)(uv_hrtime() - t->started_ns) / 1e9;
  t->exited = 1;
  uv_timer_stop(&t->timeout_timer);
  uv_timer_stop(&t->grace_timer);
  settle_held(t);
  if (t->out.open || t->err.open || t->rep.open)
    uv_timer_start(&t->drain_timer, on_drain, EXEC_DRAIN_MS, 0);
  maybe_close_timers(t);
}

static void on_proc_exit(uv_process_t *proc, int64_t exit_status, int term_signal) {
  exec_trial *t = proc->data;
  close_handle((uv_handle_t *)proc);
  process_ended(t, exit_status, term_signal);
}

/* The fork server's exit record, on a loop turn of its own (never inside exec_start). The
 * process handle we do not have counted as one reference: it goes now. */
static void on_served_exit(uv_timer_t *timer) {
  exec_trial *t = timer->data;
  int st = t->srv_status;
  if (WIFSIGNALED(st))
    process_ended(t, 0, WTERMSIG(st));
  else
    process_ended(t, WIFEXITED(st) ? WEXITSTATUS(st) : 1, 0);
  if (--t->refs == 0) finish(t);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  exec_stream *s = h->data;
  (void)suggested;
  *buf = uv_buf_init(s->t->rbuf, sizeof s->t->rbuf);
}

/* A partial line the streams left quiet: given to on_partial once per length, so that a fatal
 * text printed without a newline before a hang is seen now, not at the timeout. */
static void on_quiet(uv_timer_t *timer) {
  exec_trial *t = timer->data;
  exec_stream *streams[2] = {&t->out, &t->err};
  for (int i = 0; i < 2 && t->cb.on_partial; i++) {
    size_t len;
    const char *line = streams[i]->open ? lines_pending(&streams[i]->lb, &len) : NULL;
    if (!line || len == streams[i]->shown) continue;
    streams[i]->shown = len;
    t->cb.on_partial(t->ud, streams[i]->id, line, len);
  }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
  exec_stream *s = stream->data;
  if (nread > 0) {
    if (s->id != EXEC_REPORT) log_append(s->t, buf->base, (size_t)nread);
    lines_feed(&s->lb, buf->base, (size_t)nread, deliver_line, s);
    size_t len;
    if (s->id != EXEC_REPORT && s->t->cb.on_partial && !s->t->timers_closed &&
        lines_pending(&s->lb, &len))
      uv_timer_start(&s->t->quiet_timer, on_quiet, EXEC_QUIET_MS, 0);
  } else if (nread < 0) {
    stream_close(s); /* EOF, or an error that ends the stream all the same */
  }
}

static void stream_init(exec_trial *t, exec_stream *s, int id, size_t max_line) {
  s->t = t;
  s->id = id;
  s->open = 1;
  uv_pipe_init(t->loop, &s->pipe, 0);
  s->pipe.data = s;
  lines_init(&s->lb, max_line);
  t->refs++;
}

static void exec_timer_init(exec_trial *t, uv_timer_t *timer) {
  uv_timer_init(t->loop, timer);
  timer->data = t;
  t->refs++;
}

/* ---- spawn -------------------------------------------------------------------------------- */

static void spawn_message(exec_trial *t, int rc) {
  char *m = t->res.spawn_message;
  size_t n = sizeof t->res.spawn_message;
  if (t->supervised)
    snprintf(m, n, "cannot start the trial supervisor for %s: %s", t->file, uv_strerror(rc));
  else if (rc == UV_ENOENT)
    snprintf(m, n, "command not found: %s", t->file);
  else if (rc == UV_EACCES)
    snprintf(m, n, "permission denied: %s", t->file);
  else
    snprintf(m, n, "cannot start %s: %s", t->file, uv_strerror(rc));
}

/* A failed spawn still owns initialised handles; closing them all makes on_exit arrive on
 * the next loop turn through the same refcount as a normal end. */
static void spawn_failed(exec_trial *t, int rc) {
  t->res.spawn_error = rc;
  t->res.exit_status = 127;
  spawn_message(t, rc);
  t->exited = 1;
  close_handle((uv_handle_t *)&t->proc);
  stream_close(&t->out);
  stream_close(&t->err);
  stream_close(&t->rep);
  maybe_close_timers(t);
}

enum { SUP_OWN_ARGS = 9 };

/* SUPERVISOR __supervise --parent PID --grace S --report 3 -- ARGV...; free with
 * free_supervised. */
static char **supervised_argv(const exec_spec *spec, double grace_s) {
  size_t n = 0;
  while (spec->argv[n]) n++;
  char **v = xcalloc(n + SUP_OWN_ARGS + 1, sizeof(char *));
  v[0] = xstrdup(spec->supervisor);
  v[1] = xstrdup("__supervise");
  v[2] = xstrdup("--parent");
  v[3] = xasprintf("%d", (int)getpid());
  v[4] = xstrdup("--grace");
  v[5] = xasprintf("%.3f", grace_s);
  v[6] = xstrdup("--report");
  v[7] = xasprintf("%d", EXEC_REPORT);
  v[8] = xstrdup("--");
  for (size_t i = 0; i < n; i++) v[SUP_OWN_ARGS + i] = spec->argv[i]; /* borrowed */
  return v;
}

static void free_supervised(char **v) {
  if (!v) return;
  for (int i = 0; i < SUP_OWN_ARGS; i++) free(v[i]);
  free(v);
}

static int spawn(exec_trial *t, const exec_spec *spec) {
  uv_process_options_t opt;
  uv_stdio_container_t stdio[4];
  memset(&opt, 0, sizeof opt);
  memset(stdio, 0, sizeof stdio);
  stdio[0].flags = UV_IGNORE; /* libuv opens /dev/null for it */
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *)&t->out.pipe;
  stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[2].data.stream = (uv_stream_t *)&t->err.pipe;
  stdio[3].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[3].data.stream = (uv_stream_t *)&t->rep.pipe;
  char **sup = t->supervised ? supervised_argv(spec, (double)t->grace_ms / 1000.0) : NULL;
  opt.file = sup ? sup[0] : spec->argv[0];
  opt.args = sup ? sup : (char **)spec->argv;
  opt.env = (char **)spec->envp;
  opt.cwd = spec->cwd;
  opt.flags = UV_PROCESS_DETACHED; /* setsid(): the child leads its own process group */
  opt.stdio_count = t->supervised ? 4 : 3;
  opt.stdio = stdio;
  opt.exit_cb = on_proc_exit;
  t->started_ns = uv_hrtime();
  t->proc.data = t;
  t->refs++; /* uv_spawn initialises the handle even when it fails */
  int rc = uv_spawn(t->loop, &t->proc, &opt);
  free_supervised(sup);
  return rc;
}

static int start_streams(exec_trial *t) {
  int rc = uv_read_start((uv_stream_t *)&t->out.pipe, on_alloc, on_read);
  if (rc == 0) rc = uv_read_start((uv_stream_t *)&t->err.pipe, on_alloc, on_read);
  if (rc == 0 && t->rep.open) rc = uv_read_start((uv_stream_t *)&t->rep.pipe, on_alloc, on_read);
  return rc;
}

/* exec_start, through SRV (the local executor's fork server) where it can, its log named from
 * SPARE (may be NULL) where that holds a file. */
static int start_trial(uv_loop_t *loop, const exec_spec *spec, const exec_callbacks *cb, void *ud,
                       exec_trial **out, char **err, exec_server *srv, exec_log_spare *spare) {
  if (out) *out = NULL;
  if (!loop || !spec || !cb || !out || !spec->argv || !spec->argv[0] || !spec->argv[0][0])
    return diag_set(err, FT_EINPUT, "exec_start: missing loop, callbacks or command");
  /* Zeroed but for the 64 KiB read buffer, which a read fills before anything reads it:
   * calloc cleared it at every trial (70 K instructions a trial, docs/COST.md). */
  exec_trial *t = xmalloc(sizeof *t);
  memset(t, 0, offsetof(exec_trial, rbuf));
  log_open(t, spec, spare);
  t->loop = loop;
  t->cb = *cb;
  t->ud = ud;
  t->file = xstrdup(spec->argv[0]);
  t->grace_ms = seconds_to_ms(spec->grace_s > 0 ? spec->grace_s : EXEC_DEFAULT_GRACE_S);
  stream_init(t, &t->out, EXEC_STDOUT, spec->max_line);
  stream_init(t, &t->err, EXEC_STDERR, spec->max_line);
  t->supervised = spec->supervisor != NULL;
  if (t->supervised) stream_init(t, &t->rep, EXEC_REPORT, EXEC_REPORT_LINE);
  exec_timer_init(t, &t->timeout_timer);
  exec_timer_init(t, &t->grace_timer);
  exec_timer_init(t, &t->drain_timer);
  exec_timer_init(t, &t->quiet_timer);
  *out = t;
  int rc = 0;
  if (srv && t->supervised && exec_served_spawn(t, spec, srv) == 0) {
    exec_timer_init(t, &t->exit_timer);
    t->refs++; /* the process, until the server's exit record (on_served_exit) */
  } else {
    rc = spawn(t, spec);
    if (rc != 0) {
      spawn_failed(t, rc);
      return 0;
    }
    t->pid = t->proc.pid;
  }
  rc = start_streams(t);
  if (rc != 0) {
    /* Unwatchable: kill it rather than leave it running, and end through on_exit. */
    diag_warn("cannot read the output of %s: %s", t->file, uv_strerror(rc));
    signal_group(t, SIGKILL);
    stream_close(&t->out);
    stream_close(&t->err);
    stream_close(&t->rep);
  } else if (spec->timeout_s > 0) {
    /* From now, not from the loop's clock of this turn's start: a pause of the orchestrator
     * since then (Ctrl-Z between a trial's log and its start) is not the trial's time. */
    uv_update_time(loop);
    uv_timer_start(&t->timeout_timer, on_timeout, seconds_to_ms(spec->timeout_s), 0);
  }
  /* The next trial's log file, made now that this one is on its way, not in the next turn. */
  if (t->log_fd >= 0) exec_log_spare_make(spare, t->log_path);
  return 0;
}

int exec_start(uv_loop_t *loop, const exec_spec *spec, const exec_callbacks *cb, void *ud,
               exec_trial **out, char **err) {
  return start_trial(loop, spec, cb, ud, out, err, NULL, NULL);
}

/* ---- control ------------------------------------------------------------------------------ */

void exec_stop_trial(exec_trial *t) {
  if (!t || t->exited) return;
  if (t->res.stopped == EXEC_STOP_NONE) t->res.stopped = EXEC_STOP_REQUESTED;
  terminate(t);
}

void exec_kill_trial(exec_trial *t) {
  if (!t) return;
  if (!t->exited && t->res.stopped == EXEC_STOP_NONE) t->res.stopped = EXEC_STOP_REQUESTED;
  if (t->supervised && !t->exited && !t->srv_ended) {
    /* The supervisor kills every descendant at once, those outside the group too; a
     * SIGKILL to the group would end it first and leave those. Ours follows if it hangs. */
    if (kill(t->pid, SIGUSR2) == 0) {
      t->term_sent = 1;
      uv_timer_start(&t->grace_timer, on_grace, EXEC_BACKSTOP_MS, 0);
      return;
    }
  }
  signal_group(t, SIGKILL);
  /* After exit only leftovers hold the pipes: drain now rather than in a second. Done from
   * a zero timer, never inline, because the caller may be inside one of our read callbacks. */
  if (t->exited && !t->timers_closed && (t->out.open || t->err.open))
    uv_timer_start(&t->drain_timer, on_drain, 0, 0);
}

int exec_pid(const exec_trial *t) {
  return t ? t->pid : 0;
}

/* ---- orphans of a dead orchestrator ----------------------------------------------------- */

/* True when process PID carries FLAGTUNE_SWEEP=ID and FLAGTUNE_TRIAL=NUMBER in its
 * environment: proof that it is that trial, not an unrelated process that reused the pid. */
static int is_our_trial(int pid, int64_t id, int number) {
  char path[64], want_sweep[64], want_trial[64];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  snprintf(want_sweep, sizeof want_sweep, "FLAGTUNE_SWEEP=%lld", (long long)id);
  snprintf(want_trial, sizeof want_trial, "FLAGTUNE_TRIAL=%d", number);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char buf[8192], var[128];
  size_t n;
  int seen_sweep = 0, seen_trial = 0, at = 0;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
    for (size_t i = 0; i < n; i++) {
      if (buf[i] != '\0') {
        if (at < (int)sizeof var - 1) var[at++] = buf[i];
        continue;
      }
      var[at] = '\0';
      seen_sweep |= strcmp(var, want_sweep) == 0;
      seen_trial |= strcmp(var, want_trial) == 0;
      at = 0;
    }
  }
  fclose(f);
  return seen_sweep && seen_trial;
}

/* True when a process of group PGID is that trial (is_our_trial). The recorded pid leads the
 * trial's group, but the leader need not carry the trial's environment: a supervisor forked
 * by the fork server has the server's, and a leader killed on its own (the OOM killer) leaves
 * its group behind without one. So the leader is asked first, then every other member. */
static int is_our_group(int pgid, int64_t id, int number) {
  if (is_our_trial(pgid, id, number)) return 1;
  DIR *d = opendir("/proc");
  if (!d) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d)) != NULL) {
    char *end = NULL;
    long pid = strtol(e->d_name, &end, 10);
    procstat st;
    if (*end || pid <= 0 || pid == pgid || procstat_read((pid_t)pid, &st) != 0) continue;
    found = st.pgrp == pgid && is_our_trial((int)pid, id, number);
  }
  closedir(d);
  return found;
}

int exec_reap(int64_t sweep_id, const exec_orphan *o, int n) {
  int killed = 0;
  for (int i = 0; i < n; i++) {
    if (o[i].pid <= 0 || !is_our_group(o[i].pid, sweep_id, o[i].number)) continue;
    diag_note("flagtune: killing trial %d (process group %d) left running by the previous run",
              o[i].number, o[i].pid);
    if (kill(-o[i].pid, SIGKILL) == 0) killed++;
  }
  return killed;
}

/* ---- the executor table ------------------------------------------------------------------ */

typedef struct {
  executor base;
  char *supervisor;
  exec_server srv;     /* used when SUPERVISOR is the dedicated binary */
  exec_log_spare logs; /* the next trial's log file, made ahead */
} local_executor;

static int local_start(executor *x, const exec_spec *spec, const exec_callbacks *cb, void *ud,
                       exec_trial **out, char **err) {
  local_executor *lx = (local_executor *)x;
  exec_spec s = *spec;
  exec_server *srv = !s.supervisor && lx->srv.path ? &lx->srv : NULL;
  if (!s.supervisor) s.supervisor = lx->supervisor;
  return start_trial(x->loop, &s, cb, ud, out, err, srv, &lx->logs);
}

static int local_reap(executor *x, int64_t sweep_id, const exec_orphan *o, int n) {
  (void)x;
  return exec_reap(sweep_id, o, n);
}

static int local_next_pid(executor *x) {
  local_executor *lx = (local_executor *)x;
  return lx->srv.path ? exec_server_take_spare(&lx->srv) : 0;
}

static void local_free(executor *x) {
  local_executor *lx = (local_executor *)x;
  exec_server_close(&lx->srv);
  exec_log_spare_free(&lx->logs);
  free(lx->supervisor);
  free(lx);
}

static const executor_ops local_ops = {
    .name = "local",
    .start = local_start,
    .stop = exec_stop_trial,
    .kill = exec_kill_trial,
    .pid = exec_pid,
    .next_pid = local_next_pid,
    .reap = local_reap,
    .free = local_free,
};

char *exec_supervisor_path(const char *supervisor) {
  if (!supervisor) return NULL;
  char *real = realpath(supervisor, NULL);
  char *slash = real ? strrchr(real, '/') : NULL;
  char *own = NULL;
  if (slash) {
    *slash = '\0';
    own = xasprintf("%s/" EXEC_SUPERVISOR_BIN, real);
    if (access(own, X_OK) != 0) { /* not built or not installed beside it: the full program */
      free(own);
      own = NULL;
    }
  }
  free(real);
  return own ? own : xstrdup(supervisor);
}

executor *exec_local_new(uv_loop_t *loop, const char *supervisor) {
  /* Each trial allocates a few hundred KiB and frees them at its end (its 64 KiB read buffer,
   * its line buffers, SQLite's page cache for the trial's statements). With glibc's default
   * 128 KiB trim threshold the heap's top went back to the kernel at every trial's end (brk
   * shrinking: a TLB flush) and was faulted in again, cleared, at the next start: about 0.8 of
   * the orchestrator's 2.6 ms of CPU a trial on the benchmark VM (docs/COST.md). Up to 8 MiB of
   * free heap is kept instead; peak RSS does not change (the pages were resident anyway). */
  static int tuned;
  if (!tuned++) mallopt(M_TRIM_THRESHOLD, 8 * 1024 * 1024);
  local_executor *lx = xcalloc(1, sizeof *lx);
  lx->base.ops = &local_ops;
  lx->base.loop = loop;
  lx->supervisor = exec_supervisor_path(supervisor);
  lx->srv.loop = loop;
  lx->srv.fd = -1;
  lx->logs = (exec_log_spare)EXEC_LOG_SPARE_INIT;
  lx->srv.on_exit = on_served_exit;
  const char *base = lx->supervisor ? strrchr(lx->supervisor, '/') : NULL;
  if (base && strcmp(base + 1, EXEC_SUPERVISOR_BIN) == 0 && !getenv("FLAGTUNE_NO_FORK_SERVER"))
    lx->srv.path = xstrdup(lx->supervisor);
  return &lx->base;
}
