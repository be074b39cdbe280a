#!/usr/bin/env bash
# The quick-start demo: installs what building it needs (tests/deps.sh --demo), builds, runs
# experiments/demo.lua against the bundled simulated workload, and prints the best flags and
# the export snippet.
#   --jax  the real thing with no GPU: installs the pinned CPU jax (tests/jax/install.sh), runs a
#          small sweep of experiments/jax_cpu_fsdp.lua (real XLA on 8 CPU devices; a few
#          minutes), then prints the best flags and the export snippet (docs/CPU.md).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
jax=0
case "${1:-}" in
  "") ;;
  --jax) jax=1 ;;
  *) echo "usage: $0 [--jax]" >&2; exit 2 ;;
esac
bash "$root/tests/deps.sh" --demo # the build packages only: the tests' tools are tests/run.sh's
bash "$root/tests/build.sh"
export PATH="$root/build:$PATH" FLAGTUNE_SIM="$root/build/flagtune-sim"
db=${FLAGTUNE_DB:-$root/build/demo.db}
[ $jax = 0 ] || db=${FLAGTUNE_DB:-$root/build/demo-jax.db}
rm -f "$db" "$db-wal" "$db-shm"
cd "$root"
if [ $jax = 0 ]; then
  flagtune run experiments/demo.lua --db "$db" --seed 7
else
  FLAGTUNE_JAX_PYTHON=$(bash "$root/tests/jax/install.sh")
  export FLAGTUNE_JAX_PYTHON
  flagtune run experiments/jax_cpu_fsdp.lua --db "$db" --seed 7 --trials 8
  echo
  echo "--- flagtune export 1 --db $db"
  flagtune export 1 --db "$db"
fi
echo
echo "--- flagtune best --db $db"
flagtune best --db "$db"
