#!/usr/bin/env bash
# Every example under experiments/ is checked: each *.lua passes `flagtune check` (so a new
# example is covered the day it is added), each *.py compiles, and the GPU FSDP script runs two
# steps on 8 CPU devices with the pinned jax (tests/jax/install.sh; missing: skipped, in CI a
# failure). The sweeps have their own tests (test_demo.sh, test_flags.sh on the simulator,
# test_real_cpu_sweep.sh on real XLA).
# Usage: test_examples.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
n=0
for f in "$src"/experiments/*.lua; do
  x=$(basename "$f" .lua)
  n=$((n + 1))
  "$ft" check "$f" > "check_$x.txt" 2>&1
  code=$?
  [ $code = 0 ] || cat "check_$x.txt"
  check "check $x.lua: exit 0 (got $code)" [ $code = 0 ]
done
check "examples found ($n)" [ "$n" -ge 4 ]
has check_jax_fsdp.txt "ok: 16 searched parameters"
has check_jax_cpu_fsdp.txt "ok: 4 searched parameters"
check "check jax_cpu_fsdp.lua: no warning" not grep -qi warning check_jax_cpu_fsdp.txt
if command -v python3 >/dev/null; then
  for f in "$src"/experiments/*.py; do
    check "py_compile $(basename "$f")" python3 -c \
      "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)" \
      "$f" "$work/$(basename "$f")c"
  done
else
  skip "python3 missing: the .py examples are not compiled"
fi
# jax_fsdp.py's smoke test on CPU: the GPU example's own code path (bf16, layers under scan),
# tiny, with its collectives counted in the compiled HLO.
if jaxpy=$(bash "$src/tests/jax/install.sh" --check); then
  XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu "$jaxpy" \
    "$src/experiments/jax_fsdp.py" --steps 2 --dim 64 --layers 2 --seq 32 --batch 8 --vocab 256 \
    --heads 4 --hlo > fsdp.out 2> fsdp.err
  code=$?
  [ $code = 0 ] || tail -5 fsdp.err
  check "jax_fsdp.py on 8 CPU devices: exit 0 (got $code)" [ $code = 0 ]
  check "jax_fsdp.py: 2 steps with step_time_ms and loss" \
    [ "$(grep -c '"step_time_ms": .*"loss": ' fsdp.out)" = 2 ]
  has fsdp.err "8 devices (cpu), fsdp over all, 2 layers under scan"
  check "jax_fsdp.py: all-gathers and reduce-scatters in the compiled step" \
    grep -qE 'compiled step holds [1-9][0-9]* all-gather, [1-9][0-9]* reduce-scatter' fsdp.err
elif [ "${CI:-}" = true ]; then
  fail "the pinned jax is not installed (bash tests/jax/install.sh): jax_fsdp.py not run"
else
  skip "the pinned jax is not installed (bash tests/jax/install.sh): jax_fsdp.py not run"
fi
finish
