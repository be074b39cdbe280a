#!/usr/bin/env bash
# Auto PGLE: in trials that turn JAX_ENABLE_PGLE on, the profiled steps and the recompile
# step are left out of the value (the simulator's recompile step takes ~20 s; with the
# mean as the reduction, one such step in the value would multiply it).
# Usage: test_pgle.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
set -u
ft=$1 sim=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export FLAGTUNE_DB="$work/t.db" FLAGTUNE_LOG_DIR="$work/logs"
unset XLA_FLAGS
fails=0
cat > pgle.lua <<LUA
return experiment {
  name = "pgle", model = "sim", hardware = "box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--noise", "0",
              "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2, reduce = "mean" },
  fixed_flags = { xla_gpu_enable_latency_hiding_scheduler = true },
  vars = {
    JAX_ENABLE_PGLE = choice { "true", "false" },
    JAX_PGLE_PROFILING_RUNS = choice { 2, 3 },
  },
  strategy = grid {},
  budget = { trials = 5, steps = 12 },
  seed = 1,
}
LUA
"$ft" -q run pgle.lua > out.txt 2> err.txt || { cat err.txt; echo "FAIL: run"; exit 1; }
q() { "$ft" query "$1" | tail -n 1; }
n=$(q "SELECT count(*) FROM trials WHERE status='ok' AND env LIKE '%\"JAX_ENABLE_PGLE\":\"true\"%'")
[ "$n" -ge 1 ] || { echo "FAIL: no ok PGLE trial"; fails=$((fails + 1)); }
slow=$(q "SELECT count(*) FROM trials WHERE status='ok' AND value > 1000")
[ "$slow" = 0 ] || { echo "FAIL: $slow trial value(s) include profiled or recompile steps"; fails=$((fails + 1)); }
# The value is exactly the steady step time: every step after the PGLE skip is equal.
bad=$(q "SELECT count(*) FROM trials t WHERE status='ok' AND abs(value - (SELECT ms FROM steps s WHERE s.trial_id = t.id ORDER BY step DESC LIMIT 1)) > 0.01")
[ "$bad" = 0 ] || { echo "FAIL: $bad value(s) differ from the steady step time"; fails=$((fails + 1)); }
# Manual PGLE: each trial runs a profile phase (LHS off, collectives synchronous) that must
# leave a profile at $FLAGTUNE_PGLE_PROFILE, then the measured run reads it.
manual() { # name, extra experiment lines
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "sim", hardware = "box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 3, steps = 8 },
  seed = 1,
  $2
}
LUA
  "$ft" -q run "$1.lua" > "$1.out" 2> "$1.err"
}
manual man 'pgle = { mode = "manual", steps = 4 },'
sid=$(q "SELECT id FROM sweeps WHERE name='man'")
total=$((3))
check_eq() { [ "$2" = "$3" ] || { echo "FAIL: $1: got '$2', want '$3'"; fails=$((fails + 1)); }; total=$((total + 1)); }
check_eq "every profile phase ok" "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND profile_status='ok'")" 3
check_eq "every trial ok" "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='ok'")" 3
check_eq "measured runs read the profile" \
  "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND xla_flags LIKE '%--xla_gpu_pgle_profile_file_or_directory_path=%' || profile_path || '%'")" 3
log=$(q "SELECT log_path FROM trials WHERE sweep_id=$sid AND number=1")
check_eq "the measured run used the profile" "$(grep -c 'Using PGLE profile from' "$log")" 1
check_eq "the profile run is logged apart" "$([ -s "${log%.log}.profile.log" ] && echo yes)" yes
check_eq "profiles kept" "$(ls logs/sweep-$sid/*.pgle.pbtxt | wc -l)" 3
manual noprof 'pgle = { mode = "manual", command = { "/bin/true" } },'
sid=$(q "SELECT id FROM sweeps WHERE name='noprof'")
check_eq "no profile: trials crash" "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='crash'")" 3
check_eq "no profile: the reason is stored" \
  "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND error LIKE 'PGLE profile run: exited 0 but left no profile at %FLAGTUNE_PGLE_PROFILE%'")" 3
manual failprof 'pgle = { mode = "manual", command = { "sh", "-c", "echo boom >&2; exit 3" } },'
sid=$(q "SELECT id FROM sweeps WHERE name='failprof'")
check_eq "failing profile run: crash" "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='crash' AND profile_status='crash'")" 3
check_eq "failing profile run: excerpt" "$(q "SELECT count(*) FROM trials WHERE sweep_id=$sid AND error LIKE 'PGLE profile run: crash%boom%'")" 3
echo "$(( total - fails )) passed, $fails failed"
[ "$fails" = 0 ]
