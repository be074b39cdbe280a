/* The fork server and its spares (supervise.h, SUPERVISE_SERVER_ARG): one small process per
 * sweep that forks the trials' supervisors, so that a trial costs neither a fork of the
 * orchestrator nor an exec. It must stay as small and synchronous as the supervisor it forks
 * (supervise.c): no libuv, no Lua, no store. Its children become supervisors through
 * supervise_run() (supervise_impl.h); the spares are forked ahead and prepared, at least
 * SUP_SPARES waiting, so that no fork is in the turn between trials, at parallel 2 for two
 * starts close together as well, and each serves trial after trial, so that a sweep forks a
 * supervisor for a few of its trials, not for each. */
#define _GNU_SOURCE /* MSG_CMSG_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervise.h"
#include "supervise_impl.h"

/* Writes one record to the orchestrator; a dead orchestrator is not our problem (we are
 * about to see EOF or its death signal). */
static void server_send(int fd, int kind, pid_t pid, int value) {
  sup_msg m = {kind, (int32_t)pid, value};
  ssize_t w;
  do w = send(fd, &m, sizeof m, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
}

/* Splits N NUL-terminated strings off [*P, END) into V (NULL-terminated). -1: too few. */
static int take_strings(char **p, const char *end, char **v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    char *nul = memchr(*p, '\0', (size_t)(end - *p));
    if (!nul) return -1;
    v[i] = *p;
    *p = nul + 1;
  }
  v[n] = NULL;
  return 0;
}

/* Moves FD to TARGET (dup2), taking care that no other fd of ours sits there. */
static void place_fd(int fd, int target) {
  if (fd == target) {
    fcntl(fd, F_SETFD, 0);
    return;
  }
  dup2(fd, target);
}

/* Puts the trial's three pipes on 1, 2 and 3 (3 close-on-exec: the report pipe is never the
 * command's; 1 and 2 not) and closes the originals: a dup2 each, a pipe first moved out of the
 * way only when an earlier dup2 would overwrite it (the usual 3, 4, 5 or 3, 4, 6 need none). */
static void place_pipes(const int fds[3]) {
  int src[3] = {fds[0], fds[1], fds[2]};
  for (int j = 1; j < 3; j++)
    if (src[j] >= 1 && src[j] <= j) { /* the target of an earlier pipe: it would be lost */
      int hi = fcntl(src[j], F_DUPFD_CLOEXEC, 10);
      close(src[j]);
      src[j] = hi;
    }
  for (int i = 0; i < 3; i++) {
    if (src[i] != i + 1)
      dup3(src[i], i + 1, i == 2 ? O_CLOEXEC : 0);
    else
      fcntl(i + 1, F_SETFD, i == 2 ? FD_CLOEXEC : 0); /* already there, its flag made right */
  }
  for (int i = 0; i < 3; i++) /* one on a low fd was replaced by the dup3 onto it */
    if (src[i] > 3) close(src[i]);
}

/* What every served supervisor does before its request can arrive: /dev/null as fd 0, a
 * session and group of its own (as the executor's detached spawn: group signals reach the
 * trial alone and a terminal's Ctrl-C does not), the watched signals blocked, SIGTERM asked
 * for at the server's death (and the server re-checked after asking: one killed in between
 * means nothing may start), and READY (when there is one: a fresh fork's) closed, which tells
 * the server so. */
static void served_prepare(pid_t server, int ready) {
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) {
    place_fd(null, 0);
    if (null != 0) close(null);
  }
  setsid();
  sigset_t set;
  sup_watched_signals(&set);
  sigprocmask(SIG_SETMASK, &set, NULL);
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != server) _exit(1);
  if (ready >= 0) close(ready);
}

/* Parses a request (supervise.h) in BUF into RQ, ARGV, ENVP and CWD (pointers into BUF; ARGV
 * and ENVP allocated). 0 when it is whole and well formed. */
