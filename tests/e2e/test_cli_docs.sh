#!/usr/bin/env bash
# End-to-end: the output examples in docs/CLI.md are what the program prints. Each block after a
# `<!-- cli-example: CMD -->` marker must equal the start of `flagtune CMD` (1 for sweep
# commands) after the quick start's demo (experiments/demo.lua --seed 7; the simulator is
# deterministic, so its numbers are too).
# Usage: test_cli_docs.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
doc=$src/docs/CLI.md

(cd "$src" && "$ft" -q run experiments/demo.lua --seed 7 > /dev/null 2>&1) ||
  die "the demo did not run"

# The first fenced block after the marker for CMD.
example() {
  awk -v m="<!-- cli-example: $1 -->" '
    $0 == m { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$doc"
}
n=0
for cmd in $(sed -n 's/^<!-- cli-example: \([a-z]*\) -->$/\1/p' "$doc"); do
  n=$((n + 1))
  want=$(example "$cmd")
  case $cmd in
    sweeps | best) got=$("$ft" "$cmd") ;;
    *) got=$("$ft" "$cmd" 1) ;;
  esac
  lines=$(printf '%s\n' "$want" | wc -l)
  got=$(printf '%s\n' "$got" | head -n "$lines")
  check_eq "docs/CLI.md's '$cmd' example is the program's output" "$got" "$want"
done
check "CLI.md has examples to check ($n)" [ "$n" -ge 3 ]
finish
