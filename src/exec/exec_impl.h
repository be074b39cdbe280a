/* The local executor's insides shared by exec.c (a trial's process, pipes, timers and log)
 * and exec_server.c (the fork-server client: starting a supervised trial through the server
 * and hearing its records). Not for any other module: executor.h and exec.h are the interface. */
#ifndef FLAGTUNE_EXEC_IMPL_H
#define FLAGTUNE_EXEC_IMPL_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "exec.h"
#include "lines.h"

enum {
  EXEC_READ_SIZE = 64 * 1024,
  EXEC_DRAIN_MS = 1000, /* how long pipes may stay open after the child exited */
  EXEC_QUIET_MS = 200,  /* a partial line this long without more output is shown (on_partial) */
  EXEC_REPORT = 3,      /* the supervisor's report pipe (its fd 3); never a line stream */
  EXEC_REPORT_LINE = 256,
  EXEC_BACKSTOP_MS = 2000,      /* after the supervisor's own grace: it must be hung */
  EXEC_SERVER_ANSWER_MS = 5000, /* a fork server that does not answer a request is hung */
  EXEC_SPARE_ANSWER_MS = 2000,  /* a spare that has not taken its request by then is cut off */
  EXEC_SERVER_DEATHS = 3,       /* servers lost before the rest of the run takes the exec path */
  EXEC_SPARES = 64,             /* the spares held at once (the server's SUP_POOL) */
  EXEC_SPARE_TRIES = 3,         /* spares asked for one start before the server is */
};
#define EXEC_DEFAULT_GRACE_S 5.0
#define EXEC_DEFAULT_LOG_LIMIT ((int64_t)64 * 1024 * 1024)

/* The fork server (supervise.h) of one local executor: started at its first trial, restarted
 * when it dies (up to EXEC_SERVER_DEATHS times), closed with the executor. */
typedef struct {
  uv_loop_t *loop;
  char *path;       /* flagtune-supervise */
  int fd;           /* our end of its socket; -1: none running */
  pid_t pid;        /* our child */
  uv_poll_t *poll;  /* watches FD while trials are live and from one's end to the next's
                     * start (closed when none follows at once, so that the loop can end) */
  exec_trial *live; /* started and not yet reported ended, linked by srv_next */
  int n_live;
  int deaths;
  /* The spares waiting for a request, oldest first: the next start takes spares[0]. Each with
   * its request socket, which came with the server's announcement (SUP_MSG_SPARE) or back
   * with its last trial's "end", and whether its pid was given out (exec_server_take_spare). */
  struct {
    pid_t pid;
    int fd;
    int told;
  } spares[EXEC_SPARES];
  int n_spares;
  int off; /* every trial takes the per-trial exec path */
  /* exec.c's end of a served trial, run from the trial's exit_timer (initialised by exec.c
   * once exec_served_spawn returned 0): the server never calls into exec.c by name. */
  uv_timer_cb on_exit;
} exec_server;

typedef struct {
  exec_trial *t;
  int id; /* EXEC_STDOUT or EXEC_STDERR */
  int open;
  uv_pipe_t pipe;
  lines_buf lb;
  size_t shown; /* the length of the partial line last given to on_partial; 0: none */
} exec_stream;

struct exec_trial {
  uv_loop_t *loop;
  exec_callbacks cb;
  void *ud;
  char *file; /* argv[0], for the spawn error message */
  uv_process_t proc;
  exec_stream out, err;
  exec_stream rep; /* supervised: the supervisor's reports; otherwise never opened */
  uv_timer_t timeout_timer, grace_timer, drain_timer;
  uv_timer_t quiet_timer; /* a partial line waits this long for more output (on_partial) */
  int refs;               /* handles initialised and not yet closed */
  int pid;                /* 0 until spawned; also the process group id */
  int exited;             /* exit callback seen (or spawn failed) */
  int term_sent;
  int timers_closed;
  uint64_t grace_ms, started_ns;
  int log_fd;
  int64_t log_written, log_limit;
  int log_capped, log_at_bol;
  char *log_path;
  int rep_exit;      /* the supervisor reported the command's end: */
  int rep_stopped;   /* ... whether a stop had reached it by then */
  double rep_wall_s; /* ... and its own duration */
  int supervised;    /* the spawned process is the supervisor */
  int contained;     /* the supervisor reported that it ended the command's leftovers */
  char *cgroup;      /* the trial's cgroup as the supervisor reported it; NULL: none */
  int err_lines;     /* stderr lines seen so far */
  char *held;        /* supervised: a first stderr line that may be a spawn error */
  size_t held_len;
  exec_server *srv;      /* started by the fork server: the process is its child, not ours */
  exec_trial *srv_next;  /* in srv->live */
  uv_timer_t exit_timer; /* served: applies the server's exit record on a turn of its own */
  int srv_status;        /* served: the supervisor's wait status */
  int srv_fd;            /* served by a spare: its request socket, back among the spares at the
                          * trial's "end"; -1: none */
  int srv_ended;         /* served: its "end" came, so nothing of it is left and its supervisor
                          * may serve another trial: never signalled again */
  exec_result res;
  char rbuf[EXEC_READ_SIZE]; /* shared by both pipes: a read is consumed before the next */
};

/* exec_server.c: starts T through SRV: 0 when it runs (T's pipes are open and it is live;
 * the caller then initialises T's exit_timer and counts the process as one reference),
 * -1 when it must take the exec path instead (nothing of it started). */
int exec_served_spawn(exec_trial *t, const exec_spec *spec, exec_server *srv);
/* Hands a live served trial its end: STATUS (a wait status) on a loop turn of its own
 * (SRV's on_exit from T's exit_timer). BACK: the supervisor's "end" line, after which it waits
 * for another request (its socket goes back among the spares); otherwise it is gone. */
void exec_served_end(exec_server *srv, exec_trial *t, int status, int back);
/* Closes the watch on the server's socket (kept between trials; closed when none follows). */
void exec_server_unpoll(exec_server *srv);
/* The pid the next request will most likely get (the oldest spare not told yet), once: it is
 * then marked told, so that two trials never both take it; 0 when none is known. */
int exec_server_take_spare(exec_server *srv);
/* Closes the server (it leaves at EOF) and reaps it; frees SRV's path. */
void exec_server_close(exec_server *srv);

#endif
