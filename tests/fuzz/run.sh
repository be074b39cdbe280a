#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -DFLAGTUNE_FUZZ=ON, in build-fuzz/) and runs each for
# SECONDS (default 30) from a scratch copy of its seed corpus (tests/fuzz/corpus/NAME), so the
# checked-in seeds are never rewritten. A crash leaves crash-* in build-fuzz/fuzz-out/NAME and
# fails the run. Exit 0 also when clang or its libFuzzer runtime is missing (a SKIP line says so).
# Usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-30}
shift || true
targets=${*:-fuzz_lines fuzz_units fuzz_quote fuzz_splitter}
build=$root/build-fuzz
if ! command -v clang > /dev/null; then echo "SKIP fuzz: no clang"; exit 0; fi
probe=$(mktemp -d)
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe/p.c"
if ! clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2> /dev/null; then
  rm -rf "$probe"; echo "SKIP fuzz: clang has no libFuzzer runtime"; exit 0
fi
rm -rf "$probe"
CC=clang cmake -S "$root" -B "$build" -DFLAGTUNE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug > /dev/null || exit 1
# shellcheck disable=SC2086
cmake --build "$build" -j2 --target $targets > /dev/null || exit 1
failed=0
for t in $targets; do
  out=$build/fuzz-out/$t
  rm -rf "$out"
  mkdir -p "$out/corpus"
  cp "$root/tests/fuzz/corpus/$t"/* "$out/corpus/" 2> /dev/null
  (cd "$out" && "$build/tests/$t" -max_total_time="$secs" -max_len=4096 -timeout=10 \
      -print_final_stats=1 corpus > log.txt 2>&1)
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/log.txt" | grep -o '[0-9]*$')
  if [ $rc = 0 ]; then
    echo "ok   $t: ${runs:-?} runs in ${secs}s, corpus $(ls "$out/corpus" | wc -l)"
  else
    failed=$((failed + 1))
    echo "FAIL $t (exit $rc): $(ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* 2> /dev/null | head -3)"
    grep -E "ERROR|SUMMARY|#[0-9]+ .* in " "$out/log.txt" | head -12
  fi
done
[ $failed = 0 ]
