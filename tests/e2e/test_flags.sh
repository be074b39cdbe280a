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
check "AR pipelining is not listed" grep -q '^xla_gpu_enable_pipelined_all_reduce .* unlisted ' "$work/mark.txt"
# A table can be partial (jaxlib 0.11.2 lists 75 flags and accepts others): never "missing".
has "$work/mark.txt" "can be partial"
check "no flag is called MISSING" lacks -q MISSING "$work/mark.txt"
# The real table of jaxlib 0.11.2, captured on an H200: 75 flags, xla_gpu_autotune_level among
# them, xla_gpu_enable_command_buffer (which its trials used) not.
"$ft" flags import --file "$src/tests/data/xla_help_jaxlib_0.11.2.txt" --jaxlib 0.11.2 > "$work/imp3.txt"
check "import of the real 0.11.2 table: exit 0" [ $? = 0 ]
has "$work/imp3.txt" "imported 75 flags of jaxlib 0.11.2"
# absl cuts a log message at 15000 bytes and XLA prints the table inside one: import says so.
has "$work/imp3.txt" "the table stops at 14973 bytes: absl cuts a log message at 15000 bytes"
has "$work/imp3.txt" "flags probe --command CMD --catalog"
"$ft" flags import --file "$src/tests/data/xla_help_sample.txt" --jaxlib 0.4.31 > "$work/imp4.txt"
check "a table that is not cut: no such note" not grep -q "the table stops" "$work/imp4.txt"
"$ft" flags autotune_level --jaxlib 0.11.2 > "$work/mark3.txt"
check "0.11.2 lists the autotune level" grep -q '^xla_gpu_autotune_level .* yes ' "$work/mark3.txt"
"$ft" flags enable_command_buffer --jaxlib 0.11.2 > "$work/mark4.txt"
check "0.11.2 does not list command buffers" grep -q '^xla_gpu_enable_command_buffer .* unlisted ' "$work/mark4.txt"
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
has "$work/check_jax_transformer.txt" "ok: 5 searched parameters"
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
has "$work/probe2.txt" "the command fails with XLA_FLAGS empty"
check "probe with a failing command judges no flag" lacks -q accepted "$work/probe2.txt"

# Probe of many flags where one value is refused without a name (a list setter's refusal:
# only the QCHECK's "Flag parsing failed.", as jaxlib 0.11.2 printed it) and two are unknown:
# settled by halves, in far fewer runs than one per flag. fakexla counts its runs.
cat > "$work/fakexla" <<'SH'
#!/bin/sh
echo run >> "$FAKE_RUNS"
case " $XLA_FLAGS " in
  *" --xla_gpu_enable_command_buffer="*)
    echo "F1126 02:13:07.427349     472 parse_flags_from_env.cc:220] Check failed: tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) Flag parsing failed." >&2
    exit 1 ;;
esac
bad=""
for f in $XLA_FLAGS; do case $f in --xla_gpu_made_up_*) bad="$bad${bad:+ }$f" ;; esac; done
[ -z "$bad" ] && exit 0
n=$(echo "$bad" | wc -w); s=""; [ "$n" -gt 1 ] && s=s
echo "F1126 02:06:03.152150     598 parse_flags_from_env.cc:234] Unknown flag$s in XLA_FLAGS: $bad" >&2
exit 1
SH
chmod +x "$work/fakexla"
many=$("$ft" flags 'xla_gpu_enable_*' | awk 'NR > 1 && $1 ~ /^xla_/ { print $1 }' | grep -v '^xla_gpu_enable_command_buffer$' | head -40 | tr '\n' ' ')
FAKE_RUNS="$work/runs.txt" "$ft" flags probe --command "$work/fakexla" $many xla_gpu_enable_command_buffer \
  xla_gpu_made_up_one xla_gpu_made_up_two > "$work/probe4.txt" 2>&1
