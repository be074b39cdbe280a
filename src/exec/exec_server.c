/* The local executor's fork-server client (supervise.h): starts the server at the first
 * supervised trial, hands each trial's request with the trial's three pipes to the oldest of
 * the server's spares (its socket came with its announcement) or, when there is none, to the
 * server, waits for the word that the supervisor has it, hears the server's records (a spare,
 * a supervisor's end) on a poll kept between trials, and replaces a server that died or hung
 * (up to EXEC_SERVER_DEATHS times). Split from exec.c, which owns everything else of a trial;
 * this must not touch a trial's pipes once they are open, its timers but the exit timer, or
 * the store. */
#define _GNU_SOURCE /* pipe2, POSIX_SPAWN_SETSID */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "exec_impl.h"
#include "supervise.h"
/* Appends a spare, the newest, to the list (the caller has made room): its pid and request
 * socket, its pid not yet given out. */
static void spare_push(exec_server *srv, pid_t pid, int fd) {
  srv->spares[srv->n_spares].pid = pid;
  srv->spares[srv->n_spares].fd = fd;
  srv->spares[srv->n_spares].told = 0;
  srv->n_spares++;
}

/* Hands a live trial its end: STATUS (a wait status) on a loop turn of its own. */
void exec_served_end(exec_server *srv, exec_trial *t, int status, int back) {
  exec_trial **pp = &srv->live;
  while (*pp && *pp != t) pp = &(*pp)->srv_next;
  if (!*pp) return;
  *pp = t->srv_next;
  srv->n_live--;
  t->srv_status = status;
  t->srv_ended = back;
  if (t->srv_fd >= 0 && back && srv->fd >= 0 && srv->n_spares < EXEC_SPARES) {
    /* The last to be taken: the others have waited longer, and it is still letting go. */
    spare_push(srv, t->pid, t->srv_fd);
  } else if (t->srv_fd >= 0) {
    close(t->srv_fd);
  }
  t->srv_fd = -1;
  uv_timer_start(&t->exit_timer, srv->on_exit, 0, 0);
}

void exec_server_unpoll(exec_server *srv) {
  if (!srv->poll) return;
  uv_close((uv_handle_t *)srv->poll, (uv_close_cb)free);
  srv->poll = NULL;
}

/* Takes spare I out of the list; its socket is the caller's. */
static int spare_remove(exec_server *srv, int i) {
  int fd = srv->spares[i].fd;
  srv->n_spares--;
  memmove(&srv->spares[i], &srv->spares[i + 1],
          (size_t)(srv->n_spares - i) * sizeof srv->spares[0]);
  return fd;
}

/* Lets go of every spare's socket (each spare leaves at EOF on it). */
static void spares_forget(exec_server *srv) {
  while (srv->n_spares > 0) close(spare_remove(srv, 0));
}

/* Makes room for an announced spare: a spare whose socket was hung up (it died: the server
 * forked this one after its end) goes first, else the oldest. */
static void spares_room(exec_server *srv) {
  for (int i = srv->n_spares - 1; i >= 0; i--) {
    struct pollfd pf = {srv->spares[i].fd, POLLIN, 0};
    if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLHUP | POLLERR))) close(spare_remove(srv, i));
  }
  if (srv->n_spares == EXEC_SPARES) close(spare_remove(srv, 0));
}

/* One record from the server (other than the answer a request waits for); FD: the fd that
 * came with it, or -1. */
static void server_record(exec_server *srv, const sup_msg *m, int fd) {
  if (m->kind == SUP_MSG_SPARE && fd >= 0) {
    spares_room(srv);
    spare_push(srv, m->pid, fd);
    return;
  }
  if (fd >= 0) close(fd);
  if (m->kind != SUP_MSG_EXITED) return;
  for (exec_trial *t = srv->live; t; t = t->srv_next)
    if (t->pid == m->pid) {
      exec_served_end(srv, t, m->value, 0);
      return;
    }
}

/* Waits (bounded) for the server to leave after its socket closed, then reaps it. */
static void server_reap(exec_server *srv, int kill_first) {
  if (srv->pid <= 0) return;
  if (kill_first) kill(srv->pid, SIGKILL);
  for (int i = 0; i < 2000; i++) { /* it leaves at once on EOF: 2 s is a hung server */
    pid_t r = waitpid(srv->pid, NULL, WNOHANG);
    if (r == srv->pid || (r < 0 && errno != EINTR)) {
      srv->pid = 0;
      return;
    }
    if (i == 1000) kill(srv->pid, SIGKILL);
    usleep(1000);
  }
  srv->pid = 0;
}

