# shellcheck shell=bash
# Sourced by the GPU check scripts: gpu_setup WORK BIN_DIR DEB_DIR unpacks the .debs of the
# libraries flagtune links (dpkg -x, into WORK/prefix, never /), puts them and BIN_DIR first,
# sets FLAGTUNE_DB to WORK/gpu.db, and defines `step` (a heading with the seconds since setup).
gpu_setup() {
  work=$1 bin=$(cd "$2" && pwd)
  local debs d
  debs=$(cd "$3" && pwd)
  rm -rf "$work" && mkdir -p "$work/prefix"
  for d in "$debs"/*.deb; do dpkg -x "$d" "$work/prefix"; done
  export LD_LIBRARY_PATH=$work/prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PATH=$bin:$PATH FLAGTUNE_DB=$work/gpu.db PYTHONUNBUFFERED=1
  t0=$(date +%s)
}
step() { echo "=== [$(($(date +%s) - t0)) s] $*"; }
