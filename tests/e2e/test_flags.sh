#!/usr/bin/env bash
# `flagtune flags` end to end and the examples of issue 4: listing, show, import of the recorded
# help table and of the simulator's XLA_FLAGS=--help, --jaxlib marks, `check` of every
# experiment this issue added, py_compile of experiments/jax_transformer.py, and a short real
# sweep of experiments/collectives_preset.lua on the simulator.
# Usage: bash test_flags.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# Listing: a substring and a glob; --json is a JSON array of catalog entries.
"$ft" flags latency_hiding > "$work/list.txt" 2>&1
check "flags latency_hiding: exit 0" [ $? = 0 ]
has "$work/list.txt" "xla_gpu_enable_latency_hiding_scheduler"
has "$work/list.txt" "xla_tpu_enable_latency_hiding_scheduler"
"$ft" flags 'xla_gpu_*_combine_threshold_bytes' > "$work/glob.txt"
check "glob: exit 0" [ $? = 0 ]
check_eq "glob lists the 4 GPU combine thresholds" "$(grep -c "^xla_gpu_" "$work/glob.txt")" 4
"$ft" flags NCCL_PROTO --json > "$work/list.json"
check "--json: exit 0" [ $? = 0 ]
has "$work/list.json" '"NCCL_PROTO"'

# show: all fields; an unknown name is exit 2 with a suggestion.
"$ft" flags show xla_gpu_enable_command_buffer > "$work/show.txt"
check "show: exit 0" [ $? = 0 ]
has "$work/show.txt" "candidates   '' | FUSION"
has "$work/show.txt" "source       jax-toolbox,jax-gpu-tips,xla-flags-guidance,xla"
"$ft" flags show xla_gpu_enable_latency_hidding_scheduler 2> "$work/show_err.txt"
check "unknown flag: exit 2" [ $? = 2 ]
has "$work/show_err.txt" "(did you mean 'xla_gpu_enable_latency_hiding_scheduler'?)"

# import: the recorded table (14 flags, one unknown to the catalog), then the simulator's.
"$ft" flags import --file "$src/tests/data/xla_help_sample.txt" --jaxlib 0.4.31 > "$work/imp.txt"
check "import --file: exit 0" [ $? = 0 ]
has "$work/imp.txt" "imported 14 flags of jaxlib 0.4.31"
has "$work/imp.txt" "1 of its flags are not in the catalog"
"$ft" query "SELECT type, default_value FROM jaxlib_flags WHERE jaxlib = '0.4.31' AND name = 'xla_gpu_autotune_level'" > "$work/q.txt"
has "$work/q.txt" "int32|4"
"$ft" flags import --command "$sim" --jaxlib sim > "$work/imp2.txt"
check "import --command: exit 0" [ $? = 0 ]
has "$work/imp2.txt" "of jaxlib sim"
"$ft" flags pipelined_all --jaxlib 0.4.31 > "$work/mark.txt"
check "--jaxlib: exit 0" [ $? = 0 ]
check "AG pipelining is in 0.4.31's list" grep -q '^xla_gpu_enable_pipelined_all_gather .* yes ' "$work/mark.txt"
check "AR pipelining is not" grep -q '^xla_gpu_enable_pipelined_all_reduce .* MISSING ' "$work/mark.txt"
"$ft" flags latency --jaxlib 9.9 2> "$work/nolist.txt"
check "--jaxlib without an import: exit 2" [ $? = 2 ]
has "$work/nolist.txt" "no flag list imported for jaxlib 9.9"
"$ft" flags import --file /dev/null --jaxlib x 2> "$work/empty.txt"
check "import of no table: exit 2" [ $? = 2 ]

# The experiments of this issue validate; the Python script compiles.
for x in jax_transformer collectives_preset; do
  "$ft" check "$src/experiments/$x.lua" > "$work/check_$x.txt" 2>&1
  code=$?
  [ $code = 0 ] || cat "$work/check_$x.txt"
  check "check $x: exit 0 (got $code)" [ $code = 0 ]
done
has "$work/check_jax_transformer.txt" "ok: 7 searched parameters"
if command -v python3 >/dev/null; then
  check "py_compile jax_transformer.py" python3 -c \
    "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)" \
    "$src/experiments/jax_transformer.py" "$work/jt.pyc"
