#!/usr/bin/env bash
# End-to-end: not a terminal (a log, `| tee`, --detach), the live view adds a timestamped
# status line every $FLAGTUNE_STATUS_EVERY seconds (docs/CLI.md): counts, running trials,
# ETA, baseline and best; 0 turns it off; a run shorter than the interval prints none.
# Usage: test_status_line.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > s.lua <<LUA
return experiment {
  name = "st", model = "m", hardware = "h",
  command = { "$stub", "steps", "15", "100" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 3 }, software_probe = false,
}
LUA
FLAGTUNE_STATUS_EVERY=1 "$ft" run s.lua > /dev/null 2> every.err || fail "run with status lines"
re='^[0-9-]+ [0-9:]+ status: [0-9]+/3 done .*running [0-9]+.* \| baseline'
n=$(grep -cE "$re" every.err)
check "status lines, timestamped, with counts and the baseline ($n)" [ "$n" -ge 1 ]
check "a status line after the baseline shows it" grep -qE 'status: [12]/3 done +ok [12].*\| baseline [0-9.]+ ms' every.err
check "the trial lines are still there" [ "$(grep -cE '\] #[0-9]+ +ok' every.err)" -eq 3 ]
FLAGTUNE_STATUS_EVERY=0 "$ft" run s.lua > /dev/null 2> off.err || fail "run without status lines"
check "FLAGTUNE_STATUS_EVERY=0: none" not grep -q ' status: ' off.err
"$ft" run s.lua > /dev/null 2> default.err || fail "run with the default interval"
check "a run shorter than the default minute: none" not grep -q ' status: ' default.err
finish
