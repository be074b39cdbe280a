#!/usr/bin/env bash
# Installs the search benchmark's yardsticks (tests/bench/pin.txt: Optuna 5, SMAC3, torch for
# Optuna's GPSampler) into a venv of their own, once, and prints that venv's python on stdout.
# Never a dependency of flagtune: only tests/bench/bench_search.py imports these packages.
#   bash tests/bench/install.sh            install if missing, print the python
#   bash tests/bench/install.sh --check    print the python if installed, else exit 1
#   FLAGTUNE_BENCH_VENV  where the venv lives (default ~/.cache/flagtune/bench-venv)
# The pinned wheels need Python >= 3.12 (tests/pyvenv.sh finds one).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pin="$here/pin.txt"
venv=${FLAGTUNE_BENCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/flagtune/bench-venv}
if [ "${1:-}" = "--check" ]; then
  exec bash "$here/../pyvenv.sh" --check "$pin" "$venv"
fi
exec bash "$here/../pyvenv.sh" "$pin" "$venv" 'import sys, optuna, smac, torch
print("flagtune: optuna", optuna.__version__, "smac", smac.version, "torch", torch.__version__,
      file=sys.stderr)'
