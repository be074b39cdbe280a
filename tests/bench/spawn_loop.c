/* The floor of a process per trial (bench_cost.sh, bench_switches.sh): N spawns of ARGV, P at
 * a time. Usage: spawn_loop N P COMMAND [ARG...] */
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
extern char **environ;
int main(int argc, char **argv) {
  if (argc < 4) return 2;
  int n = atoi(argv[1]), p = atoi(argv[2]), live = 0;
  for (int i = 0; i < n; i++) {
    pid_t pid;
    if (posix_spawn(&pid, argv[3], NULL, NULL, argv + 3, environ) != 0) return 1;
    if (++live == p) {
      wait(NULL);
      live--;
    }
  }
  while (live-- > 0) wait(NULL);
  return 0;
}
