#!/usr/bin/env bash
# What durability costs per trial: the store's writes of a trial under synchronous=NORMAL,
# synchronous=FULL, each finish checkpointed before it returns (the store alone), and the same
# with group commit (a sweep's policy: the worker thread checkpoints); paired rounds, medians (docs/RELIABILITY.md, "Durability"). The database goes in DIR (default: a temporary
# directory under the build tree, so on the disk a database would be on).
# Usage: tests/bench/bench_durability.sh [BUILD_DIR] [ROUNDS] [TRIALS] [DIR]
set -euo pipefail
build=${1:-build}
rounds=${2:-9}
trials=${3:-200}
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=${4:-$(mktemp -d "$build/bench_durability.XXXXXX")}
bin="$build/bench_durability"
cc -O2 $(source "$src/tests/c-sources.sh"; for d in $FLAGTUNE_C_DIRS; do printf -- '-I%s/%s ' "$src" "$d"; done) "$src/tests/bench/bench_durability.c" "$build/libftcore.a" \
  $(pkg-config --libs lua5.4 sqlite3 libuv libcjson) -lm -o "$bin"
echo "database in $dir ($(df -T "$dir" | awk 'NR == 2 { print $2 }'))"
"$bin" "$dir" "$rounds" "$trials"
[ -n "${4:-}" ] || rm -rf "$dir"
