#!/usr/bin/env bash
# The quick-start demo: installs what building it needs (tests/deps.sh --demo), builds, runs
# experiments/demo.lua against the bundled simulated workload, and prints the best flags and
# the export snippet.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tests/deps.sh" --demo # the build packages only: the tests' tools are tests/run.sh's
bash "$root/tests/build.sh"
export PATH="$root/build:$PATH" FLAGTUNE_SIM="$root/build/flagtune-sim"
db=${FLAGTUNE_DB:-$root/build/demo.db}
rm -f "$db" "$db-wal" "$db-shm"
cd "$root"
flagtune run experiments/demo.lua --db "$db" --seed 7
echo
echo "--- flagtune best --db $db"
flagtune best --db "$db"
