#!/usr/bin/env bash
# A compile cache that cannot lie, on the pinned CPU jax: trials of real sweeps share one
# JAX_COMPILATION_CACHE_DIR. Trials whose XLA_FLAGS differ do not share a compiled program
# (each misses: jax hashes XLA_FLAGS into the key); a later trial with the same XLA_FLAGS
# does (a hit: jax's "Persistent compilation cache hit", logged at DEBUG). Every trial gets
# JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none, so jax points no XLA autotune cache into the
# directory (its debug line "Enabling XLA autotuning cache" is absent); a caller who sets it
# keeps it, and `check` warns. The first step (compile included) of the missing and the
# hitting trials is printed: a measurement, never asserted.
# Usage: test_real_xla_cache.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
need_jax
rx="$src/tests/e2e/real_xla"
write_exp() { # write_exp NAME
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "tiny", hardware = "cpu",
  command = { "$jaxpy", "$rx/train.py", "{steps}", "256" },
  metric = { json = "step_time_ms", skip = 1 },
  env = { JAX_COMPILATION_CACHE_DIR = "$work/jc", JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS = "0",
          JAX_LOGGING_LEVEL = "DEBUG" },
  flags = { xla_cpu_enable_fast_math = choice { true, false } },
  strategy = grid {}, budget = { trials = 3, steps = 3 }, confirm = false,
  timeout = "120s", seed = 1,
}
LUA
}
log_of() { val "SELECT t.log_path FROM trials t JOIN sweeps s ON s.id = t.sweep_id
                WHERE s.name = '$1' AND coalesce(t.xla_flags, '') = '$2'"; }
flag_sets=("" "--xla_cpu_enable_fast_math=true" "--xla_cpu_enable_fast_math=false")
hit="Persistent compilation cache hit for 'jit_step'"

write_exp first
"$ft" check first.lua > check.out 2>&1
check_eq "check: exit 0" "$?" 0
check "check: no warning when flagtune chooses" not grep -q "warning" check.out
"$ft" -q run first.lua > first.out 2> first.err
check_eq "first: exit 0" "$?" 0
check_eq "first: three trials ok" "$(val "SELECT count(*) FROM trials WHERE status = 'ok'")" 3
for f in "${flag_sets[@]}"; do
  log=$(log_of first "$f")
  check "first [${f:-baseline}]: a miss (no other trial had these XLA_FLAGS)" not grep -qF "$hit" "$log"
  check "first [${f:-baseline}]: no XLA autotune cache" not grep -q "Enabling XLA autotuning cache" "$log"
done
check "first: the programs were written to the cache" test -n "$(ls "$work/jc" 2>/dev/null)"
entries=$(ls "$work/jc" | grep -c "^jit_step-.*-cache$")
check_eq "first: one jit_step entry per distinct XLA_FLAGS" "$entries" 3

write_exp second
"$ft" -q run second.lua > second.out 2> second.err
check_eq "second: exit 0" "$?" 0
for f in "${flag_sets[@]}"; do
  has "$(log_of second "$f")" "$hit"
done
check_eq "second: no new jit_step entry" "$(ls "$work/jc" | grep -c "^jit_step-.*-cache$")" 3
# The first step holds the compile: missing (first) against hitting (second).
first_ms=$(val "SELECT round(avg(st.ms), 1) FROM steps st JOIN trials t ON t.id = st.trial_id
                JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'first' AND st.step = 1")
second_ms=$(val "SELECT round(avg(st.ms), 1) FROM steps st JOIN trials t ON t.id = st.trial_id
                 JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'second' AND st.step = 1")
echo "info first step, mean of 3 trials: $first_ms ms compiling (miss), $second_ms ms from the cache (hit)"

# A caller who enables XLA's caches keeps the choice, and is warned.
export JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=xla_gpu_per_fusion_autotune_cache_dir
write_exp third
"$ft" check third.lua > check3.out 2>&1
check_eq "third: check exit 0" "$?" 0
has check3.out "warning: JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=xla_gpu_per_fusion_autotune_cache_dir with a JAX_COMPILATION_CACHE_DIR"
"$ft" -q run third.lua > third.out 2> third.err
check_eq "third: exit 0" "$?" 0
has "$(log_of third "")" "Enabling XLA autotuning cache at '$work/jc/xla_gpu_per_fusion_autotune_cache_dir'"
finish
