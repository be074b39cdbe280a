#!/usr/bin/env bash
# End-to-end: command-line forms a user writes as in the experiment file (docs/CLI.md):
#  1. --hours takes hours (8, 1.5) or a duration ("8h", "90m", "2h30m"); anything else is exit 2
#  2. report without -o refuses to write HTML to a terminal (exit 2, nothing on the terminal
#     but the message); -o - writes it there anyway; a pipe gets the page
# Usage: test_cli_units.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v script > /dev/null || skip_all "script (util-linux) is needed for a terminal"

cat > e.lua <<LUA
return experiment {
  name = "u", model = "m", hardware = "h",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 2, steps = 4 },
}
LUA
# 1. --hours
for pair in "8:8 h" "1.5:1.5 h" "8h:8 h" "90m:1.5 h" "2h30m:2.5 h"; do
  "$ft" check e.lua --hours "${pair%%:*}" > h.out 2>&1
  has h.out "at most ${pair#*:}"
done
for bad in 8x 0 -1 h ""; do
  "$ft" check e.lua --hours "$bad" > h.out 2>&1
  check_eq "--hours '$bad' is exit 2" "$?" 2
done
has h.out "--hours needs a positive number of hours or a duration (8, 8h, 90m)"
"$ft" -q run e.lua --hours 1h > /dev/null 2>&1 || fail "run --hours 1h"
check_eq "run --hours 1h stores 1 hour" "$(val 'SELECT budget_hours FROM sweeps WHERE id = 1')" 1

# 2. report to a terminal
script -qec "\"$ft\" report 1 > /dev/tty; echo rc=\$?" /dev/null > tty.out 2>&1
has tty.out "report writes an HTML page: give -o FILE.html"
has tty.out "rc=2"
check "nothing of the page reached the terminal" bash -c "! grep -q '<html' tty.out"
script -qec "\"$ft\" report 1 -o - > /dev/tty" /dev/null > dash.out 2>&1
has dash.out "<!DOCTYPE html>"
"$ft" report 1 | head -c 200 > pipe.out
has pipe.out "<!DOCTYPE html>"
finish
