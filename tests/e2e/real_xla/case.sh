#!/bin/sh
# The trial command of tests/e2e/test_real_xla.sh: sets what case $FT_CASE names (a setting
# jax, jaxlib or XLA refuses), then runs train.py with the pinned jax. No case: the baseline.
# Usage: case.sh PYTHON STEPS
py=$1
shift
case "${FT_CASE:-}" in
  '') ;;
  unknown_flag) export XLA_FLAGS=--xla_made_up_flag=1 ;;
  bad_bool) export XLA_FLAGS=--xla_cpu_enable_fast_math=maybe ;;
  bad_int) export XLA_FLAGS=--xla_gpu_autotune_level=high ;;
  bad_float) export XLA_FLAGS=--xla_gpu_autotune_gemm_rtol=tight ;;
  bad_enum) export XLA_FLAGS=--xla_cpu_experimental_xnn_graph_fusion_mode=BOGUS ;;
  bad_list) export XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,BOGUS ;;
  empty_list) export XLA_FLAGS=--xla_gpu_disable_async_collectives= ;;
  both_fractions) export XLA_CLIENT_MEM_FRACTION=0.5 XLA_PYTHON_CLIENT_MEM_FRACTION=0.6 ;;
  matmul_precision) export JAX_DEFAULT_MATMUL_PRECISION=bogus ;;
  optimization_level) export JAX_OPTIMIZATION_LEVEL=O4 ;;
  enable_x64) export JAX_ENABLE_X64=maybe ;;
  allocator) export XLA_PYTHON_CLIENT_ALLOCATOR=bogus ;;
  *) echo "case.sh: unknown case '$FT_CASE'" >&2; exit 2 ;;
esac
exec "$py" "$(dirname "$0")/train.py" "$@"
