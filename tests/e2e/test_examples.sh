#!/usr/bin/env bash
# Every example under experiments/ is checked: each *.lua passes `flagtune check` (so a new
# example is covered the day it is added), each *.py compiles. The JAX scripts need jax and
# GPUs to run; the sweeps that run on the simulator have their own tests (test_demo.sh,
# test_flags.sh).
# Usage: test_examples.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
n=0
for f in "$src"/experiments/*.lua; do
  x=$(basename "$f" .lua)
  n=$((n + 1))
  "$ft" check "$f" > "check_$x.txt" 2>&1
  code=$?
  [ $code = 0 ] || cat "check_$x.txt"
  check "check $x.lua: exit 0 (got $code)" [ $code = 0 ]
done
check "examples found ($n)" [ "$n" -ge 4 ]
has check_jax_fsdp.txt "ok: 16 searched parameters"
if command -v python3 >/dev/null; then
  for f in "$src"/experiments/*.py; do
    check "py_compile $(basename "$f")" python3 -c \
      "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)" \
      "$f" "$work/$(basename "$f")c"
  done
else
  skip "python3 missing: the .py examples are not compiled"
fi
finish
