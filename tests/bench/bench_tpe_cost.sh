#!/usr/bin/env bash
# The cost of one tpe{} proposal (ask + tell) at 100 to 10,000 finished trials over 10, 20
# and 30 parameters: CPU ms and Lua VM instructions per proposal (tests/bench/README.md).
#   BENCH_TRIALS=100,500,1000,2000,10000 BENCH_PARAMS=10,20,30 BENCH_REPS=5 \
#     nice -n 10 tests/bench/bench_tpe_cost.sh [build-dir]
# BENCH_STRATEGY=halving measures another strategy the same way.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
cd "$root"
exec "$build/tests/luatest" tests/bench/bench_tpe_cost.lua
