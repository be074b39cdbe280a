#!/usr/bin/env bash
# Auto PGLE: in trials that turn JAX_ENABLE_PGLE on, the profiled steps and the recompile
# step are left out of the value (the simulator's recompile step takes ~20 s; with the
# mean as the reduction, one such step in the value would multiply it).
# Usage: test_pgle.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
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
"$ft" -q run pgle.lua > out.txt 2> err.txt || { cat err.txt; die "run"; }
n=$(val "SELECT count(*) FROM trials WHERE status='ok' AND env LIKE '%\"JAX_ENABLE_PGLE\":\"true\"%'")
check "an ok PGLE trial ($n)" [ "$n" -ge 1 ]
check_eq "no trial value includes profiled or recompile steps" \
  "$(val "SELECT count(*) FROM trials WHERE status='ok' AND value > 1000")" 0
# The value is exactly the steady step time: every step after the PGLE skip is equal.
check_eq "no value differs from the steady step time" \
  "$(val "SELECT count(*) FROM trials t WHERE status='ok' AND abs(value - (SELECT ms FROM steps s WHERE s.trial_id = t.id ORDER BY step DESC LIMIT 1)) > 0.01")" 0
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
  "$ft" -q run "$1.lua" --keep-going > "$1.out" 2> "$1.err" # every trial may fail by design
}
manual man 'pgle = { mode = "manual", steps = 4, route = "nsys" },'
sid=$(val "SELECT id FROM sweeps WHERE name='man'")
check_eq "every profile phase ok" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND profile_status='ok'")" 3
check_eq "every trial ok" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='ok'")" 3
check_eq "measured runs read the profile" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND xla_flags LIKE '%--xla_gpu_pgle_profile_file_or_directory_path=%' || profile_path || '%'")" 3
log=$(val "SELECT log_path FROM trials WHERE sweep_id=$sid AND number=1")
check_eq "the measured run used the profile" "$(grep -c 'Using PGLE profile from' "$log")" 1
check_eq "the profile run is logged apart" "$([ -s "${log%.log}.profile.log" ] && echo yes)" yes
check_eq "profiles kept" "$(ls logs/t.db/sweep-$sid/*.pgle.pbtxt | wc -l)" 3
manual noprof 'pgle = { mode = "manual", command = { "/bin/true" } },'
sid=$(val "SELECT id FROM sweeps WHERE name='noprof'")
check_eq "no profile: trials crash" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='crash'")" 3
check_eq "no profile: the reason is stored" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND error LIKE 'PGLE profile run: exited 0 but left no profile at %FLAGTUNE_PGLE_PROFILE%'")" 3
manual failprof 'pgle = { mode = "manual", command = { "sh", "-c", "echo boom >&2; exit 3" } },'
sid=$(val "SELECT id FROM sweeps WHERE name='failprof'")
check_eq "failing profile run: crash" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='crash' AND profile_status='crash'")" 3
check_eq "failing profile run: excerpt" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND error LIKE 'PGLE profile run: crash%boom%'")" 3

# The two routes (lua/pgle.lua). XLA reads a profile as text or binary by its extension
# (openxla/xla xla/service/gpu/gpu_hlo_schedule.cc ReadProfileFromSources) and keeps only
# entries of the program's own fingerprint (FilterWithFingerprint). nsys: a text .pbtxt from
# a profile run with the scheduler off and collectives synchronous; jax (the default): the
# JAX profiler's binary .pb, profiled with async collectives and the scheduler on, so that the
# fingerprints its entries carry are the measured program's, and command buffers off.
manual jaxr 'pgle = { mode = "manual", steps = 4 },'
sid=$(val "SELECT id FROM sweeps WHERE name='jaxr'")
check_eq "jax route: every trial ok" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='ok' AND profile_status='ok'")" 3
check_eq "jax route: binary profiles" "$(ls logs/t.db/sweep-$sid/*.pgle.pb | wc -l)" 3
log=$(val "SELECT log_path FROM trials WHERE sweep_id=$sid AND number=1")
has "$log" "Using PGLE profile from $PWD/logs/t.db/sweep-$sid/trial-0001.pgle.pb"
has "$log" "PGLE profile: 3 of 3 entries match this program's fingerprint"
check_eq "jax route: the measured run checks the profile" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND xla_flags LIKE '%--xla_gpu_pgle_accuracy_checker=PGLE_STRICTNESS_LEVEL_ERROR%'")" 3
sid=$(val "SELECT id FROM sweeps WHERE name='man'")
log=$(val "SELECT log_path FROM trials WHERE sweep_id=$sid AND number=1")
has "$log" "PGLE profile: 3 of 3 entries match this program's fingerprint"

# What flagtune did before the routes: the JAX profiler's binary written under a .pbtxt name.
# XLA logs that it cannot parse it and compiles without PGLE: the trial is marked invalid,
# with XLA's line as its error, instead of being measured as the configuration it asked for.
cat > binprof.sh <<SH
#!/bin/sh
FLAGTUNE_PGLE_PROFILE="$work/p.pb" "$sim" --steps 2 --time-scale 0 > /dev/null &&
  cp "$work/p.pb" "\$FLAGTUNE_PGLE_PROFILE"
SH
chmod +x binprof.sh
manual binname "pgle = { mode = \"manual\", route = \"nsys\", command = { \"$work/binprof.sh\" } },"
sid=$(val "SELECT id FROM sweeps WHERE name='binname'")
check_eq "binary under .pbtxt: profile runs ok" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND profile_status='ok'")" 3
check_eq "binary under .pbtxt: every trial invalid" "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND status='invalid'")" 3
check_eq "binary under .pbtxt: XLA's message is the error" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid AND error LIKE '%Tried but failed to parse PGLE proto from text file%'")" 3

# A route flagtune does not know is refused by `check`.
sed 's/route = "nsys" }/route = "xprof" }/' man.lua > r.lua
"$ft" check r.lua > r.txt 2>&1
check_eq "unknown route: exit 2" "$?" 2
check_eq "unknown route: the message" "$(head -1 r.txt)" \
  'r.lua:8: pgle.route must be "nsys" (a text profile from Nsight Systems, collectives synchronous) or "jax" (a binary profile from the JAX profiler, collectives async), got "xprof"'
finish
