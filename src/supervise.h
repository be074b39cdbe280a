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
 * Otherwise it is transparent: it exits with CMD's exit code or re-raises the signal that
 * ended CMD, and reports a command that cannot be started as one stderr line ("command not
 * found: X", "permission denied: X", "cannot start X: why") with exit 127 (not found) or 126
 * (anything else), which exec.c maps back to exec_result.spawn_error.
 *
 * With --report FD (close-on-exec, so the command never sees it) it writes two lines there:
 * "exit SECONDS STOPPED" as soon as CMD has ended (its own duration, and 1 when a SIGTERM or
 * SIGINT from the parent had reached it by then) and "killed N" once its leftovers are gone. */
#ifndef FLAGTUNE_SUPERVISE_H
#define FLAGTUNE_SUPERVISE_H

/* The first argv word that selects supervisor mode in cli_main. */
#define SUPERVISE_ARG "__supervise"

/* Runs the supervisor. ARGV[0] is "__supervise"; then optional "--parent PID" (the process
 * whose death ends the trial; default: the parent at start), optional "--grace SECONDS"
 * (default 5), optional "--report FD", optional "--no-cgroup" (contain by the /proc walk
 * alone), "--", and the command. Returns the exit code (only on errors before the command
 * runs: 2 bad usage, 1 parent already gone, 126/127 the command cannot start); otherwise it
 * does not return: it exits or re-raises the command's signal. */
int supervise_main(int argc, char **argv);

#endif