static int parse_request(char *buf, size_t len, sup_req *rq, char ***argv, char ***envp,
                         char **cwd) {
  *argv = *envp = NULL;
  *cwd = NULL;
  if (len < sizeof *rq) return -1;
  memcpy(rq, buf, sizeof *rq);
  char *p = buf + sizeof *rq, *end = buf + len;
  if (rq->kind != SUP_MSG_SPAWN || rq->argc == 0 || rq->argc >= SUP_REQ_MAX ||
      rq->envc >= SUP_REQ_MAX)
    return -1;
  *argv = calloc(rq->argc + 1, sizeof **argv);
  *envp = calloc(rq->envc + 1, sizeof **envp);
  char *c[2] = {NULL, NULL};
  int ok = *argv && *envp && take_strings(&p, end, *argv, rq->argc) == 0 &&
           take_strings(&p, end, *envp, rq->envc) == 0 &&
           (!(rq->flags & SUP_REQ_CWD) || take_strings(&p, end, c, 1) == 0);
  *cwd = c[0];
  return ok ? 0 : -1;
}

/* The served supervisor once its request is here (FDS: its stdout, stderr and report pipe;
 * SERVER: our parent; BOSS: the orchestrator; MADE: its cgroup, when made ahead). AGAIN: a
 * spare that serves the next request too (its 'b' goes on LINK), for which this returns once
 * nothing of the trial is left: 1 when the process can serve again ('b' sent), else 0;
 * otherwise it does not return. */
static int served_run(const sup_req *rq, char **argv, char **envp, const char *cwd,
                      const int fds[3], pid_t server, pid_t boss, sup_cgroup *made, int again,
                      int link) {
  place_pipes(fds);
  sigset_t old;
  sigemptyset(&old); /* the command's mask: nothing blocked */
  if (cwd && chdir(cwd) != 0) {
    fprintf(stderr, "cannot start %s: cannot enter %s: %s\n", argv[0], cwd, strerror(errno));
    if (made) sup_cgroup_end(made);
    _exit(126);
  }
  extern char **environ;
  char **own = environ;
  environ = envp;
  sup_args a = {.parent = server,
                .boss = boss,
                .grace_s = (double)rq->grace_ms / 1000.0,
                .report_fd = 3,
                .cgroup = !(rq->flags & SUP_REQ_NO_CGROUP),
                .cmd = argv,
                .again = again,
                .back_fd = link};
  int code = supervise_run(&a, &old, made);
  if (!again) exit(code);
  environ = own;
  return a.reusable;
}

/* ---- the spares: supervisors forked ahead, each serving request after request ---------------- */

/* The server keeps at least SUP_SPARES of its children waiting for a request (two: at
 * parallel 2 a start soon after another finds one at hand instead of waiting for a fork),
 * each prepared (served_prepare) and its cgroup made, so that a trial's start waits neither
 * for a fork nor for the server: the spare's request socket is the orchestrator's (passed
 * once, with SUP_MSG_SPARE), which sends the request and the trial's pipes there itself. A
 * spare serves one trial after another: once nothing of a trial is left (its "end" line
 * written and its pipes closed) it waits on the same socket for the next request, so that a
 * trial costs no fork and no exit of a supervisor (the orchestrator takes the socket back at
 * the trial's "end"). The spare's link to the server is a socket pair of its own: the spare
 * sends 't' there once it has a request, before it acknowledges it, and 'b' once its trial is
 * over, before the trial's "end" (so that the server counts it waiting before the orchestrator
 * can start another trial), and sees the server's death as EOF on it. It runs nothing without a
 * request: at EOF on either socket it leaves. It has no other fd of the server's (not another
 * spare's link either: the server's close of a link must be that spare's EOF). */
enum { SUP_SPARES = 2, SUP_POOL = 64 /* the most served supervisors at once */ };

typedef struct {
  pid_t pid; /* 0: none */
  int link;  /* the server's end of the link; -1: closed (it hung up, not reaped yet) */
  int busy;  /* its last word was 't': a trial's supervisor, not a spare */
} sup_spare;

static ssize_t recv_with_fds(int sock, char *buf, size_t cap, int fds[3], int *bad);

/* Moves *FD (when open and below 10) to the lowest free fd from 10 up, close-on-exec. */
static void lift_fd(int *fd) {
  if (*fd < 0 || *fd >= 10) return;
  int hi = fcntl(*fd, F_DUPFD_CLOEXEC, 10);
  if (hi < 0) return;
  close(*fd);
  *fd = hi;
}

/* In the spare: waits for a request on REQ or the server's end on LINK. 1: a request. */
static int spare_wait(int req, int link) {
  struct pollfd pf[2] = {{link, POLLIN, 0}, {req, POLLIN, 0}};
  for (;;) {
    int r = poll(pf, 2, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || pf[0].revents) return 0; /* the server never writes: this is its end */
    if (pf[1].revents) return 1;
  }
}

