#!/usr/bin/env bash
# End-to-end checks of flagtune-sim, the SIMULATED JAX workload (tests/sim/flagtune_sim.c):
# output shapes, determinism, XLA's fatal and non-fatal flag messages, OOM and its look-alike,
# and the fsdp8 landscape's documented baseline and optimum (docs/SIMULATOR.md).
# Usage: bash tests/e2e/test_sim.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR   (only SIM_BIN is used)
source "$(dirname "$0")/lib.sh"

# Runs the simulator with a clean environment plus the given VAR=value words; stdout, stderr and
# the exit status land in $work/out, $work/err, $RC. Time is not slept (--time-scale 0).
run_sim() {
  (env -i PATH="$PATH" "$@" >"$work/out" 2>"$work/err"; exit $?) 2>/dev/null
  RC=$?
}
out() { cat "$work/out"; }

LHS="--xla_gpu_enable_latency_hiding_scheduler=true"

# The fsdp8 optimum from docs/SIMULATOR.md (brute force over the reference grid).
BEST_FLAGS="$LHS --xla_gpu_enable_pipelined_all_gather=true \
--xla_gpu_enable_pipelined_reduce_scatter=true --xla_gpu_enable_pipelined_all_reduce=true \
--xla_gpu_enable_while_loop_double_buffering=true \
--xla_gpu_all_gather_combine_threshold_bytes=536870912 \
--xla_gpu_reduce_scatter_combine_threshold_bytes=536870912 \
--xla_gpu_all_reduce_combine_threshold_bytes=268435456 --xla_gpu_enable_nccl_user_buffers=true \
--xla_gpu_enable_all_gather_combine_by_dim=false \
--xla_gpu_enable_reduce_scatter_combine_by_dim=false"
BEST_ENV=(NCCL_NVLS_ENABLE=1 CUDA_DEVICE_MAX_CONNECTIONS=1 NCCL_PROTO=SIMPLE
  XLA_PYTHON_CLIENT_MEM_FRACTION=0.90)

# 1. JSON output: one {"step": n, "step_time_ms": x, "loss": y} line per step, steps 1..N.
run_sim "$sim" --steps 5 --time-scale 0
check_eq "json run: exit status" "$RC" 0
check_eq "5 JSON step lines" \
  "$(grep -cE '^\{"step": [0-9]+, "step_time_ms": [0-9]+\.[0-9]{2}, "loss": [0-9.]+\}$' "$work/out")" 5
has "$work/out" '{"step": 5, '
has "$work/err" 'StreamExecutor device (7): NVIDIA H100'

# 2. Text output: "step N: X ms".
run_sim "$sim" --steps 3 --format text --time-scale 0 --landscape single
check_eq "3 text step lines" "$(grep -cE '^step [0-9]+: [0-9]+\.[0-9]{2} ms$' "$work/out")" 3
check "text format prints no JSON" lacks -q '"step"' "$work/out"

# 3. Determinism: same seed, config and FLAGTUNE_TRIAL give identical output (stdout and
#    stderr); another trial number gives other noise; so does another seed.
run_sim FLAGTUNE_TRIAL=7 XLA_FLAGS="$LHS" "$sim" --seed 3 --time-scale 0
cp "$work/out" "$work/a.out"
cp "$work/err" "$work/a.err"
run_sim FLAGTUNE_TRIAL=7 XLA_FLAGS="$LHS" "$sim" --seed 3 --time-scale 0
check "same seed+trial: same stdout" cmp -s "$work/out" "$work/a.out"
check "same seed+trial: same stderr" cmp -s "$work/err" "$work/a.err"
run_sim FLAGTUNE_TRIAL=8 XLA_FLAGS="$LHS" "$sim" --seed 3 --time-scale 0
check "another FLAGTUNE_TRIAL: other step times" not cmp -s "$work/out" "$work/a.out"
run_sim FLAGTUNE_TRIAL=7 XLA_FLAGS="$LHS" "$sim" --seed 4 --time-scale 0
check "another --seed: other step times" not cmp -s "$work/out" "$work/a.out"

