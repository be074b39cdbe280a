#!/usr/bin/env bash
# End-to-end: metric.better = "higher" (docs/EXPERIMENTS.md, "Higher is better").
#  1. the same simulated sweep read as a step time (ms) and as a rate (it/s, 1000 / ms, printed
#     like tqdm) picks the same winner with the same speedup: a faster configuration is a
#     higher rate and ranks first, and its speedup over the baseline is above 1
#  2. show, best, sweeps, export, the report and the progress lines give the rate as the user's metric
#     printed it (N/s), never the stored cost
#  3. check warns about a rate metric without `better`; a bad `better` is a file:line error
#     (exit 2); `unit` with a rate is refused
# Usage: test_better.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# The simulator's step times as tqdm's rate: "step N: X it/s", X = 1000 / ms.
cat > rate.sh <<'SH'
#!/bin/sh
"$FLAGTUNE_SIM" "$@" | awk '/"step_time_ms"/ { gsub(/[{}",:]/, " "); print "step " $2 ": " 1000 / $4 " it/s"; fflush() }'
SH
chmod +x rate.sh

exp() { # NAME COMMAND... METRIC
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "sim-$1", hardware = "test-box",
  command = { $2, "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = $3,
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "1GiB") },
  strategy = random {},
  budget = { trials = 10, steps = 8 },
  seed = 5,
}
LUA
}
exp ms "\"$sim\"" '{ json = "step_time_ms", skip = 2 }'
exp rate '"./rate.sh"' '{ pattern = "([%d.]+) it/s", skip = 2, better = "higher" }'

"$ft" -q run ms.lua > ms.out 2>&1 || die "the ms sweep did not run: $(tail -5 ms.out)"
"$ft" run rate.lua > rate.out 2> rate.err || die "the rate sweep did not run: $(tail -5 rate.err)"

# 1. the same winner, the same speedup
w_ms=$(val "SELECT best_trial FROM sweep_summary WHERE name = 'ms'")
w_rate=$(val "SELECT best_trial FROM sweep_summary WHERE name = 'rate'")
check_eq "the rate sweep's winner is the step-time sweep's" "$w_rate" "$w_ms"
sp_ms=$(val "SELECT printf('%.3f', speedup) FROM sweep_summary WHERE name = 'ms'")
sp_rate=$(val "SELECT printf('%.3f', speedup) FROM sweep_summary WHERE name = 'rate'")
check_eq "the same speedup" "$sp_rate" "$sp_ms"
check "the winner is faster than the baseline (speedup > 1)" \
  awk -v s="$sp_rate" 'BEGIN { exit !(s > 1.0) }'
# The stored value is the cost: 1000 / rate, the step time here (to the rate's 6 digits).
d=$(val "SELECT printf('%.0f', 1000 * abs(r.value - m.value) / m.value) FROM trials r JOIN trials m
         ON m.number = r.number AND m.sweep_id = 1 WHERE r.sweep_id = 2 AND r.number = 0")
check_eq "the stored value is the rate's cost, 1000 / rate (ms per iteration)" "$d" "0"

# 2. the rate everywhere a person reads it
base_rate=$(val "SELECT printf('%.2f', 1000.0 / value) FROM trials WHERE sweep_id = 2 AND number = 0")
"$ft" show rate > show.out
has show.out "PER_SECOND"
has show.out "vs baseline ${base_rate}/s"
# (the cost line is wall time, in ms whatever the metric)
check "show prints no stored cost as ms" bash -c "! grep -v '^cost:' show.out | grep -q ' ms'"
has show.out "variance of log rate explained"
"$ft" best --model sim-rate > best.out
has best.out "vs baseline ${base_rate}/s (${sp_rate}x, a single run, not confirmed)"
"$ft" sweeps > sweeps.out
has sweeps.out "${base_rate}/s"
"$ft" export rate > export.out
has export.out "# rate "
has export.out "vs baseline ${base_rate}/s"
has rate.err "${base_rate}/s"
"$ft" report rate -o r.html > /dev/null 2>&1 || fail "report of the rate sweep"
has r.html "${base_rate}/s"
has r.html "best rate so far (per second)"
has r.html "# rate "
"$ft" sweeps --json > sweeps.json
check "sweeps --json says better: higher for the rate sweep" \
  grep -q '"better":[[:space:]]*"higher"' sweeps.json

# 3. check
cat > warn.lua <<'LUA'
return experiment {
  name = "w", command = { "./rate.sh", "--steps", "{steps}" },
  metric = { pattern = "([%d.]+)it/s" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 2, steps = 4 },
}
LUA
"$ft" check warn.lua > warn.out 2>&1
check_eq "check of a rate without better exits 0" "$?" "0"
has warn.out 'warn.lua:3: warning: the metric pattern reads "it/s", a rate, but lower is better'
sed 's/metric = { pattern = "(\[%d.\]+)it\/s" }/metric = { pattern = "([%d.]+)it\/s", better = "up" }/' \
  warn.lua > bad.lua
"$ft" check bad.lua > bad.out 2>&1
check_eq "a bad better is exit 2" "$?" "2"
has bad.out "bad.lua:3: 'metric.better' must be \"lower\" (a step time) or \"higher\" (a rate such as it/s), got \"up\""
sed 's/metric = { pattern = "(\[%d.\]+)it\/s" }/metric = { pattern = "([%d.]+)it\/s", better = "higher", unit = "s" }/' \
  warn.lua > unit.lua
"$ft" check unit.lua > unit.out 2>&1
check_eq "unit with a rate is exit 2" "$?" "2"
has unit.out "unit.lua:3: 'metric.unit' is a time unit"
sed 's/metric = { pattern = "(\[%d.\]+)it\/s" }/metric = { pattern = "([%d.]+)it\/s", better = "higher" }/' \
  warn.lua > good.lua
"$ft" check good.lua > good.out 2>&1
check "check with better = higher does not warn" bash -c "! grep -q warning good.out"
finish
