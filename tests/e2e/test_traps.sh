#!/usr/bin/env bash
# End-to-end: the traps a first user met (issue 13, section 6) that are not pinned elsewhere.
# (budget.hours = "8" and range() without a step: tests/e2e/cases/bad_budget_hours_no_unit,
# bad_range_no_step; 16 GPUs of an 8-GPU node, best's variables, export --model's trial number,
# best/flags exit 1: test_sweep.sh and test_flags.sh.)
#  1. show prints a failed trial's reason as its first line, also when the stored error holds
#     more lines (the escaped line break of a terminal-safe listing ends it too)
#  2. check shows the time budget; a winner measured once says it is not confirmed
#  3. best --model nosuch: exit 1 with a message; export --model nosuch: exit 2, nothing written
#  4. `help flags` explains flags (it said "no command"), `help nosuch` exits 2
# Usage: test_traps.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > t.lua <<LUA
return experiment {
  name = "t", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  strategy = grid {},
  budget = { trials = 3, steps = 6, hours = 2 },
}
LUA
"$ft" check t.lua > check.out 2>&1
has check.out "at most 2 h"
"$ft" -q run t.lua > /dev/null 2>&1 || die "the sweep did not run"

# 1. a two-line error: show prints its first line only
sql "$FLAGTUNE_DB" "UPDATE trials SET status = 'crash', value = NULL,
  error = 'RuntimeError: first line of the reason' || char(10) || 'second line' WHERE number = 1"
"$ft" show 1 > show.out
check_eq "show prints the reason's first line under the trial" \
  "$(grep -c '^       RuntimeError: first line of the reason$' show.out)" 1
check "nor the rest of the error" lacks -q 'second line' show.out
check "no escaped line break" lacks -qF '\x0a' show.out

# 2b. a winner measured once (no confirmation in a 3-trial budget) is marked so: the interval
# from one run's steps is not an interval of the speedup
"$ft" show 1 > show1.out
has show1.out "a single run, not confirmed"
"$ft" export 1 > export1.sh
has export1.sh "not confirmed"

# 3. nothing matches
"$ft" best --model nosuch > best.out 2>&1
check_eq "best --model nosuch: exit 1" "$?" 1
has best.out "no ok trial yet for that model/hardware"
"$ft" export --model nosuch -o never.sh > /dev/null 2> export.err
check_eq "export --model nosuch: exit 2" "$?" 2
has export.err "no ok trial for model 'nosuch'"
check "nothing written" [ ! -e never.sh ]

# 4. help names every command, flags included
"$ft" help flags > help.out 2>&1
check_eq "help flags: exit 0" "$?" 0
has help.out "usage: flagtune flags [PATTERN]"
"$ft" help nosuch > /dev/null 2> help.err
check_eq "help nosuch: exit 2" "$?" 2
has help.err "no command 'nosuch'"
finish
