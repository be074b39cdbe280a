#!/usr/bin/env bash
# Raw upstream texts from a GPU machine, for pinning flagtune's parsers to what jaxlib prints:
# the XLA_FLAGS=--help table (stdout and stderr apart), `flagtune flags probe` of every
# non-TPU catalog flag, and the run-to-run noise of the transformer example's step time.
#
#   bash tests/gpu/truth.sh BIN_DIR DEB_DIR NAMES_FILE OUT_DIR
set -u
bin=$(cd "$1" && pwd) debs=$(cd "$2" && pwd) names=$(cat "$3") out=$4
mkdir -p "$out" /tmp/fttruth/prefix && out=$(cd "$out" && pwd)
for d in "$debs"/*.deb; do dpkg -x "$d" /tmp/fttruth/prefix; done
export LD_LIBRARY_PATH=/tmp/fttruth/prefix/usr/lib/x86_64-linux-gnu PATH=$bin:$PATH
export FLAGTUNE_DB=/tmp/fttruth/t.db PYTHONUNBUFFERED=1
t0=$(date +%s)
step() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
step "XLA_FLAGS=--help"
XLA_FLAGS=--help timeout 60 python3 -c 'import jax; jax.devices()' >"$out/help_stdout.txt" 2>"$out/help_stderr.txt"
echo "rc=$?"; wc -l "$out"/help_*.txt; grep -c -- '--xla' "$out"/help_*.txt
# shellcheck disable=SC2086 # the names are words
step "flags probe of $(echo $names | wc -w) catalog flags"
# shellcheck disable=SC2086
set -- $names; half=$(( $# / 2 ))
timeout 60 flagtune flags probe --command "python3 -c 'import jax; jax.devices()'" "${@:1:half}" >"$out/probe.txt" 2>&1
echo "rc=$?"
timeout 60 flagtune flags probe --command "python3 -c 'import jax; jax.devices()'" "${@:half+1}" >>"$out/probe.txt" 2>&1
echo "rc=$?"; grep -c accepted "$out/probe.txt"; grep -v accepted "$out/probe.txt" | cut -c1-160 | head -60
step "noise: the transformer example's baseline, 3 processes"
cd "$(dirname "$0")/../../experiments" || exit 1
for i in 1 2 3; do timeout 45 python3 jax_transformer.py --steps 30 >"$out/noise$i.txt" 2>&1; echo "run $i rc=$?"; done
step finished
