/* The trial supervisor: a tiny process between the executor and the training command, so
 * that a trial dies with its orchestrator even when the orchestrator is SIGKILLed, and so that
 * nothing the command starts outlives the trial.
 *
 * libuv's uv_spawn has no hook between fork and exec, so PR_SET_PDEATHSIG cannot be set on
 * the command itself. Instead the executor runs `flagtune __supervise [--parent PID]
 * [--grace S] [--report FD] -- CMD ARGS...`: the supervisor (the process group leader, since
 * the executor spawns detached) asks the kernel for SIGTERM when its parent dies, becomes a
 * child subreaper, runs CMD in its own group (and in a cgroup v2 of its own where one can be
 * made), and on its parent's death terminates the whole group and every descendant (SIGTERM,
 * SIGKILL after the grace). When CMD ends, every process it left behind (its own group,
 * setsid() or double fork alike) gets SIGTERM, then SIGKILL after the grace. A SIGTERM or
 * SIGINT from the parent starts the grace, after which every descendant gets SIGKILL; SIGUSR2
 * from the parent kills every descendant at once.
 *
 * CMD starts by clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP) on x86-64 (no copy of the
 * supervisor's page tables; FLAGTUNE_SUPERVISE_FORK in the environment it passes on asks for a
 * plain fork, for comparisons), by fork elsewhere.
 *
 * Otherwise it is transparent: it exits with CMD's exit code or re-raises the signal that
 * ended CMD, and reports a command that cannot be started as one stderr line ("command not
 * found: X", "permission denied: X", "cannot start X: why") with exit 127 (not found) or 126
 * (anything else), which exec.c maps back to exec_result.spawn_error.
 *
 * With --report FD (close-on-exec, so the command never sees it) it writes three lines there:
 * "exit SECONDS STOPPED" as soon as CMD has ended (its own duration, and 1 when a SIGTERM or
 * SIGINT from the parent had reached it by then), "killed N" once its leftovers are gone, and
 * "end STATUS" (CMD's wait status, as waitpid gave it) when nothing of the trial is left (all
 * three in one write when CMD left no process behind: the reader wakes once); it then closes FD and
 * puts /dev/null on its stdout and stderr, and only then removes the trial's cgroup and exits. */
#ifndef FLAGTUNE_SUPERVISE_H
#define FLAGTUNE_SUPERVISE_H

#include <stdint.h>
#include <sys/types.h>

/* The first argv word that selects supervisor mode in cli_main. */
#define SUPERVISE_ARG "__supervise"

/* Runs the supervisor. ARGV[0] is "__supervise"; then optional "--parent PID" (the process
 * whose death ends the trial; default: the parent at start), optional "--grace SECONDS"
 * (default 5), optional "--report FD", optional "--no-cgroup" (contain by the /proc walk
 * alone), "--", and the command. Returns the exit code (only on errors before the command
 * runs: 2 bad usage, 1 parent already gone, 126/127 the command cannot start); otherwise it
 * does not return: it exits or re-raises the command's signal. */
int supervise_main(int argc, char **argv);

/* Sends BUF (LEN bytes) on the SOCK_SEQPACKET socket SOCK with the NFDS (1 to 3) fds FDS
 * attached by SCM_RIGHTS, retrying on EINTR, never raising SIGPIPE: a request with a trial's
 * stdout, stderr and report pipes (to the fork server or its spare), and the server's
 * announcement of a spare with the spare's request socket. Returns what sendmsg() returned
 * (errno set on -1; EINVAL for NFDS out of range). */
ssize_t supervise_send_fds(int sock, const char *buf, size_t len, const int *fds, int nfds);

/* Receives one message on the SOCK_SEQPACKET socket SOCK into BUF (CAP bytes), recvmsg() FLAGS
 * and MSG_CMSG_CLOEXEC, retrying on EINTR: the first MAX (1 to 3) fds attached by SCM_RIGHTS in
 * FDS, in order, every slot without one -1, the others closed; *MSG_FLAGS gets the message's
 * flags (MSG_TRUNC, MSG_CTRUNC: cut). Returns what recvmsg() returned; on <= 0 no fd is held. */
ssize_t supervise_recv_fds(int sock, void *buf, size_t cap, int flags, int *fds, int max,
                           int *msg_flags);

