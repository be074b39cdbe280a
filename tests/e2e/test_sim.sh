#!/usr/bin/env bash
# End-to-end checks of flagtune-sim, the SIMULATED JAX workload (tests/sim/flagtune_sim.c):
# output shapes, determinism, XLA's fatal and non-fatal flag messages, OOM and its look-alike,
# and the fsdp8 landscape's documented baseline and optimum (docs/SIMULATOR.md).
# Usage: bash tests/e2e/test_sim.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR   (only SIM_BIN is used)
set -u

SIM=${2:?usage: test_sim.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILS=0

fail() {
  echo "FAIL: $*" >&2
  FAILS=$((FAILS + 1))
}

# Runs the simulator with a clean environment plus the given VAR=value words; stdout, stderr and
# the exit status land in $TMP/out, $TMP/err, $RC. Time is not slept (--time-scale 0).
sim() {
  (env -i PATH="$PATH" "$@" >"$TMP/out" 2>"$TMP/err"; exit $?) 2>/dev/null
  RC=$?
}

has() { grep -qF -- "$2" "$1"; }

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
sim "$SIM" --steps 5 --time-scale 0
[ "$RC" = 0 ] || fail "json run exited $RC"
n=$(grep -cE '^\{"step": [0-9]+, "step_time_ms": [0-9]+\.[0-9]{2}, "loss": [0-9.]+\}$' "$TMP/out")
[ "$n" = 5 ] || fail "expected 5 JSON step lines, got $n: $(cat "$TMP/out")"
has "$TMP/out" '{"step": 5, ' || fail "last JSON step is not 5"
has "$TMP/err" 'StreamExecutor device (7): NVIDIA H100' || fail "no XLA-style device log on stderr"

# 2. Text output: "step N: X ms".
sim "$SIM" --steps 3 --format text --time-scale 0 --landscape single
n=$(grep -cE '^step [0-9]+: [0-9]+\.[0-9]{2} ms$' "$TMP/out")
[ "$n" = 3 ] || fail "expected 3 text step lines, got $n"
grep -q '"step"' "$TMP/out" && fail "text format printed JSON"

# 3. Determinism: same seed, config and FLAGTUNE_TRIAL give identical output (stdout and
#    stderr); another trial number gives other noise; so does another seed.
sim FLAGTUNE_TRIAL=7 XLA_FLAGS="$LHS" "$SIM" --seed 3 --time-scale 0
cp "$TMP/out" "$TMP/a.out"
cp "$TMP/err" "$TMP/a.err"
sim FLAGTUNE_TRIAL=7 XLA_FLAGS="$LHS" "$SIM" --seed 3 --time-scale 0
cmp -s "$TMP/out" "$TMP/a.out" || fail "same seed+trial gave different stdout"
cmp -s "$TMP/err" "$TMP/a.err" || fail "same seed+trial gave different stderr"
sim FLAGTUNE_TRIAL=8 XLA_FLAGS="$LHS" "$SIM" --seed 3 --time-scale 0
cmp -s "$TMP/out" "$TMP/a.out" && fail "different FLAGTUNE_TRIAL gave identical step times"
sim FLAGTUNE_TRIAL=7 XLA_FLAGS="$LHS" "$SIM" --seed 4 --time-scale 0
cmp -s "$TMP/out" "$TMP/a.out" && fail "different --seed gave identical step times"

# 4. --noise 0: steady steps (after the two warm-up steps) equal --true-value exactly.
sim XLA_FLAGS="$LHS" "$SIM" --true-value
tv=$(cat "$TMP/out")
sim XLA_FLAGS="$LHS" "$SIM" --noise 0 --steps 4 --time-scale 0
step4=$(sed -n 's/.*"step": 4, "step_time_ms": \([0-9.]*\).*/\1/p' "$TMP/out")
[ "$(printf '%.2f' "$tv")" = "$step4" ] || fail "noise-free step 4 ($step4) != true value ($tv)"
step1=$(sed -n 's/.*"step": 1, "step_time_ms": \([0-9.]*\).*/\1/p' "$TMP/out")
awk -v a="$step1" -v b="$step4" 'BEGIN { exit !(a > 1.3 * b) }' || fail "no warm-up on step 1"

# 5. Unknown flag: XLA's exact fatal text, then death by SIGABRT (134 in bash); nothing on stdout.
# Today's XLA (xla/parse_flags_from_env.cc:224) says "flag" for one, "flags" for more.
sim XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true --xla_foo=1" "$SIM" --time-scale 0
[ "$RC" = 134 ] || fail "unknown flag: exit $RC, expected 134 (SIGABRT)"
has "$TMP/err" "parse_flags_from_env.cc:224] Unknown flag in XLA_FLAGS: --xla_foo=1" ||
  fail "unknown flag: message missing: $(cat "$TMP/err")"
grep -q '"step"' "$TMP/out" && fail "unknown flag: steps were printed"
sim XLA_FLAGS="--xla_foo=1 --xla_gpu_autotune_level=0 --xla_bar" "$SIM" --time-scale 0
has "$TMP/err" "Unknown flags in XLA_FLAGS: --xla_foo=1 --xla_bar" ||
  fail "two unknown flags: message missing: $(cat "$TMP/err")"
# jax <= 0.5.0: always "flags", the TF_XLA_FLAGS hint, and a list that may name known flags.
sim FLAGTUNE_SIM_OLD_XLA=1 XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true --xla_foo=1" \
  "$SIM" --time-scale 0
[ "$RC" = 134 ] || fail "old unknown flag: exit $RC, expected 134 (SIGABRT)"
has "$TMP/err" "parse_flags_from_env.cc:234] Unknown flags in XLA_FLAGS: --xla_foo=1 " ||
  fail "old unknown flag: message missing: $(cat "$TMP/err")"
has "$TMP/err" "Perhaps you meant to specify these on the TF_XLA_FLAGS envvar?" ||
  fail "old unknown flag: TF_XLA_FLAGS hint missing"
sim FLAGTUNE_SIM_OLD_XLA=1 XLA_FLAGS="--xla_foo=1 --xla_gpu_autotune_level=0 --xla_bar \
--xla_gpu_enable_latency_hiding_scheduler=true" "$SIM" --time-scale 0
has "$TMP/err" "Unknown flags in XLA_FLAGS: --xla_foo=1 --xla_bar  \
--xla_gpu_enable_latency_hiding_scheduler=true " || fail "old list is not the over-inclusive one"
sim XLA_FLAGS="--xla_tpu_enable_latency_hiding_scheduler=true" "$SIM" --true-value
[ "$(cat "$TMP/out")" = invalid ] || fail "TPU flag in XLA_FLAGS should be invalid on a GPU jaxlib"
# A non-bool flag without '=' is not recognised by XLA either.
sim XLA_FLAGS="--xla_gpu_enable_command_buffer" "$SIM" --true-value
[ "$(cat "$TMP/out")" = invalid ] || fail "bare string flag should be unknown to XLA"

# 6. Malformed values: today tsl logs the value, then XLA's QCHECK dies with "Flag parsing failed."
# and the usage table (xla/parse_flags_from_env.cc:210); an enum list value logs nothing first.
sim XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=maybe" "$SIM" --steps 2 --time-scale 0
[ "$RC" = 134 ] || fail "malformed bool: exit $RC, expected 134 (SIGABRT)"
has "$TMP/err" "Couldn't interpret value maybe for flag xla_gpu_enable_latency_hiding_scheduler." ||
  fail "malformed bool: message missing"
has "$TMP/err" "parse_flags_from_env.cc:210] Check failed: tsl::Flags::Parse(&env_argv->argc, \
env_argv->argv.data(), flag_list) Flag parsing failed." || fail "malformed bool: not fatal"
grep -q '"step"' "$TMP/out" && fail "malformed bool: steps were printed"
sim XLA_FLAGS="--xla_gpu_enable_command_buffer=FUSION,CONVOLUTION" "$SIM" --steps 2 --time-scale 0
[ "$RC" = 134 ] || fail "unknown enum value: exit $RC, expected 134 (SIGABRT)"
has "$TMP/err" "Flag parsing failed." || fail "unknown enum value: not fatal"
has "$TMP/err" "usage: --xla_gpu_enable_command_buffer=FUSION,CONVOLUTION" ||
  fail "unknown enum value: usage line missing"
sim XLA_FLAGS="--xla_gpu_all_gather_combine_threshold_bytes=12x" "$SIM" --true-value
has "$TMP/err" \
  "Couldn't interpret value 12x for flag xla_gpu_all_gather_combine_threshold_bytes." ||
  fail "malformed int: message missing"
[ "$(cat "$TMP/out")" = invalid ] || fail "malformed int should be invalid"
# jax <= 0.5.0: logged, flag left unset, run continues.
sim FLAGTUNE_SIM_OLD_XLA=1 XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=maybe" "$SIM" \
  --steps 2 --time-scale 0
[ "$RC" = 0 ] || fail "old malformed bool: exit $RC"
has "$TMP/err" "Couldn't interpret value maybe for flag xla_gpu_enable_latency_hiding_scheduler." ||
  fail "old malformed bool: message missing"
sim "$SIM" --true-value
[ "$(cat "$TMP/out")" = "$(env -i FLAGTUNE_SIM_OLD_XLA=1 \
  XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=maybe "$SIM" --true-value 2>/dev/null)" ] ||
  fail "old malformed value should leave the baseline unchanged"

# 7. Tokenizer: quoted values, bare bools and a flags file behave like XLA's.
sim XLA_FLAGS="--xla_dump_to=\"/tmp/a b\" --xla_gpu_enable_latency_hiding_scheduler" \
  "$SIM" --true-value
[ "$(cat "$TMP/out")" = "$tv" ] || fail "bare bool / quoted value not parsed like XLA"
echo "--xla_gpu_enable_latency_hiding_scheduler=true" >"$TMP/flags.txt"
sim XLA_FLAGS="$TMP/flags.txt" "$SIM" --true-value
[ "$(cat "$TMP/out")" = "$tv" ] || fail "XLA_FLAGS naming a file was not read"
sim XLA_FLAGS="--xla_gpu_enable_command_buffer=''" "$SIM" --landscape single --true-value
[ "$(cat "$TMP/out")" != "$(env -i "$SIM" --landscape single --true-value)" ] ||
  fail "--xla_gpu_enable_command_buffer='' did not disable command buffers"

# 8. OOM: the guide's 8 GiB thresholds at the default memory fraction exit 1 with
#    RESOURCE_EXHAUSTED after compiling, before any step.
OOM_FLAGS="$LHS \
--xla_gpu_all_gather_combine_threshold_bytes=8589934592 \
--xla_gpu_reduce_scatter_combine_threshold_bytes=8589934592"
sim XLA_FLAGS="$OOM_FLAGS" "$SIM" --time-scale 0
[ "$RC" = 1 ] || fail "OOM config exited $RC, expected 1"
OOM_RE='XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate [0-9]+ bytes\.$'
grep -qE "^jaxlib.xla_extension.$OOM_RE" "$TMP/err" ||
  fail "OOM: RESOURCE_EXHAUSTED line missing: $(tail -3 "$TMP/err")"
has "$TMP/err" "BufferAssignment OOM Debugging." || fail "OOM: BufferAssignment line missing"
grep -q '"step"' "$TMP/out" && fail "OOM: steps were printed"
sim XLA_FLAGS="$OOM_FLAGS" "$SIM" --true-value
[ "$(cat "$TMP/out")" = oom ] || fail "--true-value of OOM config: $(cat "$TMP/out")"
# NVLS + user buffers need memory outside the pool: at fraction 0.95 NCCL cannot initialise.
sim "${BEST_ENV[@]}" XLA_PYTHON_CLIENT_MEM_FRACTION=0.95 XLA_FLAGS="$BEST_FLAGS" \
  "$SIM" --time-scale 0
[ "$RC" = 1 ] || fail "NCCL OOM config exited $RC"
has "$TMP/err" "Cuda failure 2 'out of memory'" || fail "NCCL OOM text missing"

# 9. The harmless BFC warning appears for a tight-but-fitting config, which then succeeds.
BFC_FLAGS="$LHS --xla_gpu_enable_pipelined_collectives=true \
--xla_gpu_all_gather_combine_threshold_bytes=1073741824 \
--xla_gpu_reduce_scatter_combine_threshold_bytes=1073741824"
sim XLA_FLAGS="$BFC_FLAGS" "$SIM" --steps 4 --time-scale 0
[ "$RC" = 0 ] || fail "bfc-warning config exited $RC"
has "$TMP/err" "bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate" ||
  fail "bfc warning missing"
has "$TMP/err" "The caller indicates that this is not a failure" || fail "bfc warning text"
has "$TMP/err" "RESOURCE_EXHAUSTED" && fail "bfc-warning config printed RESOURCE_EXHAUSTED"
[ "$(grep -c '"step"' "$TMP/out")" = 4 ] || fail "bfc-warning config did not finish its steps"

# 10. fsdp8 regret anchors: baseline vs the documented optimum (1.35x, within 1.25-1.4x).
sim "$SIM" --true-value
base=$(cat "$TMP/out")
sim "${BEST_ENV[@]}" XLA_FLAGS="$BEST_FLAGS" "$SIM" --true-value
best=$(cat "$TMP/out")
[ "$base" = 531.581665 ] || fail "fsdp8 baseline $base, docs say 531.581665"
[ "$best" = 393.275933 ] || fail "fsdp8 optimum $best, docs say 393.275933"
awk -v a="$base" -v b="$best" 'BEGIN { s = a / b; exit !(s > 1.25 && s < 1.4) }' ||
  fail "fsdp8 speedup $base/$best outside 1.25-1.4"
# Flag order does not matter; FLAGTUNE_SIM_LANDSCAPE selects the landscape.
sim FLAGTUNE_SIM_LANDSCAPE=sparse "$SIM" --true-value
[ "$(cat "$TMP/out")" = "$(env -i "$SIM" --landscape sparse --true-value)" ] ||
  fail "FLAGTUNE_SIM_LANDSCAPE ignored"

# 11. sparse: a no-op flag changes nothing; the three that matter do.
sim "$SIM" --landscape sparse --true-value
sp0=$(cat "$TMP/out")
NOOP="--xla_gpu_enable_while_loop_double_buffering=true --xla_gpu_enable_triton_gemm=false"
sim XLA_FLAGS="$NOOP" \
  "$SIM" --landscape sparse --true-value
[ "$(cat "$TMP/out")" = "$sp0" ] || fail "sparse: no-op flags changed the value"
sim XLA_FLAGS="--xla_gpu_enable_cudnn_fmha=true" "$SIM" --landscape sparse --true-value
[ "$(cat "$TMP/out")" != "$sp0" ] || fail "sparse: cudnn_fmha had no effect"

# 12. Bad usage is exit 2.
sim "$SIM" --landscape nope
[ "$RC" = 2 ] || fail "unknown landscape exited $RC"
sim "$SIM" --steps
[ "$RC" = 2 ] || fail "missing --steps value exited $RC"

if [ "$FAILS" -ne 0 ]; then
  echo "test_sim.sh: $FAILS check(s) failed" >&2
  exit 1
fi
echo "test_sim.sh: ok"