/* In the spare, before a trial: the watched signals still pending from the last one (a stop
 * the orchestrator sent as that trial ended) are dropped: every signal the orchestrator sent
 * for it came before this request did. */
static void drop_pending(void) {
  sigset_t set;
  sup_watched_signals(&set);
  struct timespec zero = {0, 0};
  while (sigtimedwait(&set, NULL, &zero) > 0) {
  }
}

/* In the spare: waits for each request, and serves it as the trial's supervisor. */
static void spare_main(int req, int link, pid_t server, pid_t boss) {
  served_prepare(server, -1);
  int home = -1; /* where a trial without a cwd runs, kept once one with a cwd came */
  char *buf = malloc(SUP_REQ_MAX);
  sup_cgroup cg = {.dir = "", .dir_fd = -1, .procs_fd = -1};
  for (;;) {
    /* The trial's cgroup too, off the next trial's path (one left by a spare killed here is
     * removed by the server's sup_cgroup_sweep when it reaps us); the last trial's, kept
     * when it was left empty. Its two fds must not sit where place_pipes puts the trial's
     * pipes (1, 2, 3): the lowest free fds here are often 3 and 4, and a dup2 onto
     * cgroup.procs' fd left the report pipe closed by sup_cgroup_end (the "killed N" line
     * lost) and the cgroup's fd pointing at it. */
    if (!cg.dir[0]) sup_cgroup_begin(&cg, 1);
    lift_fd(&cg.procs_fd);
    lift_fd(&cg.dir_fd);
    int fds[3], flags = 0;
    ssize_t n =
        buf && spare_wait(req, link) ? recv_with_fds(req, buf, SUP_REQ_MAX, fds, &flags) : -1;
    /* EOF, a broken handoff, or a server gone meanwhile: nothing was asked of us. */
    if (n <= 0 || flags != 0 || getppid() != server) {
      sup_cgroup_end(&cg);
      _exit(0);
    }
    drop_pending();
    /* Taken: the server's word first (from here on it reports our end as a trial's), then the
     * orchestrator's, after which our end is the trial's end. A word to the orchestrator that
     * cannot be sent (it cut us off: exec_server.c) means not ours to run. */
    if (send(link, "t", 1, MSG_NOSIGNAL) != 1 || send(req, "k", 1, MSG_NOSIGNAL) != 1) {
      sup_cgroup_end(&cg);
      _exit(0);
    }
    sup_req rq;
    char **argv, **envp, *cwd;
    if (parse_request(buf, (size_t)n, &rq, &argv, &envp, &cwd) != 0) {
      sup_cgroup_end(&cg);
      _exit(1);
    }
    if (cwd && home < 0) {
      home = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      lift_fd(&home);
    }
    int again = served_run(&rq, argv, envp, cwd, fds, server, boss, &cg, 1, link);
    free(argv);
    free(envp);
    if (cwd && (home < 0 || fchdir(home) != 0)) again = 0;
    /* Something of the trial is still here (a process no signal ends), or the server is
     * gone: no next trial here. Our end after "end" is no trial's end (the server reports
     * it, the orchestrator has ended the trial already and ignores it). */
    if (!again || getppid() != server) {
      sup_cgroup_end(&cg);
      _exit(0);
    }
  }
}

/* Forks a spare and hands its request socket to the orchestrator on SOCK (SUP_MSG_SPARE with
 * the fd). The child must hold nothing of the server's but its link: CLOSE_FDS (N of them) are
 * closed in it. */
static void spare_next(int sock, sup_spare *sp, pid_t boss, const int *close_fds, int n) {
  int lk[2] = {-1, -1}, rq[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, lk) != 0 ||
      socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rq) != 0) {
    for (int i = 0; i < 2; i++) {
      if (lk[i] >= 0) close(lk[i]);
    }
    return;
  }
  pid_t server = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < n; i++) close(close_fds[i]);
    close(lk[0]);
    close(rq[0]);
    spare_main(rq[1], lk[1], server, boss);
  }
  close(lk[1]);
  close(rq[1]);
  if (pid < 0) {
    close(lk[0]);
    close(rq[0]);
    return;
  }
  sp->pid = pid;
  sp->link = lk[0];
  sp->busy = 0;
  sup_msg m = {SUP_MSG_SPARE, (int32_t)pid, 0};
  supervise_send_fds(sock, (const char *)&m, sizeof m, rq, 1);
  close(rq[0]); /* the orchestrator's now (or, when it is gone, nobody's: the spare leaves) */
}

