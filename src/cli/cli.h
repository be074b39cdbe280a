/* The command line: parses argv, runs one command, returns the process exit code
 * (0 success, 1 the sweep ran but something failed, 2 bad usage or input, 130 interrupted). */
#ifndef FLAGTUNE_CLI_H
#define FLAGTUNE_CLI_H

int cli_main(int argc, char **argv);

#endif
