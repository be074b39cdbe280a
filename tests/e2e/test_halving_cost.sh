#!/usr/bin/env bash
# End-to-end: halving{} reads what a trial cost (tell's wall_ms and step_ms, src/luahost/strategy.h)
# and stops halving when a trial's start costs many steps (search/halving.lua,
# docs/STRATEGIES.md "halving"). The stub sleeps 1.5 s before its first step and 10 ms between
# steps: a start of about 150 steps on any machine (a loaded one only slows the steps a
# little against a second), far above the 35 of the rule for 5 and 45 steps. The first
# trial is a 5-step rung (nothing is measured yet), its bracket then promotes it, and every
# later trial is a fresh configuration at 45 steps. A start of nothing (no sleep) halves.
# Usage: test_halving_cost.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write() { # NAME SLEEP
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "m", hardware = "h",
  command = { "$stub", "sleep", "$2", "steps", "{steps}", "10" },
  metric = { json = "step_time_ms", skip = 1 },
  vars = { V = int(1, 40, 1), W = int(1, 40, 1) },
  strategy = halving {}, confirm = false,
  budget = { trials = 8, steps = 45 }, seed = 1, software_probe = false,
}
LUA
}
write slow 1.5
"$ft" -q run slow.lua --db slow.db > slow.out 2>&1 || die "the sweep failed: $(cat slow.out)"
FLAGTUNE_DB=slow.db
check_eq "the first search trial is a 5-step rung" \
  "$(val "SELECT steps_budget FROM trials WHERE number = 1")" 5
check_eq "then its promotion, the same configuration at 45" \
  "$(val "SELECT count(*) FROM trials a JOIN trials b ON a.config = b.config
          WHERE a.number = 1 AND b.number = 2 AND b.steps_budget = 45")" 1
check_eq "then fresh configurations at full length" \
  "$(val "SELECT count(DISTINCT config) || ' ' || min(steps_budget) FROM trials
          WHERE number >= 3 AND role = 'search'")" "5 45"
write fast 0
"$ft" -q run fast.lua --db fast.db > fast.out 2>&1 || die "the sweep failed: $(cat fast.out)"
FLAGTUNE_DB=fast.db
check_eq "a cheap start halves: 5-step rungs after the first trial too" \
  "$(val "SELECT count(*) FROM trials WHERE number >= 3 AND steps_budget = 5")" 5
finish
