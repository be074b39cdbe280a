#!/usr/bin/env bash
# The generated landscape family of flagtune-sim (--landscape gen:SEED, tests/sim/genland.c,
# docs/SIMULATOR.md "Generated landscapes"): the same seed gives the same space and optimum,
# the printed optimum is the grid's true minimum (whole grid of small instances; one-parameter
# moves and random configurations of full-size ones), 10-40 % of random configurations OOM across
# seeds with XLA's OOM text, noise is 0.5-3 %, bad input exits 2, and flagtune sweeps a
# generated space end to end. The named landscapes are untouched (tests/e2e/test_sim.sh).
# Usage: bash tests/e2e/test_genland.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found (the checks are in Python)"
chk() { nice -n 5 python3 "$src/tests/sim/genland_check.py" "$sim" "$@"; }

# 1. Same seed, same space and optimum; another seed, another space; size options.
"$sim" --landscape gen:11 --print-space > a.lua
"$sim" --landscape gen:11 --print-space > b.lua
check "gen:11 twice: the same space" cmp -s a.lua b.lua
"$sim" --landscape gen:12 --print-space > c.lua
check "gen:12: another space" not cmp -s a.lua c.lua
check_eq "gen:11 twice: the same optimum" "$("$sim" --landscape gen:11 --print-optimum)" \
  "$("$sim" --landscape gen:11 --print-optimum)"
n=$("$sim" --landscape gen:11 --gen-params 17 --print-space-json | grep -c '"name"')
check_eq "--gen-params 17: 17 parameters" "$n" 17
sizes=$(for s in $(seq 1 40); do "$sim" --landscape gen:$s --print-space-json | grep -c '"name"'; done | sort -n)
check "drawn sizes stay in 8..30 ($(echo $sizes | cut -d' ' -f1)..$(echo $sizes | awk '{print $NF}'))" \
  [ "$(echo "$sizes" | head -1)" -ge 8 ] && [ "$(echo "$sizes" | tail -1)" -le 30 ]
check "drawn sizes vary" [ "$(echo "$sizes" | sort -u | wc -l)" -ge 8 ]
# The space is a valid experiment fragment: flags and vars tables of space constructors.
has a.lua "flags = {"
has a.lua "vars = {"
has a.lua "xla_gpu_enable_latency_hiding_scheduler = bool(),"

# 2. Bad input: exit 2 with a message.
"$sim" --landscape gen:x --true-value > /dev/null 2> err.txt
check_eq "gen:x: exit 2" "$?" 2
has err.txt "want gen:SEED, SEED an unsigned integer"
"$sim" --landscape gen:1 --gen-params 2 --true-value > /dev/null 2>&1
check_eq "--gen-params 2: exit 2" "$?" 2
"$sim" --landscape fsdp8 --print-space > /dev/null 2> err.txt
check_eq "--print-space on fsdp8: exit 2" "$?" 2
has err.txt "need a generated landscape"

# 3. The printed optimum is exact: the whole grid of small instances ...
for s in 1; do
  check "gen:$s with 5 parameters: --print-optimum is the brute-force minimum" chk brute $s 5
done
# ... and nothing near or far beats it on full-size ones.
for s in 1001; do
  check "gen:$s: no one-parameter move or random configuration beats the optimum" chk local $s
done

# 4. OOM: 10-40 % of random configurations over many seeds, with XLA's text and exit 1.
check "OOM share over random configurations is 10-40 %" chk oom "$(seq -s, 1 12)" 40
# An over-full pool: the top threshold with the scheduler and pipelining at the smallest fraction.
"$sim" --landscape gen:3 --print-space-json > s3.json
thr=$(python3 -c 'import json,sys; p=[x for x in json.load(open("s3.json"))["params"] if x["name"]=="xla_gpu_all_gather_combine_threshold_bytes"][0]; print(p["values"][-1])')
XLA_PYTHON_CLIENT_MEM_FRACTION=0.5 XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true \
--xla_gpu_all_gather_combine_threshold_bytes=$thr --xla_gpu_enable_pipelined_all_gather=true" \
  "$sim" --landscape gen:3 --steps 3 --time-scale 0 > oom.out 2> oom.err
check_eq "OOM run: exit 1" "$?" 1
has oom.err "RESOURCE_EXHAUSTED: Out of memory while trying to allocate"
has oom.err "BufferAssignment OOM Debugging."
check_eq "OOM: --true-value says oom" "$(XLA_PYTHON_CLIENT_MEM_FRACTION=0.5 \
  XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true \
--xla_gpu_all_gather_combine_threshold_bytes=$thr --xla_gpu_enable_pipelined_all_gather=true" \
  "$sim" --landscape gen:3 --true-value)" oom

