#!/usr/bin/env bash
# End-to-end: `flagtune check EXPERIMENT.lua --sample LOG` (docs/CLI.md "check"):
#  1. a simulated run's log: every step time the metric takes with its line, the skipped ones
#     marked, and the value a trial of the same output records (the same number as `run`)
#  2. a wrong JSON key: exit 2, naming the keys the log's JSON lines hold, each once
#  3. a pattern that matches nothing: exit 2, quoting the lines that look like steps
#  4. a rate (better = "higher") shown as the rate; bad values counted; metric.check's losses
#  5. a missing log is exit 2; `--db` is accepted; "\d" in a pattern says Lua patterns use %d
# Usage: test_check_sample.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

"$sim" --landscape fsdp8 --steps 8 --time-scale 0 > sim.log 2>&1 || die "the simulator did not run"
mk() { # FILE METRIC
  cat > "$1" <<LUA
return experiment {
  name = "s", model = "m", hardware = "h", command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = $2,
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 2, steps = 8 },
}
LUA
}

# 1. what it reads, and the value run records for the same output
mk ok.lua '{ json = "step_time_ms", skip = 2 }'
"$ft" check ok.lua --sample sim.log > ok.out 2>&1
check_eq "check --sample exits 0" "$?" 0
has ok.out "sim.log: the metric read 8 step times from"
has ok.out "the first 2 skipped (metric.skip)"
check_eq "two step lines marked skipped" "$(grep -cE '^ +[0-9].*skipped \(metric.skip\)$' ok.out)" 2
first=$(grep -m1 '"step": 1,' sim.log | sed 's/.*"step_time_ms": \([0-9.]*\).*/\1/')
line=$(grep -n -m1 '"step": 1,' sim.log | cut -d: -f1)
check "step 1 is read from line $line with its value $first" grep -qE "^ +1 +$line +$first +skipped" ok.out
"$ft" -q run ok.lua > /dev/null 2>&1 || die "run ok.lua"
# a trial's own log, read by check, gives the value the trial recorded
want=$(awk -v v="$(val "SELECT value FROM trials WHERE number = 0")" 'BEGIN { printf "%.2f", v }')
log=$(val "SELECT log_path FROM trials WHERE number = 0")
"$ft" check ok.lua --sample "$log" > trial.out 2>&1
has trial.out "value: $want ms (median of 6 step times)"

# 2. a wrong key
mk key.lua '{ json = "step_ms", skip = 2 }'
"$ft" check key.lua --sample sim.log > key.out 2>&1
check_eq "a wrong key is exit 2" "$?" 2
has key.out "sim.log: the metric read no step time: no line is a JSON object with the key 'step_ms'; its 8 JSON lines hold the keys 'step', 'step_time_ms', 'loss'"
check_eq "each key named once" "$(grep -o "'step_time_ms'" key.out | wc -l)" 1

# 3. a pattern that matches nothing
mk pat.lua '{ pattern = "iter (%d+) ms" }'
"$ft" check pat.lua --sample sim.log > pat.out 2>&1
check_eq "a pattern matching nothing is exit 2" "$?" 2
has pat.out "no line matches the pattern 'iter (%d+) ms'; lines that look like steps:"
has pat.out '  {"step": 1, "step_time_ms": '

# 4. a rate, bad values, losses
awk '/"step_time_ms"/ { gsub(/[{}",:]/, " "); print $2 "/8 [00:01, " 1000 / $4 "it/s]" }' sim.log > rate.log
mk rate.lua '{ pattern = "([%w.]+)it/s", better = "higher" }'
"$ft" check rate.lua --sample rate.log > rate.out 2>&1
check_eq "a rate sample exits 0" "$?" 0
has rate.out "PER_SECOND"
r1=$(awk 'NR == 1 { sub(/.*, /, ""); sub(/it.*/, ""); printf "%.2f", $0 }' rate.log)
check "the rate is shown as the rate ($r1)" grep -qE "^ +1 +1 +$r1\$" rate.out
has rate.out "/s (median of 8 step times)"
{ cat sim.log; echo '{"step": 9, "step_time_ms": -5}'; } > bad.log
"$ft" check ok.lua --sample bad.log > bad.out 2>&1
has bad.out "bad: 1 line carried the metric with a NaN, negative or absurd value"
has bad.out 'the first, line 23: {"step": 9, "step_time_ms": -5}'
mk loss.lua '{ json = "step_time_ms", check = { json = "loss" } }'
"$ft" check loss.lua --sample sim.log > loss.out 2>&1
has loss.out "losses (metric.check): 8: 10.2013"

# 5. errors and options
"$ft" check ok.lua --sample nope.log > nope.out 2>&1
check_eq "a missing log is exit 2" "$?" 2
has nope.out "nope.log: cannot read the sample"
"$ft" check ok.lua --db "$work/x.db" > db.out 2>&1
check_eq "check accepts --db" "$?" 0
check "check --db writes no database" test ! -e "$work/x.db"
mk re.lua '{ pattern = "step_time_ms\": (\d+)" }'
"$ft" check re.lua > re.out 2>&1
check_eq "a \\d pattern is exit 2" "$?" 2
has re.out "re.lua:3: invalid escape sequence"
has re.out "Lua patterns are not regular expressions: write %d, not \\d"
# a hostile log: binary bytes and a directory
head -c 200000 /dev/urandom > rnd.bin
printf 'step\033]0;owned\007 1\n' >> rnd.bin
"$ft" check ok.lua --sample rnd.bin > rnd.out 2>&1
check_eq "a binary log is exit 2" "$?" 2
check "no control byte of the log reaches the terminal" not grep -qP '[\x00-\x08\x0b-\x1f\x7f]' rnd.out
"$ft" check ok.lua --sample "$work" > dir.out 2>&1
check_eq "a directory is exit 2" "$?" 2
has dir.out "cannot read the sample: Is a directory"
finish
