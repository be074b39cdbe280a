#!/usr/bin/env bash
# Records what the pinned jax prints for each case of tests/e2e/real_xla/case.sh into
# tests/data/real/CASE.txt (stdout and stderr together; the flag table after "Flag parsing
# failed." cut to its first lines). Usage: bash tests/data/real/record.sh [CASE...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
py=$(bash "$src/tests/jax/install.sh" --check) || { echo "record.sh: no pinned jax" >&2; exit 1; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(unknown_flag bad_bool bad_int bad_float bad_enum bad_list
  empty_list both_fractions matmul_precision optimization_level enable_x64 allocator)
for c in "${cases[@]}"; do
  env -u XLA_FLAGS FT_CASE="$c" "$src/tests/e2e/real_xla/case.sh" "$py" 3 2>&1 |
    awk '/^Flags:$/ { n = 1 } n && n++ > 4 { next } { print }' > "$here/$c.txt"
  echo "$c: $(wc -l < "$here/$c.txt") lines"
done
