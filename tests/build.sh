#!/usr/bin/env bash
# Configures and builds flagtune into build/ (warnings are errors). Prints nothing on success
# but CMake's own progress.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLAGTUNE_WERROR=ON >/dev/null
cmake --build "$root/build" -j"$(nproc)" >/dev/null
