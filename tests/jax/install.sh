#!/usr/bin/env bash
# Installs the pinned CPU jax + jaxlib (tests/jax/pin.txt) into a venv of their own, once, and
# prints that venv's python on stdout. Used by tests/run.sh, .ci/run, tests/demo.sh --jax and the
# real-XLA tests (which call it with --check: print the python if installed, exit 1 if not).
#   FLAGTUNE_JAX_VENV  where the venv lives (default ~/.cache/flagtune/jax-VERSION)
# jax >= 0.11 needs Python >= 3.12 (tests/pyvenv.sh finds one).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pin="$here/pin.txt"
version=$(sed -n 's/^jaxlib==//p' "$pin")
venv=${FLAGTUNE_JAX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/flagtune/jax-$version}
if [ "${1:-}" = "--check" ]; then
  exec bash "$here/../pyvenv.sh" --check "$pin" "$venv"
fi
exec bash "$here/../pyvenv.sh" "$pin" "$venv" 'import sys, jax, jaxlib
print("flagtune: jax", jax.__version__, "jaxlib", jaxlib.__version__, file=sys.stderr)'