code=$?
[ $code = 0 ] || cat "$work/probe4.txt"
check "probe by halves: exit 0 (got $code)" [ $code = 0 ]
check "command buffer: value refused" grep -q '^xla_gpu_enable_command_buffer .*VALUE REFUSED' "$work/probe4.txt"
check "made-up flags refused" grep -q '^xla_gpu_made_up_two .*REFUSED (unknown' "$work/probe4.txt"
nflags=$(($(echo $many | wc -w) + 3))
runs=$(wc -l < "$work/runs.txt")
check "$nflags flags settled in $runs runs (< 20, not one per flag)" [ "$runs" -lt 20 -a "$nflags" -gt 30 ]
has "$work/probe4.txt" "2 of $nflags refused, 1 known with a value refused"
# The values the probe passes are ones XLA parses (jaxlib 0.11.2 on an H100 refused the
# probe's old "true" for these three, catalog entries without a default). fakevalues fails
# as XLA does on each malformed one: the QCHECK's "Flag parsing failed."
# (xla/parse_flags_from_env.cc), after SetterForRepeatedEnum's "Illegal value" for the list
# (xla/debug_options_flags.cc): libnvptxcompiler's setter refuses true without
# libnvptxcompiler, the list setter parses true as AUTOTUNE_BACKEND_TRUE, and
# ParseIntRangeInclusive (xla/debug_options_parsers.cc) refuses an empty thunk id range.
cat > "$work/fakevalues" <<'SH'
#!/bin/sh
fail() {
  [ -n "$1" ] && echo "E1126 02:13:07.427001     472 debug_options_flags.cc:137] $1" >&2
  echo "F1126 02:13:07.427349     472 parse_flags_from_env.cc:220] Check failed: tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) Flag parsing failed." >&2
  exit 1
}
for f in $XLA_FLAGS; do
  case $f in
    --xla_gpu_enable_libnvptxcompiler=true) fail "" ;;
    --xla_gpu_experimental_autotune_backends=|--xla_gpu_experimental_autotune_backends=\"\"|--xla_gpu_experimental_autotune_backends=cudnn) ;;
    --xla_gpu_experimental_autotune_backends=*) fail "Illegal value for --xla_gpu_experimental_autotune_backends 'AUTOTUNE_BACKEND_${f#*=}'" ;;
    --xla_gpu_experimental_thunk_buffer_debug_filter_by_thunk_id_ranges=[0-9]*) ;;
    --xla_gpu_experimental_thunk_buffer_debug_filter_by_thunk_id_ranges=*) fail "" ;;
  esac
done
exit 0
SH
chmod +x "$work/fakevalues"
XLA_FLAGS="--xla_gpu_enable_libnvptxcompiler=true" "$work/fakevalues" 2> /dev/null
check "fakevalues refuses libnvptxcompiler=true" [ $? = 1 ]
XLA_FLAGS="--xla_gpu_experimental_autotune_backends=true" "$work/fakevalues" 2> /dev/null
check "fakevalues refuses autotune_backends=true" [ $? = 1 ]
XLA_FLAGS='--xla_gpu_experimental_thunk_buffer_debug_filter_by_thunk_id_ranges=""' "$work/fakevalues" 2> /dev/null
check "fakevalues refuses an empty thunk id range" [ $? = 1 ]
"$ft" flags probe --command "$work/fakevalues" xla_gpu_enable_libnvptxcompiler \
  xla_gpu_experimental_autotune_backends xla_gpu_experimental_thunk_buffer_debug_filter_by_thunk_id_ranges \
  xla_gpu_autotune_level > "$work/values.txt" 2> "$work/values_err.txt"
code=$?
[ $code = 0 ] || cat "$work/values.txt" "$work/values_err.txt"
check "probe values XLA parses: exit 0 (got $code)" [ $code = 0 ]
has "$work/values.txt" "0 of 4 refused"
check_eq "settled in 2 runs (none, all)" "$(grep -c 'flags probe: run' "$work/values_err.txt")" 2
"$ft" flags probe xla_gpu_autotune_level 2> "$work/probe3.txt"
check "probe without --command: exit 2" [ $? = 2 ]
"$ft" flags probe --command true --catalog xla_gpu_autotune_level 2> "$work/probe5.txt"
check "probe with NAMEs and --catalog: exit 2" [ $? = 2 ]
has "$work/probe5.txt" "give NAMEs or --catalog, not both"
"$ft" flags probe --command true --timeout 0 xla_gpu_autotune_level 2> "$work/probe6.txt"
check "probe --timeout 0: exit 2" [ $? = 2 ]
has "$work/probe6.txt" "--timeout needs seconds, a number above 0"

# The whole catalog in one call (jaxlib 0.11.2 on an H100: 343 non-TPU flags were refused as
# "at most 256 flags at once"), with a flag that makes the command hang and one it refuses:
# fakehang imitates XLA's unknown-flag text (F... parse_flags_from_env.cc:234] Unknown flag in
# XLA_FLAGS, as jaxlib 0.11.2 printed it; xla/parse_flags_from_env.cc) and sleeps on
# --xla_gpu_made_up_slow=. The hanging run is stopped at --timeout and is no verdict.
cat > "$work/fakehang" <<'SH'
#!/bin/sh
bad=""
for f in $XLA_FLAGS; do case $f in --xla_gpu_made_up_slow=*) ;; --xla_gpu_made_up_*) bad="$bad${bad:+ }$f" ;; esac; done
if [ -n "$bad" ]; then
  n=$(echo "$bad" | wc -w); s=""; [ "$n" -gt 1 ] && s=s
  echo "F1126 02:06:03.152150     598 parse_flags_from_env.cc:234] Unknown flag$s in XLA_FLAGS: $bad" >&2
  exit 1
