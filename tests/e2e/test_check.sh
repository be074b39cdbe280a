#!/usr/bin/env bash
# The correctness guard (metric.check): a configuration that makes steps faster but computes
# something else must never win. flagtune-sim --corrupt-ll128 makes an explicit LL128 in
# NCCL_PROTO 10 % faster with a drifting loss (NCCL 2.18.1's release notes report data
# corruption with LL128 on HGX H100); with metric.check that trial is `wrong`, never the best,
# never exported, and a resumed sweep compares with the same baseline losses.
# Usage: test_check.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # write_exp FILE PARALLEL CHECK_LINE
  cat > "$1" <<LUA
return experiment {
  name = "check", model = "sim-check", hardware = "box",
  command = { "$sim", "--steps", "8", "--time-scale", "0", "--noise", "0", "--corrupt-ll128" },
  metric = { json = "step_time_ms", skip = 2, $3 },
  vars = { NCCL_PROTO = choice { "SIMPLE", "LL,LL128,SIMPLE", "LL128" } },
  strategy = grid {}, budget = { trials = 4 }, parallel = $2, confirm = false, seed = 1,
}
LUA
}

# 1. Without the guard the corrupting configuration wins: the reason for the guard.
write_exp plain.lua 1 "reduce = \"median\""
"$ft" -q run --db plain.db plain.lua > /dev/null 2>&1 || true
check_eq "without metric.check an LL128 trial is the best" \
  "$("$ft" query --db plain.db "SELECT env LIKE '%LL128%' FROM best" | tail -n 1)" 1

# 2. With the guard (parallel 2: the search waits for the baseline's losses).
write_exp check.lua 2 "check = { json = \"loss\", tolerance = 0.02 }"
"$ft" -q run check.lua > out.txt 2> err.txt
check_eq "run exits 0" "$?" 0
check_eq "both LL128 trials are wrong" \
  "$(val "SELECT count(*) FROM trials WHERE status = 'wrong' AND env LIKE '%LL128%'")" 2
check_eq "the SIMPLE trial is ok" \
  "$(val "SELECT status FROM trials WHERE env LIKE '%\"SIMPLE\"%'")" ok
check "a wrong trial says why first" \
  grep -q "^wrong: loss" <(val "SELECT error FROM trials WHERE status = 'wrong' LIMIT 1")
check_eq "the best is not a wrong trial" \
  "$(val "SELECT count(*) FROM best b JOIN trials t ON t.id = b.trial_id WHERE t.status <> 'ok'")" 0
"$ft" export 1 > export1.txt
check_eq "export 1 exits 0" "$?" 0
check "export carries no LL128" lacks -q LL128 export1.txt
check_eq "every trial kept its losses" \
  "$(val "SELECT count(*) FROM trials WHERE json_array_length(losses) = 8")" 4
check_eq "no search trial started before the baseline ended" \
  "$(val "SELECT count(*) FROM trials t, trials b WHERE b.number = 0 AND t.number > 0 AND t.started_at < b.finished_at")" 0
check_eq "sweeps counts wrong" \
  "$("$ft" sweeps --json | grep -o '"wrong":[[:space:]]*[0-9]*' | tr -d ' \t')" '"wrong":2'

# 3. A tolerance of nothing is refused at check time.
cat > zero.lua <<'LUA'
return experiment {
  command = { "true" },
  metric = { json = "ms", check = { json = "loss", tolerance = 0 } },
  vars = { A = choice { "1", "2" } },
}
LUA
"$ft" check zero.lua > /dev/null 2> zero.err
check_eq "zero tolerance: exit 2" "$?" 2
has zero.err "zero.lua:3: metric.check needs a tolerance above 0 (relative) or abs above 0"

# 4. Resume: a sweep interrupted after its baseline compares later trials with the stored
#    baseline losses.
write_exp resume.lua 1 "check = { json = \"loss\", tolerance = 0.02 }"
"$ft" -q run --db r.db --trials 2 resume.lua > /dev/null 2>&1
sql r.db "UPDATE sweeps SET status = 'interrupted', budget_trials = 4, pid = NULL;
          UPDATE sweeps SET options_json = json_set(options_json, '\$.trials', 4)"
"$ft" -q resume --db r.db 1 > /dev/null 2> r.err
check_eq "resume exits 0" "$?" 0
check_eq "after resume the LL128 trials are wrong" \
  "$("$ft" query --db r.db "SELECT count(*) FROM trials WHERE status = 'wrong'" | tail -n 1)" 2
finish
