#!/usr/bin/env bash
# The C sources follow .clang-format (Google base, 2-space indent, 100 columns): a file that
# differs fails, naming the file and line. Skipped (exit 77, CTest's SKIP) only when
# clang-format is not installed; .ci/run installs it, so CI always checks.
# Usage: tests/format.sh SOURCE_DIR
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v clang-format > /dev/null; then
  echo "SKIP clang-format is not installed (apt-get install clang-format)"
  exit 77
fi
cd "$src" || exit 1
if clang-format --dry-run -Werror src/*.c src/*.h; then
  echo "ok   src/ matches .clang-format ($(ls src/*.c src/*.h | wc -l) files, $(clang-format --version))"
else
  echo "FAIL src/ differs from .clang-format: run clang-format -i src/*.c src/*.h"
  exit 1
fi
