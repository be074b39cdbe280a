#!/usr/bin/env bash
# End-to-end: `flagtune compare A B` on real sweeps of the simulated workload.
#  1. a sweep against itself: B vs A is 1.000x with no measurable difference, every winning
#     setting the same
#  2. two sweeps in two databases (DB:SWEEP): text rows, --json fields, settings that differ
#  3. bad references exit 2 with a clear message and print nothing on stdout
#  4. a rate sweep (metric.better = "higher") reads as its rate, with "better" in --json and
#     a note against a step-time sweep
# Usage: test_compare.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # name seed landscape
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "$3", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "1GiB"),
  },
  strategy = random {},
  budget = { trials = 10, steps = 12 },
  seed = $2,
}
LUA
}
write_exp old 5 fsdp8
write_exp new 7 single
"$ft" -q run old.lua > /dev/null 2> run1.err || die "first sweep failed: $(tail -3 run1.err)"
"$ft" -q run new.lua --db new.db > /dev/null 2> run2.err || die "second sweep failed"

# 1. itself
"$ft" compare 1 old > self.txt 2> err.txt
check_eq "compare exits 0" "$?" 0
check "best, B vs A: 1.000x, no measurable difference" grep -qE "^best, B vs A: 1.000x \\(95% CI 0.9[0-9]+-1.0[0-9]+\\), no measurable difference" self.txt
has self.txt "baseline, B vs A: 1.000x"
check "no setting differs" lacks -qE '^  (differ|only in)' self.txt
check "the winning flags are listed as the same" grep -q '^  same       xla_gpu_' self.txt

# 2. two databases
"$ft" compare old new.db:new > two.txt 2> err.txt
check_eq "DB:SWEEP compare exits 0" "$?" 0
has two.txt "1 \"old\" in $FLAGTUNE_DB"
has two.txt '1 "new" in new.db'
for row in model hardware software strategy trials baseline best speedup; do
  check "row $row" grep -q "^$row " two.txt
done
"$ft" compare old new.db:1 --json > c.json
check_eq "--json exits 0" "$?" 0
j() { sql :memory: "SELECT json_extract(readfile('c.json'), '$1')"; }
check_eq "json a.name" "$(j '$.a.name')" old
check_eq "json b.db" "$(j '$.b.db')" new.db
check_eq "json a.baseline_ms is the baseline trial's value" \
  "$(j '$.a.baseline_ms')" "$(val "SELECT round(value, 4) FROM trials WHERE number = 0")"
lo=$(j '$.best_b_vs_a.lo') sp=$(j '$.best_b_vs_a.speedup') hi=$(j '$.best_b_vs_a.hi')
check "lo <= speedup <= hi ($lo $sp $hi)" awk -v l="$lo" -v s="$sp" -v h="$hi" \
  'BEGIN { exit !(l > 0 && l <= s && s <= h) }'
check_eq "json flags is an object of four parts" \
  "$(sql :memory: "SELECT group_concat(key) FROM json_each(json_extract(readfile('c.json'), '\$.flags'))")" \
  "same,differ,only_a,only_b"
check "json confirmed is a boolean" grep -qx 'true\|false' \
  <(sql :memory: "SELECT json_type(readfile('c.json'), '\$.a.confirmed')")

# 3. bad references
"$ft" compare 1 nosuch > out.txt 2> err.txt
check_eq "unknown sweep: exit 2" "$?" 2
has err.txt "no sweep named 'nosuch'"
check "unknown sweep: nothing on stdout" [ ! -s out.txt ]
"$ft" compare 1 gone.db:1 > out.txt 2> err.txt
check_eq "missing database: exit 2" "$?" 2
has err.txt "gone.db"
check "missing database not created" [ ! -e gone.db ]
"$ft" compare 1 > out.txt 2> err.txt
check_eq "one sweep only: exit 2" "$?" 2
has err.txt "usage: flagtune compare A B"

# 4. a rate sweep: the simulator's step times printed as tqdm's rate, X it/s = 1000 / ms
cat > rate.sh <<'SH'
#!/bin/sh
"$FLAGTUNE_SIM" "$@" | awk '/"step_time_ms"/ { gsub(/[{}",:]/, " "); print "step " $2 ": " 1000 / $4 " it/s"; fflush() }'
SH
chmod +x rate.sh
sed -e 's|"'"$sim"'"|"./rate.sh"|' -e 's|name = "old"|name = "rate"|' \
  -e 's|metric = { json = "step_time_ms", skip = 2 }|metric = { pattern = "([%d.]+) it/s", skip = 2, better = "higher" }|' \
  old.lua > rate.lua
grep -q 'better = "higher"' rate.lua && grep -q rate.sh rate.lua || die "rate.lua was not written"
"$ft" -q run rate.lua --db rate.db > /dev/null 2> run3.err || die "rate sweep failed: $(tail -3 run3.err)"
"$ft" compare rate.db:rate rate.db:rate > rate.txt 2> err.txt
check_eq "compare of a rate sweep exits 0" "$?" 0
base_rate=$(sql rate.db "SELECT printf('%.2f', 1000.0 / baseline_ms) FROM sweep_summary")
best_rate=$(sql rate.db "SELECT printf('%.2f', 1000.0 / best_ms) FROM sweep_summary")
check "its baseline reads as the rate (${base_rate}/s)" \
  grep -qE "^baseline +${base_rate}/s +${base_rate}/s$" rate.txt
check "its best reads as the rate (${best_rate}/s)" grep -qE "^best +${best_rate}/s +${best_rate}/s$" rate.txt
check "no value in ms" lacks -q ' ms' rate.txt
"$ft" compare rate.db:rate rate.db:rate --json > rate.json
check_eq "--json: the side says better = higher" \
  "$(sql :memory: "SELECT json_extract(readfile('rate.json'), '\$.a.better')")" higher
check_eq "--json: best_ms is the stored cost" \
  "$(sql :memory: "SELECT printf('%.2f', 1000.0 / json_extract(readfile('rate.json'), '\$.a.best_ms'))")" \
  "$best_rate"
"$ft" compare old rate.db:rate > mixed.txt
check "a step-time sweep against a rate sweep: each in its unit" \
  grep -qE "^baseline +[0-9.]+ ms +${base_rate}/s$" mixed.txt
has mixed.txt "note: the metric differs: one sweep's is a rate"
finish
