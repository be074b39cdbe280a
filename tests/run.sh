#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, and runs the whole CTest suite
# (unit, Lua, end-to-end, benchmark smoke tests).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tests/deps.sh"
bash "$root/tests/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j2 "$@"