# 4. --noise 0: steady steps (after the two warm-up steps) equal --true-value exactly.
run_sim XLA_FLAGS="$LHS" "$sim" --true-value
tv=$(cat "$work/out")
run_sim XLA_FLAGS="$LHS" "$sim" --noise 0 --steps 4 --time-scale 0
step4=$(sed -n 's/.*"step": 4, "step_time_ms": \([0-9.]*\).*/\1/p' "$work/out")
check_eq "noise-free step 4 is the true value ($tv)" "$step4" "$(printf '%.2f' "$tv")"
step1=$(sed -n 's/.*"step": 1, "step_time_ms": \([0-9.]*\).*/\1/p' "$work/out")
check "warm-up on step 1 ($step1 > 1.3 x $step4)" awk -v a="$step1" -v b="$step4" 'BEGIN { exit !(a > 1.3 * b) }'

# 5. Unknown flag: XLA's exact fatal text, then death by SIGABRT (134 in bash); nothing on stdout.
# Today's XLA (xla/parse_flags_from_env.cc:234 in jaxlib 0.12.0.1) says "flag" for one, "flags"
# for more.
run_sim XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true --xla_foo=1" "$sim" --time-scale 0
check_eq "unknown flag: exit status (134: SIGABRT)" "$RC" 134
has "$work/err" "parse_flags_from_env.cc:234] Unknown flag in XLA_FLAGS: --xla_foo=1"
check "unknown flag: no step printed" lacks -q '"step"' "$work/out"
run_sim XLA_FLAGS="--xla_foo=1 --xla_gpu_autotune_level=0 --xla_bar" "$sim" --time-scale 0
has "$work/err" "Unknown flags in XLA_FLAGS: --xla_foo=1 --xla_bar"
# jax <= 0.5.0: always "flags", the TF_XLA_FLAGS hint, and a list that may name known flags.
run_sim FLAGTUNE_SIM_OLD_XLA=1 XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true --xla_foo=1" \
  "$sim" --time-scale 0
check_eq "old unknown flag: exit status (134: SIGABRT)" "$RC" 134
has "$work/err" "parse_flags_from_env.cc:234] Unknown flags in XLA_FLAGS: --xla_foo=1 "
has "$work/err" "Perhaps you meant to specify these on the TF_XLA_FLAGS envvar?"
run_sim FLAGTUNE_SIM_OLD_XLA=1 XLA_FLAGS="--xla_foo=1 --xla_gpu_autotune_level=0 --xla_bar \
--xla_gpu_enable_latency_hiding_scheduler=true" "$sim" --time-scale 0
has "$work/err" "Unknown flags in XLA_FLAGS: --xla_foo=1 --xla_bar  \
--xla_gpu_enable_latency_hiding_scheduler=true "
run_sim XLA_FLAGS="--xla_tpu_enable_latency_hiding_scheduler=true" "$sim" --true-value
check_eq "TPU flag in XLA_FLAGS is invalid on a GPU jaxlib" "$(out)" invalid
# A non-bool flag without '=' is not recognised by XLA either.
run_sim XLA_FLAGS="--xla_gpu_enable_command_buffer" "$sim" --true-value
check_eq "bare string flag is unknown to XLA" "$(out)" invalid