# 5. Noise: per-step and per-process 0.5-3 %, centred on the true value; --noise 0 is exact.
check "gen:3: noise within 0.5-3 %" chk noise 3
check "gen:1002: noise within 0.5-3 %" chk noise 1002
XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true" "$sim" --landscape gen:5 --noise 0 \
  --steps 4 --time-scale 0 > n0.out 2> /dev/null
tv=$(XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true" "$sim" --landscape gen:5 --true-value)
check_eq "--noise 0: step 4 is the true value" \
  "$(sed -n 's/.*"step": 4, "step_time_ms": \([0-9.]*\).*/\1/p' n0.out)" "$(printf '%.2f' "$tv")"

# 6. flagtune sweeps a generated space end to end: the printed fragment is the experiment.
"$sim" --landscape gen:7 --print-space > space.lua
cat > gen.lua <<LUA
return experiment {
  name = "gen7", model = "gen-7", hardware = "sim",
  command = { "$sim", "--landscape", "gen:7", "--steps", "{steps}", "--time-scale", "0",
              "--compile-ms", "0" },
  metric = { json = "step_time_ms", skip = 2 },
$(cat space.lua)
  strategy = random {},
  budget = { trials = 16, steps = 10 },
  seed = 3,
}
LUA
"$ft" -q run gen.lua > run.out 2> run.err
code=$?
check "flagtune run on gen:7 exits 0 or 1 (got $code)" [ "$code" = 0 ] || [ "$code" = 1 ]
[ "$code" -le 1 ] || cat run.err
check_eq "16 trials (the baseline among them) stored" "$(val "SELECT count(*) FROM trials")" 16
bestflags=$(val "SELECT xla_flags FROM best")
check "best has XLA_FLAGS" [ -n "$bestflags" ]
ooms=$(val "SELECT count(*) FROM trials WHERE status = 'oom'")
okn=$(val "SELECT count(*) FROM trials WHERE status = 'ok'")
check "every trial ok or OOM ($okn ok, $ooms oom)" [ $((okn + ooms)) = 16 ]
# 7. Costs: every landscape's start and compile come from the ranges of real trials
# (tests/data/real/costs.txt), are printed in its description and replayed by a run.
range() { awk -v k="$1" '$1 == k { print $2, $3 }' "$src/tests/data/real/costs.txt"; }
read -r slo shi <<< "$(range gpu_start_ms)"
read -r clo chi <<< "$(range gpu_compile_steps)"
check "costs.txt has the start and compile ranges" [ -n "$slo" ] && [ -n "$clo" ]
bad=$(for s in $(seq 1 30) 1001 1002; do "$sim" --landscape gen:$s --print-space-json | head -1; done |
  python3 -c '
import json, sys
slo, shi, clo, chi = map(float, sys.argv[1:])
for line in sys.stdin:
    d = json.loads(line.replace("\"params\": [", "\"params\": []}").strip())
    r = d["compile_ms"] / d["t0_ms"]
    if not (slo <= d["start_ms"] <= shi and clo - 0.01 <= r <= chi + 0.01):
        print(d["landscape"], d["start_ms"], d["compile_ms"], d["t0_ms"])' "$slo" "$shi" "$clo" "$chi")
check_eq "gen:1-30, 1001-1002: start and compile/step inside the real ranges" "$bad" ""
j=$("$sim" --landscape gen:11 --print-space-json | head -1)
check_eq "gen:11's costs: the same every time" "$("$sim" --landscape gen:11 --print-space-json | head -1)" "$j"
cms=$(sed 's/.*"compile_ms": \([0-9]*\).*/\1/' <<< "$j")
has a.lua "-- gen:11: a trial costs "
"$sim" --landscape gen:11 --steps 1 --time-scale 0 > c11.out 2> /dev/null
has c11.out "Compiled train_step in $(awk -v c="$cms" 'BEGIN { printf "%.1f", c / 1000 }') s"
"$sim" --landscape gen:11 --steps 1 --time-scale 0 --compile-ms 500 > c500.out 2> /dev/null
has c500.out "Compiled train_step in 0.5 s"
"$sim" --landscape fsdp8 --steps 1 --time-scale 0 > f8.out 2> /dev/null
has f8.out "Compiled train_step in 30.0 s"
# The start passes before the first log line (the simulated clock starts at 1700000000 s).
"$sim" --landscape fsdp8 --steps 0 --compile-ms 0 --start-ms 2500 --time-scale 0 2> s25.err > /dev/null
check "--start-ms 2500: the first log line at 1700000002.5" grep -q '^I0000 00:00:1700000002.500000 ' s25.err
smms=$(sed 's/.*"start_ms": \([0-9]*\).*/\1/' <<< "$j")
"$sim" --landscape gen:11 --steps 0 --time-scale 0 2> s11.err > /dev/null
check_eq "gen:11: its own start before the first log line" \
  "$(head -1 s11.err | cut -d' ' -f2)" "$(awk -v s="$smms" 'BEGIN { printf "00:00:%.6f", 1700000000 + s / 1000 }')"
finish
