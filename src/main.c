/* flagtune: hands argv to the command line and returns its exit code. */
#include "cli.h"

int main(int argc, char **argv) {
  return cli_main(argc, argv);
}