# 6. Malformed values: today tsl logs the value, then XLA's QCHECK dies with "Flag parsing failed."
# and the usage table (xla/parse_flags_from_env.cc:220 in jaxlib 0.12.0.1); the command-buffer
# setter names the bad piece first.
run_sim XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=maybe" "$sim" --steps 2 --time-scale 0
check_eq "malformed bool: exit status (134: SIGABRT)" "$RC" 134
has "$work/err" "Couldn't interpret value maybe for flag xla_gpu_enable_latency_hiding_scheduler."
has "$work/err" "parse_flags_from_env.cc:220] Check failed: tsl::Flags::Parse(&env_argv->argc, \
env_argv->argv.data(), flag_list) Flag parsing failed."
check "malformed bool: no step printed" lacks -q '"step"' "$work/out"
run_sim XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CONVOLUTION" "$sim" --steps 2 --time-scale 0
check_eq "unknown enum value: exit status (134: SIGABRT)" "$RC" 134
has "$work/err" "Flag parsing failed."
has "$work/err" "usage: --xla_gpu_enable_command_buffer=FUSION,CONVOLUTION"
# xla_gpu_disable_async_collectives' setter splits on ',' keeping empty pieces, each must be a
# CollectiveOpType (openxla/xla, xla/debug_options_flags.cc,
# setter_for_xla_gpu_disable_async_collectives); jaxlib 0.11.2 on an H100 refused '' (docs/GPU.md).
for v in "" "allreduce,,allgather" "allreduce,"; do
  run_sim XLA_FLAGS="--xla_gpu_disable_async_collectives=$v" "$sim" --steps 2 --time-scale 0
  check_eq "disable_async_collectives='$v': refused (134: SIGABRT)" "$RC" 134
  has "$work/err" "usage: --xla_gpu_disable_async_collectives=$v"
done
run_sim XLA_FLAGS="--xla_gpu_disable_async_collectives=ALLREDUCE,allgather" "$sim" --true-value
check "disable_async_collectives=ALLREDUCE,allgather: accepted (any case)" \
  sh -c "grep -Eq '^[0-9.]+$' '$work/out'"
run_sim XLA_FLAGS="--xla_gpu_all_gather_combine_threshold_bytes=12x" "$sim" --true-value
has "$work/err" "Couldn't interpret value 12x for flag xla_gpu_all_gather_combine_threshold_bytes."
check_eq "malformed int is invalid" "$(out)" invalid
# jax <= 0.5.0: logged, flag left unset, run continues.
run_sim FLAGTUNE_SIM_OLD_XLA=1 XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=maybe" "$sim" \
  --steps 2 --time-scale 0
check_eq "old malformed bool: exit status" "$RC" 0
has "$work/err" "Couldn't interpret value maybe for flag xla_gpu_enable_latency_hiding_scheduler."
run_sim "$sim" --true-value
check_eq "old malformed value leaves the baseline unchanged" "$(out)" \
  "$(env -i FLAGTUNE_SIM_OLD_XLA=1 XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=maybe \
     "$sim" --true-value 2>/dev/null)"

# 7. Tokenizer: quoted values, bare bools and a flags file behave like XLA's.
run_sim XLA_FLAGS="--xla_dump_to=\"/tmp/a b\" --xla_gpu_enable_latency_hiding_scheduler" \
  "$sim" --true-value
check_eq "bare bool / quoted value parsed like XLA" "$(out)" "$tv"
echo "--xla_gpu_enable_latency_hiding_scheduler=true" >"$work/flags.txt"
run_sim XLA_FLAGS="$work/flags.txt" "$sim" --true-value
check_eq "XLA_FLAGS naming a file is read" "$(out)" "$tv"
run_sim XLA_FLAGS="--xla_gpu_enable_command_buffer=''" "$sim" --landscape single --true-value
check "--xla_gpu_enable_command_buffer='' disables command buffers" \
  [ "$(out)" != "$(env -i "$sim" --landscape single --true-value)" ]

