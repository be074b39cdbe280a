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
echo "$(( 3 - fails )) passed, $fails failed"
[ "$fails" = 0 ]
