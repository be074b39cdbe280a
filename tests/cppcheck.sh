#!/usr/bin/env bash
# Static analysis of src/ with cppcheck (warning, performance and portability checks, C11): any
# finding fails, naming file:line and the check's id. A false positive is silenced where it is,
# with `// cppcheck-suppress ID` and the reason beside it, never for a whole file.
# tests/cppcheck/cjson.cfg tells cppcheck the cJSON macro it cannot read from the system header.
# Skipped (exit 77, CTest's SKIP) when cppcheck is not installed, except in CI (CI=true), where a
# missing cppcheck fails: tests/deps.sh installs it.
# Usage: tests/cppcheck.sh SOURCE_DIR
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v cppcheck > /dev/null; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL cppcheck is not installed (apt-get install cppcheck)"
    exit 1
  fi
  echo "SKIP cppcheck is not installed (apt-get install cppcheck)"
  exit 77
fi
cd "$src" || exit 1
source tests/c-sources.sh
out=$(cppcheck --enable=warning,performance,portability --std=c11 --inline-suppr -q \
  --library=tests/cppcheck/cjson.cfg $(for d in $FLAGTUNE_C_DIRS; do printf -- "-I %s " "$d"; done)--error-exitcode=1 \
  --template='{file}:{line}: {severity}: {message} [{id}]' $(c_sources c) 2>&1)
rc=$?
if [ "$rc" = 0 ] && [ -z "$out" ]; then
  echo "ok   cppcheck finds nothing in the C sources ($(c_sources c | wc -l) files, $(cppcheck --version))"
  exit 0
fi
echo "$out"
echo "FAIL cppcheck: fix each finding above, or silence a false positive on its line with its reason"
exit 1