/* The server died or hung: its children are ending their trials (their parent is gone, as
 * when the orchestrator dies); each live trial ends here as failed, saying why. The next
 * trial starts a new server, unless this has happened too often. */
static void server_lost(exec_server *srv, const char *what) {
  int pid = (int)srv->pid;
  exec_server_unpoll(srv); /* before its fd goes: a new server's socket may get the same number */
  close(srv->fd);
  srv->fd = -1;
  spares_forget(srv);
  server_reap(srv, 1);
  srv->deaths++;
  diag_warn("flagtune: the trial fork server (pid %d) %s; %s", pid, what,
            srv->deaths >= EXEC_SERVER_DEATHS ? "the next trials start without it"
                                              : "the next trial starts a new one");
  if (srv->deaths >= EXEC_SERVER_DEATHS) srv->off = 1;
  while (srv->live) {
    exec_trial *t = srv->live;
    if (!t->res.log_error[0])
      snprintf(t->res.log_error, sizeof t->res.log_error,
               "flagtune: the trial fork server (pid %d) %s; this trial was ended with it", pid,
               what);
    /* Its supervisor ends it (and what left its group) as at the orchestrator's death; the
     * drain delay's SIGKILL to the group is the backstop. */
    exec_served_end(srv, t, SIGKILL, 0); /* a wait status: killed by SIGKILL */
  }
}

/* One message from the server into *M, with the fd that may come with it (a spare's socket)
 * in *FD (-1: none). Returns what recvmsg() returned. */
static ssize_t server_recv(exec_server *srv, int flags, sup_msg *m, int *fd) {
  int mflags;
  ssize_t n = supervise_recv_fds(srv->fd, m, sizeof *m, flags, fd, 1, &mflags);
  if (n != (ssize_t)sizeof *m && *fd >= 0) { /* a cut or odd message: its fd is no spare's */
    close(*fd);
    *fd = -1;
  }
  return n;
}

/* Reads what the server has sent. NONBLOCK: only what is there. Returns the STARTED answer's
 * record in *ANSWER when one came (1), 0 when none, -1 when the server is gone. */
static int server_read(exec_server *srv, int nonblock, sup_msg *answer) {
  for (;;) {
    sup_msg m = {0, 0, 0};
    int fd;
    ssize_t n = server_recv(srv, nonblock ? MSG_DONTWAIT : 0, &m, &fd);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) return -1;
    if (n != (ssize_t)sizeof m) continue;
    if (m.kind == SUP_MSG_STARTED && answer) {
      if (fd >= 0) close(fd);
      *answer = m;
      return 1;
    }
    server_record(srv, &m, fd);
  }
}

/* One record, if one is there (0), or -1 when the server is gone. */
static int server_read_one(exec_server *srv) {
  sup_msg m = {0, 0, 0};
  int fd;
  ssize_t n = server_recv(srv, MSG_DONTWAIT, &m, &fd);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  if (n <= 0) return -1;
  if (n == (ssize_t)sizeof m) server_record(srv, &m, fd);
  return 0;
}

/* One record a wake-up: libuv's poll is level-triggered (its epoll has no EPOLLET: libuv's
 * src/unix/epoll.c in 1.44, src/unix/linux.c later), so a second record wakes it again, and reading
 * on to EAGAIN cost a recv at every wake-up (a spare's announcement and a supervisor's end: two a
 * trial). A disconnect reads whatever is left before the server is given up. */
static void on_server_readable(uv_poll_t *poll, int status, int events) {
  exec_server *srv = poll->data;
  int gone = status < 0;
  if (!gone && (events & UV_DISCONNECT)) {
    server_read(srv, 1, NULL);
    gone = 1;
  } else if (!gone) {
    gone = server_read_one(srv) < 0;
  }
  if (gone && srv->fd >= 0) server_lost(srv, "died");
}

/* Starts the server: posix_spawn (a vfork: no copy of our page tables) of flagtune-supervise
 * with one end of a socket pair as its fd, in a session of its own so that a terminal's
 * Ctrl-C reaches the orchestrator, which decides, and not the server. */