/* The fork server: `__supervise --server FD PID` (FD: a SOCK_SEQPACKET socket to the
 * orchestrator PID, its parent). The local executor starts one per sweep, at its first trial,
 * so that a trial costs a fork of this small process instead of a fork of the orchestrator
 * and an exec of the supervisor. A trial's request is one sup_req (its strings after it: argv,
 * envp, then cwd when SUP_REQ_CWD) with the trial's stdout, stderr and report pipe
 * (SCM_RIGHTS, in that order). A child of the server becomes the trial's supervisor, exactly
 * as above (the session leader of its group; its parent whose death ends the trial is the
 * server; the orchestrator's signals are the stop requests) with the pipes as its fds 1, 2 and
 * 3 and /dev/null as 0.
 *
 * That child is a spare when there is one: the server keeps at least two waiting (forked at the
 * start and whenever fewer than two wait; FLAGTUNE_NO_SPARE in the server's environment turns
 * this off), prepared (session, signals, PR_SET_PDEATHSIG with the server re-checked, its
 * cgroup), and announced as SUP_MSG_SPARE {pid, 0} with its request socket attached (one fd).
 * The orchestrator sends the request there itself, and the spare answers with one byte, 'k', once
 * it has the request and the pipes (it has told the server first, 't' on a link of its own, so
 * that the server reports its end). A spare that is gone (the send fails, or EOF instead of the
 * byte) never started anything; one that does not answer within 2 s is cut off (the orchestrator
 * shuts its reading side: the byte can no longer be sent, and a spare that cannot send it leaves
 * without running anything). Either way the request then goes to the server. A spare runs nothing
 * without a request and leaves at EOF on its request socket or on its link (the server gone).
 *
 * A spare serves one request after another. Its trial's end is its "end" line (written once
 * nothing of the trial is left, also when the command could not start), after which it closes
 * the trial's pipes, keeps its cgroup when the trial left it empty and waits on the same
 * request socket (it has told the server 'b' just before the "end", so that the server counts
 * it waiting before another trial can start): the orchestrator takes that socket back among its
 * spares at the trial's "end" and never signals that trial's group again. A spare that cannot serve
 * again (a process of the trial it could not end) leaves instead. Each trial gets the environment
 * and working directory of its request, and the watched signals still pending from the last trial
 * are dropped when the next request comes.
 *
 * The orchestrator hands each request to the oldest spare it holds; at each SPARE it lets go
 * of those whose socket hung up (they died), and of the oldest when it holds 64.
 *
 * A request sent to the server itself (no spare at hand) is taken by a fresh fork; the server
 * answers SUP_MSG_STARTED {pid, 0} once the child leads its group with its signals blocked
 * ({0, errno} when it could not fork or the request was malformed or cut: E2BIG); that fresh
 * fork serves its one request and exits as the command ended. When a supervisor ends the server
 * sends SUP_MSG_EXITED {pid, wait status}, after its pid's STARTED or SPARE (a spare's too: the
 * orchestrator ignores a pid it has no live trial for). The orchestrator
 * stores the announced pid with the next trial's first row; the supervisor that takes the
 * request decides. The server dies with the orchestrator (PR_SET_PDEATHSIG, SIGKILL) and
 * leaves at EOF; each child then sees its parent gone and ends its trial as a supervisor does
 * when the orchestrator dies. */
#define SUPERVISE_SERVER_ARG "--server"

enum { SUP_MSG_SPAWN = 1, SUP_MSG_STARTED = 2, SUP_MSG_EXITED = 3, SUP_MSG_SPARE = 4 };
enum { SUP_REQ_CWD = 1, SUP_REQ_NO_CGROUP = 2 };
enum { SUP_REQ_MAX = 192 * 1024 }; /* the longest request; longer ones take the exec path */

typedef struct {
  uint32_t kind; /* SUP_MSG_SPAWN */
  uint32_t grace_ms;
  uint32_t argc, envc;
  uint32_t flags; /* SUP_REQ_* */
  uint32_t pad;
} sup_req;

typedef struct {
  int32_t kind;  /* SUP_MSG_STARTED, SUP_MSG_EXITED or SUP_MSG_SPARE */
  int32_t pid;   /* the trial's supervisor (0: none started) */
  int32_t value; /* STARTED: 0 or errno; EXITED: waitpid()'s status */
} sup_msg;

#endif