fi
case " $XLA_FLAGS " in *" --xla_gpu_made_up_slow="*) exec sleep 60 ;; esac
exit 0
SH
# Its sleep is this test's own (60.PID seconds): the check that none is left running must not
# see another test's `sleep 60` (ctest -j runs several at once).
sed -i "s/exec sleep 60 ;;/exec sleep 60.$$ ;;/" "$work/fakehang"
chmod +x "$work/fakehang"
"$ft" flags probe --command "$work/fakehang" --catalog > "$work/cat.txt" 2> "$work/cat_err.txt"
code=$?
[ $code = 0 ] || cat "$work/cat.txt" "$work/cat_err.txt"
check "probe --catalog: exit 0 (got $code)" [ $code = 0 ]
ncat=$("$ft" flags --json | grep -c "\"kind\":[[:space:]]*\"flag\"")
nnontpu=$(grep -c ' accepted$' "$work/cat.txt")
check "probe --catalog judged every non-TPU flag ($nnontpu, > 300)" [ "$nnontpu" -gt 300 ]
has "$work/cat.txt" "0 of $nnontpu refused"
has "$work/cat_err.txt" "flags probe: run 2: $nnontpu flags: clean"
check "--catalog leaves out the TPU flags" [ "$nnontpu" -lt "$ncat" ]
"$ft" -q flags probe --command "$work/fakehang" --catalog > /dev/null 2> "$work/cat_q.txt"
check_eq "-q: no progress lines" "$(wc -c < "$work/cat_q.txt")" 0
# A few flags, so that the runs that hang (each costs the --timeout) stay few; 3 s is far
# more than a run that does not hang needs.
some=$(awk '$NF == "accepted" { print $1 }' "$work/cat.txt" | head -6 | tr '\n' ' ')
"$ft" flags probe --command "$work/fakehang" --timeout 3 $some xla_gpu_autotune_level xla_gpu_made_up_one xla_gpu_made_up_slow > "$work/hang.txt" 2> "$work/hang_err.txt"
code=$?
[ $code = 1 ] || cat "$work/hang.txt" "$work/hang_err.txt"
check "probe with a hanging flag: exit 1, not a hang (got $code)" [ $code = 1 ]
check "the hanging flag is undecided" grep -q '^xla_gpu_made_up_slow .*undecided (its run timed out after 3 s)' "$work/hang.txt"
check "the unknown flag is refused" grep -q '^xla_gpu_made_up_one .*REFUSED (unknown' "$work/hang.txt"
check "a catalog flag is accepted" grep -q '^xla_gpu_autotune_level .*accepted' "$work/hang.txt"
has "$work/hang.txt" "1 of 9 refused, 1 undecided"
has "$work/hang_err.txt" "timed out after 3 s, no verdict"
has "$work/hang_err.txt" "xla_gpu_made_up_slow: timed out after 3 s"

# SIGTERM mid-probe (a `timeout` wrapper): the verdicts so far, 'undecided' for the rest, the
# running command's process group stopped, exit 143. The first runs name the unknown flag;
# the run without it hangs, and gets the signal once its progress line shows it began.
"$ft" flags probe --command "$work/fakehang" --timeout 120 xla_gpu_autotune_level \
  xla_gpu_made_up_one xla_gpu_made_up_slow > "$work/term.txt" 2> "$work/term_err.txt" &
probe_pid=$!
for _ in $(seq 100); do grep -q "run 2:" "$work/term_err.txt" && break; sleep 0.1; done
sleep 0.5
kill -TERM "$probe_pid"
wait "$probe_pid"
check_eq "SIGTERM: exit 143" "$?" 143
check "known verdict kept" grep -q '^xla_gpu_made_up_one .*REFUSED (unknown' "$work/term.txt"
check "the rest undecided" grep -q '^xla_gpu_made_up_slow  *undecided$' "$work/term.txt"
check "autotune level undecided" grep -q '^xla_gpu_autotune_level  *undecided$' "$work/term.txt"
has "$work/term.txt" "partial: 1 of 3 refused, 2 undecided"
has "$work/term_err.txt" "interrupted by SIGTERM"
check "no probe command left running" sh -c "! ps -eo args | grep -q '^sleep 60\.$$\$'"

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