static int server_start(exec_server *srv) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  fcntl(sv[1], F_SETFD, 0); /* the server's; closed here right after the spawn */
  char fd_arg[16], pid_arg[24];
  snprintf(fd_arg, sizeof fd_arg, "%d", sv[1]);
  snprintf(pid_arg, sizeof pid_arg, "%d", (int)getpid());
  char *argv[] = {srv->path, SUPERVISE_ARG, SUPERVISE_SERVER_ARG, fd_arg, pid_arg, NULL};
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_init(&fa);
  sigset_t none, dfl;
  sigemptyset(&none);
  sigemptyset(&dfl);
  int defaults[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) sigaddset(&dfl, defaults[i]);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  /* Nothing of ours: a pipe the orchestrator writes to (`flagtune run | tee`) must see EOF
   * when the orchestrator is gone, not when the server is. */
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  extern char **environ;
  pid_t pid = 0;
  int rc = posix_spawn(&pid, srv->path, &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    diag_warn("flagtune: cannot start the trial fork server %s: %s; trials start without it",
              srv->path, strerror(rc));
    srv->off = 1;
    return -1;
  }
  srv->fd = sv[0];
  srv->pid = pid;
  return 0;
}

/* The request for SPEC (supervise.h), or NULL when it is longer than the server takes. */
static char *server_request(const exec_spec *spec, double grace_s, size_t *len) {
  sup_req rq;
  memset(&rq, 0, sizeof rq);
  rq.kind = SUP_MSG_SPAWN;
  rq.grace_ms = (uint32_t)(grace_s * 1000.0 + 0.5);
  size_t n = sizeof rq;
  for (char *const *a = spec->argv; *a; a++) rq.argc++, n += strlen(*a) + 1;
  for (char *const *e = spec->envp; e && *e; e++) rq.envc++, n += strlen(*e) + 1;
  if (spec->cwd) rq.flags |= SUP_REQ_CWD, n += strlen(spec->cwd) + 1;
  if (n > SUP_REQ_MAX) return NULL;
  char *buf = xmalloc(n), *p = buf + sizeof rq;
  memcpy(buf, &rq, sizeof rq);
  for (char *const *a = spec->argv; *a; a++) p = stpcpy(p, *a) + 1;
  for (char *const *e = spec->envp; e && *e; e++) p = stpcpy(p, *e) + 1;
  if (spec->cwd) p = stpcpy(p, spec->cwd) + 1;
  *len = n;
  return buf;
}

static void close_fds(int *fd, int n) {
  for (int i = 0; i < n; i++)
    if (fd[i] >= 0) close(fd[i]);
}

/* Sends the request with the write ends of the trial's three pipes and waits for the pid.
 * Returns the supervisor's pid, or 0 when the trial must take the exec path. */
static pid_t server_ask(exec_server *srv, const char *req, size_t len, const int wr[3]) {
  ssize_t n = supervise_send_fds(srv->fd, req, len, wr, 3);
  if (n < 0) {
    if (errno != EMSGSIZE && errno != ENOBUFS) server_lost(srv, "is gone");
    return 0;
  }
  for (;;) {
    struct pollfd pf = {srv->fd, POLLIN, 0};
    int r = poll(&pf, 1, EXEC_SERVER_ANSWER_MS);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      server_lost(srv, "did not answer within 5 s");
      return 0;
    }
    sup_msg m = {0, 0, 0};
    int got = server_read(srv, 1, &m);
    if (got < 0) {
      server_lost(srv, "died");
      return 0;
    }
    if (got == 1) return m.pid > 0 && m.value == 0 ? (pid_t)m.pid : 0;
  }
}

/* Hands the request and the trial's pipes to the oldest spare itself, on its own socket. Returns
 * its pid once it has taken them (the socket in *FD, to go back among the spares at the
 * trial's "end"), 0 when it is gone or has not taken them within EXEC_SPARE_ANSWER_MS
 * (stopped, stalled): it is then cut off, since with our reading side shut its word can no
 * longer be sent, and a spare whose word cannot be sent leaves without running anything; so a
 * word that is not queued by now never will be. The spare is taken out of the list either way. */