# 8. OOM: the guide's 8 GiB thresholds at the default memory fraction exit 1 with
#    RESOURCE_EXHAUSTED after compiling, before any step.
OOM_FLAGS="$LHS \
--xla_gpu_all_gather_combine_threshold_bytes=8589934592 \
--xla_gpu_reduce_scatter_combine_threshold_bytes=8589934592"
run_sim XLA_FLAGS="$OOM_FLAGS" "$sim" --time-scale 0
check_eq "OOM config: exit status" "$RC" 1
OOM_RE='XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate [0-9]+ bytes\.$'
grep -qE "^jaxlib.xla_extension.$OOM_RE" "$work/err" || tail -3 "$work/err"
check "OOM: the RESOURCE_EXHAUSTED line" grep -qE "^jaxlib.xla_extension.$OOM_RE" "$work/err"
has "$work/err" "BufferAssignment OOM Debugging."
check "OOM: no step printed" lacks -q '"step"' "$work/out"
run_sim XLA_FLAGS="$OOM_FLAGS" "$sim" --true-value
check_eq "--true-value of the OOM config" "$(out)" oom
# NVLS + user buffers need memory outside the pool: at fraction 0.95 NCCL cannot initialise.
run_sim "${BEST_ENV[@]}" XLA_PYTHON_CLIENT_MEM_FRACTION=0.95 XLA_FLAGS="$BEST_FLAGS" \
  "$sim" --time-scale 0
check_eq "NCCL OOM config: exit status" "$RC" 1
has "$work/err" "Cuda failure 2 'out of memory'"

# 9. The harmless BFC warning appears for a tight-but-fitting config, which then succeeds.
BFC_FLAGS="$LHS --xla_gpu_enable_pipelined_collectives=true \
--xla_gpu_all_gather_combine_threshold_bytes=1073741824 \
--xla_gpu_reduce_scatter_combine_threshold_bytes=1073741824"
run_sim XLA_FLAGS="$BFC_FLAGS" "$sim" --steps 4 --time-scale 0
check_eq "bfc-warning config: exit status" "$RC" 0
has "$work/err" "bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate"
has "$work/err" "The caller indicates that this is not a failure"
check "bfc-warning config: no RESOURCE_EXHAUSTED" lacks -qF RESOURCE_EXHAUSTED "$work/err"
check_eq "bfc-warning config finishes its steps" "$(grep -c '"step"' "$work/out")" 4

# 10. fsdp8 regret anchors: baseline vs the documented optimum (1.35x, within 1.25-1.4x).
run_sim "$sim" --true-value
base=$(cat "$work/out")
run_sim "${BEST_ENV[@]}" XLA_FLAGS="$BEST_FLAGS" "$sim" --true-value
best=$(cat "$work/out")
check_eq "fsdp8 baseline as documented" "$base" 531.581665
check_eq "fsdp8 optimum as documented" "$best" 393.275933
check "fsdp8 speedup $base/$best within 1.25-1.4" \
  awk -v a="$base" -v b="$best" 'BEGIN { s = a / b; exit !(s > 1.25 && s < 1.4) }'
# Flag order does not matter; FLAGTUNE_SIM_LANDSCAPE selects the landscape.
run_sim FLAGTUNE_SIM_LANDSCAPE=sparse "$sim" --true-value
check_eq "FLAGTUNE_SIM_LANDSCAPE selects the landscape" "$(out)" \
  "$(env -i "$sim" --landscape sparse --true-value)"

# 11. sparse: a no-op flag changes nothing; the three that matter do.
run_sim "$sim" --landscape sparse --true-value
sp0=$(cat "$work/out")
NOOP="--xla_gpu_enable_while_loop_double_buffering=true --xla_gpu_enable_triton_gemm=false"
run_sim XLA_FLAGS="$NOOP" \
  "$sim" --landscape sparse --true-value
check_eq "sparse: no-op flags change nothing" "$(out)" "$sp0"
run_sim XLA_FLAGS="--xla_gpu_enable_cudnn_fmha=true" "$sim" --landscape sparse --true-value
check "sparse: cudnn_fmha has an effect" [ "$(out)" != "$sp0" ]

# 12. Bad usage is exit 2.
run_sim "$sim" --landscape nope
check_eq "unknown landscape: exit status" "$RC" 2
run_sim "$sim" --steps
check_eq "missing --steps value: exit status" "$RC" 2

finish