/* Reads what the spare's link says ('t': it took a request, 'b': it waits again); at EOF
 * (it left or died) closes the link, keeping the pid until it is reaped. */
static void spare_settle(sup_spare *sp) {
  while (sp->pid > 0 && sp->link >= 0) {
    char c = 0;
    ssize_t r = recv(sp->link, &c, 1, MSG_DONTWAIT);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (r == 1) {
      sp->busy = c == 't';
      continue;
    }
    close(sp->link);
    sp->link = -1;
  }
}

ssize_t supervise_send_fds(int sock, const char *buf, size_t len, const int *fds, int nfds) {
  union {
    struct cmsghdr h;
    char space[CMSG_SPACE(3 * sizeof(int))];
  } ctl;
  if (nfds < 1 || nfds > 3) {
    errno = EINVAL;
    return -1;
  }
  memset(&ctl, 0, sizeof ctl);
  struct iovec iov = {(void *)buf, len};
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.space;
  mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
  memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
  ssize_t n;
  do n = sendmsg(sock, &mh, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n;
}

/* One request (the orchestrator had no spare at hand): a fresh fork takes it; answer with its
 * pid (or errno). */
static void server_spawn(int sock, int sfd, char *buf, size_t len, const int fds[3], pid_t boss,
                         const sup_spare *sp) {
  sup_req rq;
  char **argv = NULL, **envp = NULL, *cwd = NULL;
  int ok = fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0 &&
           parse_request(buf, len, &rq, &argv, &envp, &cwd) == 0;
  if (!ok) {
    server_send(sock, SUP_MSG_STARTED, 0, EINVAL);
    free(argv);
    free(envp);
    return;
  }
  int ready[2] = {-1, -1};
  if (pipe2(ready, O_CLOEXEC) != 0) {
    server_send(sock, SUP_MSG_STARTED, 0, errno);
    free(argv);
    free(envp);
    return;
  }
  pid_t server = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    close(sock);
    close(sfd);
    for (int i = 0; i < SUP_POOL; i++) /* a spare sees the server's end as its link's */
      if (sp[i].link >= 0) close(sp[i].link);
    close(ready[0]);
    served_prepare(server, ready[1]);
    served_run(&rq, argv, envp, cwd, fds, server, boss, NULL, 0, -1);
  }
  int e = errno;
  close(ready[1]);
  if (pid > 0) { /* wait until it leads its group (EOF: ready, or already gone) */
    char c;
    while (read(ready[0], &c, 1) < 0 && errno == EINTR) {
    }
  }
  close(ready[0]);
  free(argv);
  free(envp);
  server_send(sock, SUP_MSG_STARTED, pid > 0 ? pid : 0, pid > 0 ? 0 : e);
}

/* Reaps every child that has ended and tells the orchestrator how each one ended, a spare
 * too: the orchestrator ignores a pid it has no live trial for (a spare that died waiting for
 * a request, one that left after its trial's "end", one it cut off). */
static void server_reap(int sock, sup_spare *sp) {
  int st;
  pid_t r;
  while ((r = waitpid(-1, &st, WNOHANG)) != 0) {
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return;
    int i = 0;
    while (i < SUP_POOL && sp[i].pid != r) i++;
    if (i < SUP_POOL) {
      if (sp[i].link >= 0) close(sp[i].link);
      sp[i] = (sup_spare){0, -1, 0};
    }
    server_send(sock, SUP_MSG_EXITED, r, st);
    if (WIFSIGNALED(st)) sup_cgroup_sweep(); /* a supervisor killed may have left its cgroup */
  }
}

ssize_t supervise_recv_fds(int sock, void *buf, size_t cap, int flags, int *fds, int max,
                           int *msg_flags) {
  union {
    struct cmsghdr h;
    char space[CMSG_SPACE(3 * sizeof(int))];
  } ctl;
  struct iovec iov = {buf, cap};
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.space;
  mh.msg_controllen = sizeof ctl.space;
  for (int i = 0; i < max; i++) fds[i] = -1;
  *msg_flags = 0;
  ssize_t n;
  do n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return n;
  int got = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < k; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (got < max)
        fds[got++] = fd;
      else
        close(fd);
    }
  }
  *msg_flags = mh.msg_flags;
  return n;
}

