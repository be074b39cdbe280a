#!/bin/sh
# Regenerates this folder's record of one jaxlib: what XLA refuses among the catalog's flags
# (`flagtune flags probe --catalog`, jaxlib-V.txt) and which catalog defaults it contradicts
# (defaults.py, jaxlib-V-defaults.txt). Run from the repository root after building:
#   sh tests/data/probe/regen.sh build/flagtune /root/.cache/flagtune/jax-0.12.0.1/bin/python3
# A few minutes on CPU (XLA parses every flag, GPU ones too, whatever the backend).
set -e
ft=$1 py=$2
[ -x "$ft" ] && [ -x "$py" ] || { echo "usage: regen.sh FLAGTUNE PYTHON" >&2; exit 2; }
v=$("$py" -c 'import jaxlib; print(jaxlib.__version__)')
dir=$(dirname "$0")
"$ft" flags probe --catalog -q --command "$py -c 'import jax; jax.devices()'" > "$dir/jaxlib-$v.txt"
"$ft" flags --json | "$py" "$dir/defaults.py" "$dir/jaxlib-$v.txt" > "$dir/jaxlib-$v-defaults.txt"
echo "wrote $dir/jaxlib-$v.txt and $dir/jaxlib-$v-defaults.txt"
