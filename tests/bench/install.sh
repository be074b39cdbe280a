#!/usr/bin/env bash
# Installs the search benchmark's yardsticks (tests/bench/pin.txt: Optuna 5, SMAC3, torch for
# Optuna's GPSampler) into a venv of their own, once, and prints that venv's python on stdout.
# Never a dependency of flagtune: only tests/bench/bench_search.py imports these packages.
#   bash tests/bench/install.sh            install if missing, print the python
#   bash tests/bench/install.sh --check    print the python if installed, else exit 1
#   FLAGTUNE_BENCH_VENV  where the venv lives (default ~/.cache/flagtune/bench-venv)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pin="$here/pin.txt"
venv=${FLAGTUNE_BENCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/flagtune/bench-venv}
py="$venv/bin/python3"
stamp="$venv/.flagtune-pin"

installed() { [ -x "$py" ] && [ -f "$stamp" ] && cmp -s "$pin" "$stamp"; }

if [ "${1:-}" = "--check" ]; then
  installed && { echo "$py"; exit 0; }
  exit 1
fi
if installed; then echo "$py"; exit 0; fi
# The pinned wheels need Python >= 3.12 (Debian 12's python3 is 3.11): looked for on PATH, then
# under pyenv.
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
  echo "tests/bench/install.sh: the pinned packages need Python >= 3.12 and none was found" >&2
  exit 1
}
echo "flagtune: installing the benchmark's yardsticks into $venv with $base" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$base" -m venv "$venv"
"$py" -m pip install -q --disable-pip-version-check -r "$pin" >&2
"$py" -c 'import sys, optuna, smac, torch
print("flagtune: optuna", optuna.__version__, "smac", smac.version, "torch", torch.__version__,
      file=sys.stderr)'
cp "$pin" "$stamp"
echo "$py"
