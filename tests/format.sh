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
source tests/c-sources.sh
files=$(c_sources)
if clang-format --dry-run -Werror $files; then
  echo "ok   the C sources match .clang-format ($(echo "$files" | wc -l) files, $(clang-format --version))"
else
  echo "FAIL the C sources differ from .clang-format: run clang-format -i on the files above"
  exit 1
fi