fi

# A short real sweep of the presets on the simulator.
(cd "$work" && "$ft" -q run "$src/experiments/collectives_preset.lua" --trials 6 --seed 3 > run.txt 2>&1)
code=$?
[ "$code" = 0 ] || [ "$code" = 1 ] || cat "$work/run.txt"
check "collectives_preset run: exit 0 or 1 (got $code)" [ "$code" = 0 -o "$code" = 1 ]
"$ft" query "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'collectives-preset' AND t.status IN ('ok', 'oom')" > "$work/n.txt"
grep -qx '[1-6]' <(tail -1 "$work/n.txt") || cat "$work/run.txt"
check "collectives_preset: 1-6 ok/oom trials" grep -qx '[1-6]' <(tail -1 "$work/n.txt")
"$ft" query "SELECT xla_flags FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'collectives-preset' AND t.number = 1" > "$work/x.txt"
has "$work/x.txt" "--xla_gpu_all_gather_combine_threshold_bytes="

# Probe: where a jaxlib prints no list, one run with the candidate flags tells which this XLA
# refuses (the simulator dies on unknown flags with XLA's own text, as XLA does).
probe_cmd="$sim --steps 1 --time-scale 0"
"$ft" flags probe --command "$probe_cmd" xla_gpu_enable_latency_hiding_scheduler \
  xla_gpu_made_up_flag xla_gpu_autotune_level xla_gpu_other_invention > "$work/probe.txt" 2>&1
code=$?
[ $code = 0 ] || cat "$work/probe.txt"
check "probe: exit 0 (got $code)" [ $code = 0 ]
check "probe: made-up flag refused" grep -q '^xla_gpu_made_up_flag .*REFUSED' "$work/probe.txt"
check "probe: second made-up flag refused" grep -q '^xla_gpu_other_invention .*REFUSED' "$work/probe.txt"
check "probe: LHS accepted" grep -q '^xla_gpu_enable_latency_hiding_scheduler .*accepted' "$work/probe.txt"
check "probe: autotune level accepted" grep -q '^xla_gpu_autotune_level .*accepted' "$work/probe.txt"
has "$work/probe.txt" "2 of 4 refused"
"$ft" flags probe --command "false" xla_gpu_autotune_level > "$work/probe2.txt" 2>&1
check "probe with a failing command: exit 1" [ $? = 1 ]
has "$work/probe2.txt" "the probe command failed even without the refused flags"
"$ft" flags probe xla_gpu_autotune_level 2> "$work/probe3.txt"
check "probe without --command: exit 2" [ $? = 2 ]

# A flag the catalog lacks but an imported jaxlib list holds is accepted by check.
cat > "$work/help_new.txt" <<'HELP'
  --xla_gpu_brand_new_flag=false  	bool	A flag newer than flagtune's catalog.
HELP
"$ft" flags import --file "$work/help_new.txt" --jaxlib 9.0 > /dev/null 2>&1
check "import a newer jaxlib's list: exit 0" [ $? = 0 ]
cat > "$work/newflag.lua" <<LUA
return experiment {
  command = { "$sim", "--steps", "3" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_brand_new_flag = bool() },
}
LUA
"$ft" check "$work/newflag.lua" > "$work/newflag.txt" 2>&1
code=$?
[ $code = 0 ] || cat "$work/newflag.txt"
check "imported flag accepted by check (exit $code)" [ $code = 0 ]
FLAGTUNE_DB="$work/other.db" "$ft" check "$work/newflag.lua" > "$work/newflag2.txt" 2>&1
check "without the import the flag is unknown: exit 2" [ $? = 2 ]
has "$work/newflag2.txt" "unknown XLA flag 'xla_gpu_brand_new_flag'"

"$ft" flags nomatchxyz > "$work/nomatch.out" 2> "$work/nomatch.err"
check_eq "flags with no match: exit 1, like grep" "$?" 1
has "$work/nomatch.err" "no catalog entry matches 'nomatchxyz'"
check_eq "flags with no match prints no table header" "$(wc -c < "$work/nomatch.out")" 0

finish
