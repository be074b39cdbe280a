#!/usr/bin/env bash
# What each sweep's own compilation cache saves a real sweep: experiments/jax_cpu_fsdp.lua at
# 8 trials of 4 steps with a confirmation of the leader (confirm = { top = 1, repeats = 1 }),
# once with the default cache and once with JAX_COMPILATION_CACHE_DIR= (off). Prints each
# sweep's wall time and every trial's first_step_ms (process start to first step: compile
# included). Needs the pinned CPU jax (bash tests/jax/install.sh).
# Usage: bench_compile_cache.sh [BUILD [WORKDIR]]   (BUILD: the build directory, default build)
set -euo pipefail
ft=$(realpath "${1:-build}/flagtune")
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work" && cd "$work"
export FLAGTUNE_JAX_PYTHON=${FLAGTUNE_JAX_PYTHON:-$(bash "$src/tests/jax/install.sh" --check)}
sed -e "s#\"jax_cpu_fsdp.py\"#\"$src/experiments/jax_cpu_fsdp.py\"#" \
  -e 's#budget = { trials = 16, steps = 10 },#budget = { trials = 8, steps = 4 }, confirm = { top = 1, repeats = 1 }, seed = 3,#' \
  "$src/experiments/jax_cpu_fsdp.lua" > m.lua
grep -q 'confirm = { top = 1' m.lua || { echo "experiments/jax_cpu_fsdp.lua changed: fix the sed" >&2; exit 1; }
for mode in on off; do
  rm -f "$mode.db"
  start=$(date +%s.%N)
  if [ "$mode" = on ]; then "$ft" -q run m.lua --db "$mode.db"
  else JAX_COMPILATION_CACHE_DIR= "$ft" -q run m.lua --db "$mode.db"; fi
  echo "cache $mode: sweep wall $(echo "$(date +%s.%N) - $start" | bc) s"
  "$ft" query --db "$mode.db" "SELECT number, role, status, round(first_step_ms) AS first_step_ms,
    round(value, 1) AS value FROM trials ORDER BY number"
done