static pid_t spare_ask(exec_server *srv, const char *req, size_t len, const int wr[3], int *fd) {
  pid_t pid = srv->spares[0].pid;
  int sock = spare_remove(srv, 0);
  char ack = 0;
  if (supervise_send_fds(sock, req, len, wr, 3) == (ssize_t)len) {
    struct pollfd pf = {sock, POLLIN, 0};
    int r;
    do r = poll(&pf, 1, EXEC_SPARE_ANSWER_MS);
    while (r < 0 && errno == EINTR);
    if (r <= 0) shutdown(sock, SHUT_RD);
    if (recv(sock, &ack, 1, MSG_DONTWAIT) != 1) ack = 0;
  }
  if (ack != 'k') {
    close(sock);
    return 0;
  }
  *fd = sock;
  return pid;
}

/* The spares announced and not yet heard are taken in; a server found gone is given up. */
static void server_catch_up(exec_server *srv) {
  if (srv->fd >= 0 && server_read(srv, 1, NULL) < 0) server_lost(srv, "died");
}

/* Starts the supervisor of a request: the oldest spare where there is one (the next when that
 * one was gone), else the server's fresh fork. *FD: the spare's socket, or -1. */
static pid_t served_start(exec_server *srv, const char *req, size_t len, const int wr[3], int *fd) {
  pid_t pid = 0;
  *fd = -1;
  if (srv->n_spares == 0) server_catch_up(srv);
  for (int i = 0; i < EXEC_SPARE_TRIES && pid <= 0 && srv->n_spares > 0; i++) {
    pid = spare_ask(srv, req, len, wr, fd);
    if (pid <= 0) server_catch_up(srv);
  }
  if (pid <= 0 && srv->fd >= 0) pid = server_ask(srv, req, len, wr);
  return pid;
}

/* Starts T through the server: 0 when it runs (T's pipes are open and it is live), -1 when
 * it must take the exec path instead (nothing of it started). */
int exec_served_spawn(exec_trial *t, const exec_spec *spec, exec_server *srv) {
  if (srv->off || (srv->fd < 0 && server_start(srv) != 0)) return -1;
  size_t len = 0;
  char *req = server_request(spec, (double)t->grace_ms / 1000.0, &len);
  if (!req) return -1;
  int p[6] = {-1, -1, -1, -1, -1, -1}; /* read and write ends: stdout, stderr, report */
  for (int i = 0; i < 3; i++)
    if (pipe2(p + 2 * i, O_CLOEXEC) != 0) {
      close_fds(p, 6);
      free(req);
      return -1;
    }
  int wr[3] = {p[1], p[3], p[5]};
  t->started_ns = uv_hrtime();
  int sock = -1;
  pid_t pid = served_start(srv, req, len, wr, &sock);
  /* A server that died between trials (nothing live to notice it by) is found here: a new
   * one takes the request, as it would have taken the next trial's. */
  if (pid <= 0 && srv->fd < 0 && !srv->off && server_start(srv) == 0)
    pid = served_start(srv, req, len, wr, &sock);
  free(req);
  close_fds(wr, 3);
  if (pid <= 0) {
    int rd[3] = {p[0], p[2], p[4]};
    close_fds(rd, 3);
    return -1;
  }
  uv_pipe_open(&t->out.pipe, p[0]);
  uv_pipe_open(&t->err.pipe, p[2]);
  uv_pipe_open(&t->rep.pipe, p[4]);
  t->pid = pid;
  t->srv = srv;
  t->srv_fd = sock;
  t->srv_next = srv->live;
  srv->live = t;
  srv->n_live++;
  if (!srv->poll) {
    srv->poll = xcalloc(1, sizeof *srv->poll);
    uv_poll_init(srv->loop, srv->poll, srv->fd);
    srv->poll->data = srv;
    uv_poll_start(srv->poll, UV_READABLE | UV_DISCONNECT, on_server_readable);
  }
  return 0;
}

int exec_server_take_spare(exec_server *srv) {
  if (srv->fd < 0 || srv->off) return 0;
  for (int i = 0; i < srv->n_spares; i++)
    if (!srv->spares[i].told) {
      srv->spares[i].told = 1;
      return (int)srv->spares[i].pid;
    }
  return 0;
}

void exec_server_close(exec_server *srv) {
  exec_server_unpoll(srv); /* trials still live: the loop was not run to its end */
  if (srv->fd >= 0) close(srv->fd);
  srv->fd = -1;
  spares_forget(srv);
  server_reap(srv, 0);
  free(srv->path);
}