/* Receives one message and the three fds that must come with it. Returns its length, 0 on
 * EOF, -1 on an error; *BAD is set (E2BIG: cut, EINVAL: not three fds) for a message that
 * came but cannot be used, whose fds are then closed. */
static ssize_t recv_with_fds(int sock, char *buf, size_t cap, int fds[3], int *bad) {
  int mflags;
  *bad = 0;
  ssize_t n = supervise_recv_fds(sock, buf, cap, 0, fds, 3, &mflags);
  if (n <= 0) return n;
  if (fds[2] < 0 || (mflags & (MSG_TRUNC | MSG_CTRUNC))) {
    for (int i = 0; i < 3; i++)
      if (fds[i] >= 0) close(fds[i]);
    fds[0] = fds[1] = fds[2] = -1;
    *bad = (mflags & MSG_TRUNC) ? E2BIG : EINVAL;
  }
  return n;
}

/* Forks spares until SUP_SPARES wait (or SUP_POOL are served); each must not hold OWN (the
 * server's two fds) nor another spare's link. */
static void spares_fill(int sock, sup_spare *sp, pid_t boss, const int own[2]) {
  for (;;) {
    int waiting = 0, free_at = -1, n = 0, shut[2 + SUP_POOL];
    shut[n++] = own[0];
    shut[n++] = own[1];
    for (int j = 0; j < SUP_POOL; j++) {
      if (sp[j].pid > 0 && sp[j].link >= 0 && !sp[j].busy) waiting++;
      if (sp[j].link >= 0) shut[n++] = sp[j].link;
      if (sp[j].pid == 0 && free_at < 0) free_at = j;
    }
    if (waiting >= SUP_SPARES || free_at < 0) return;
    spare_next(sock, &sp[free_at], boss, shut, n);
    if (sp[free_at].pid == 0) return; /* cannot fork now: a request goes to the server */
  }
}

/* The fork server: keeps SUP_SPARES spares waiting, their request sockets with the
 * orchestrator, hands each request on SOCK (one that came without a spare) to a fresh fork,
 * reports each supervisor's end, and leaves when the orchestrator (BOSS, our parent) closes
 * the socket or dies. Its children each ask for SIGTERM at its death, so they end their
 * trials if it is killed; each spare leaves at EOF on its link. */
int supervise_server_main(int sock, pid_t boss) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != boss) return 1;
  fcntl(sock, F_SETFD, FD_CLOEXEC);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return 1;
  char *buf = malloc(SUP_REQ_MAX);
  if (!buf) return 1;
  sup_spare sp[SUP_POOL];
  for (int i = 0; i < SUP_POOL; i++) sp[i] = (sup_spare){0, -1, 0};
  sup_cgroup_prime();       /* inherited by every spare and supervisor forked from here */
  int own[2] = {sock, sfd}; /* what a spare must not hold */
  int spares = !getenv("FLAGTUNE_NO_SPARE");
  for (;;) {
    /* The next trials' supervisors: forked when fewer than SUP_SPARES wait. */
    if (spares) spares_fill(sock, sp, boss, own);
    struct pollfd pf[2 + SUP_POOL] = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
    for (int i = 0; i < SUP_POOL; i++) pf[2 + i] = (struct pollfd){sp[i].link, POLLIN, 0};
    if (poll(pf, 2 + SUP_POOL, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < SUP_POOL; i++) /* its word, or its end */
      if (pf[2 + i].revents) spare_settle(&sp[i]);
    if (pf[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) > 0) {
      }
      server_reap(sock, sp);
    }
    if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      int fds[3], bad = 0;
      ssize_t n = recv_with_fds(sock, buf, SUP_REQ_MAX, fds, &bad);
      if (n == 0 || n == -1) break; /* the orchestrator is gone: so are we */
      if (bad) {
        server_send(sock, SUP_MSG_STARTED, 0, bad);
        continue;
      }
      server_spawn(sock, sfd, buf, (size_t)n, fds, boss, sp);
      for (int i = 0; i < 3; i++) close(fds[i]); /* the child's now; ours would hold the pipes */
    }
  }
  for (int i = 0; i < SUP_POOL; i++)
    if (sp[i].link >= 0) close(sp[i].link);
  free(buf);
  return 0;
}
