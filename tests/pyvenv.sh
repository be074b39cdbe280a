#!/usr/bin/env bash
# The packages of a pinned requirements file in a venv of their own, made once; prints the venv's
# python on stdout. Used by tests/jax/install.sh (the real-XLA tests' jax) and
# tests/bench/install.sh (the search benchmark's yardsticks), never by flagtune itself.
#   bash tests/pyvenv.sh [--check] PIN VENV [VERIFY]
#     --check  print the python if VENV holds exactly PIN's packages, else exit 1 (installs nothing)
#     VERIFY   Python run in the new venv before it counts as installed (imports, a version line)
# The pinned wheels need Python >= 3.12 and Debian 12's python3 is 3.11, so a newer interpreter is
# looked for on PATH (python3.13, python3.12, python3), then under pyenv.
set -eu
check=0
[ "${1:-}" = "--check" ] && { check=1; shift; }
pin=$1 venv=$2 verify=${3:-}
py="$venv/bin/python3"
stamp="$venv/.flagtune-pin"
if [ -x "$py" ] && [ -f "$stamp" ] && cmp -s "$pin" "$stamp"; then
  echo "$py"
  exit 0
fi
[ $check = 1 ] && exit 1

new_enough() { "$1" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2> /dev/null; }
find_python() {
  local c
  for c in python3.13 python3.12 python3; do
    command -v "$c" > /dev/null 2>&1 && new_enough "$c" && { command -v "$c"; return; }
  done
  for c in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3 2> /dev/null | sort -rV); do
    new_enough "$c" && { echo "$c"; return; }
  done
  return 1
}
base=$(find_python) || {
  echo "tests/pyvenv.sh: $pin needs Python >= 3.12 and none was found" \
    "(python3 is $(python3 --version 2>&1)); install one and run again" >&2
  exit 1
}
echo "flagtune: installing $pin into $venv with $base" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$base" -m venv "$venv"
"$py" -m pip install -q --disable-pip-version-check -r "$pin" >&2
[ -z "$verify" ] || "$py" -c "$verify" >&2
cp "$pin" "$stamp"
echo "$py"
