#!/usr/bin/env bash
# Installs the pinned CPU jax + jaxlib (tests/jax/pin.txt) into a venv of their own, once, and
# prints that venv's python on stdout. Used by tests/run.sh, .ci/run, tests/demo.sh --jax and the
# real-XLA tests (which call it with --check: print the python if installed, exit 1 if not).
#   FLAGTUNE_JAX_VENV  where the venv lives (default ~/.cache/flagtune/jax-VERSION)
# jax >= 0.11 needs Python >= 3.12; Debian 12's python3 is 3.11, so a newer interpreter is looked for
# on PATH (python3.13, python3.12) and under pyenv; none found is an error that says so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pin="$here/pin.txt"
version=$(sed -n 's/^jaxlib==//p' "$pin")
venv=${FLAGTUNE_JAX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/flagtune/jax-$version}
py="$venv/bin/python3"
stamp="$venv/.flagtune-pin"

installed() { [ -x "$py" ] && [ -f "$stamp" ] && cmp -s "$pin" "$stamp"; }

if [ "${1:-}" = "--check" ]; then
  installed && { echo "$py"; exit 0; }
  exit 1
fi
if installed; then echo "$py"; exit 0; fi

# An interpreter new enough for the pinned wheels.
find_python() {
  local c
  for c in python3.13 python3.12 python3; do
    command -v "$c" > /dev/null 2>&1 || continue
    "$c" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { command -v "$c"; return; }
  done
  local root=${PYENV_ROOT:-$HOME/.pyenv}
  for c in $(ls -d "$root"/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do
    "$c" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo "$c"; return; }
  done
  return 1
}
base=$(find_python) || {
  echo "tests/jax/install.sh: jax $version needs Python >= 3.12 and none was found" \
    "(python3 is $(python3 --version 2>&1)); install one and run again" >&2
  exit 1
}
echo "flagtune: installing jax $version (CPU) into $venv with $base" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$base" -m venv "$venv"
"$py" -m pip install -q --disable-pip-version-check -r "$pin" >&2
"$py" -c 'import jax, jaxlib; print("flagtune: jax", jax.__version__, "jaxlib", jaxlib.__version__, file=__import__("sys").stderr)'
cp "$pin" "$stamp"
echo "$py"
