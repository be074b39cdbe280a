#!/usr/bin/env bash
# The GPU check: flagtune's real JAX examples end to end on one NVIDIA GPU, in one short run.
#
#   bash tests/gpu/run.sh BIN_DIR DEB_DIR OUT_DIR
#
# BIN_DIR holds flagtune and flagtune-supervise built on Debian 12; DEB_DIR the .debs of the
# libraries they link (liblua5.4-0, libsqlite3-0, libuv1, libcjson1), unpacked with dpkg -x
# into a private prefix (never /). Needs python3 with jax[cuda] and nvidia-smi. Writes to
# OUT_DIR: env.txt, flags.txt (the jaxlib's own flag list against the catalog), one folder per
# sweep (show, best, export, the trials' logs), a real out-of-memory trial's text, and gpu.tar.gz
# with all of it. Every step has its own time limit, so a hung step costs only its own share.
set -u
out=$3
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/gpu/lib.sh
source "$repo/tests/gpu/lib.sh"
gpu_setup /tmp/ftgpu "$1" "$2"

step environment
{
  date -u; uname -a
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  nvidia-smi -L
  python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__); print(jax.devices())'
  flagtune --version
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

step "flags import (XLA_FLAGS=--help) and the catalog against it"
{
  jl=$(python3 -c 'import jaxlib; print(jaxlib.__version__)')
  timeout 120 flagtune flags import --jaxlib "$jl" --command "python3 -c 'import jax; jax.devices()'"; echo "rc=$?"
  timeout 30 flagtune flags --jaxlib "$jl"; echo "rc=$?"
} >"$out/flags.txt" 2>&1
grep -c . "$out/flags.txt"; grep -i "lack\|missing\|unknown\|rc=" "$out/flags.txt" | head -20

cp "$repo"/experiments/jax_transformer.py "$repo"/experiments/jax_fsdp.py "$work/"
cp "$repo"/experiments/jax_transformer.lua "$work/transformer.lua"
sed 's/gpus_per_trial = 8/gpus_per_trial = 1/' "$repo/experiments/jax_fsdp.lua" >"$work/fsdp.lua"
# An out-of-memory trial: a model too large for 1 % of the GPU, and one that fits in 90 %.
sed -e 's/"--layers", "8" }/"--layers", "24", "--batch", "64" }/' \
    -e 's/name = "jax-transformer-1gpu"/name = "jax-oom"/' -e 's/model = "jax-transformer-8x1024"/model = "jax-transformer-24x1024-b64"/' \
    -e 's/presets = xla.presets.codegen{},/vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.01, 0.9 } },/' -e 's/flags = { xla_gpu_enable_triton_gemm = auto },//' -e 's/strategy = tpe { startup = 10 }/strategy = grid{}/' \
    "$repo/experiments/jax_transformer.lua" >"$work/oom.lua"
cd "$work" || exit 1

step "raw texts: an unknown flag and an out-of-memory, straight from jax (no flagtune)"
XLA_FLAGS=--xla_gpu_no_such_flag=1 timeout 60 python3 -c 'import jax; jax.devices()' >"$out/raw_unknown_flag.txt" 2>&1
echo "rc=$?" >>"$out/raw_unknown_flag.txt"; tail -5 "$out/raw_unknown_flag.txt"
XLA_CLIENT_MEM_FRACTION=0.01 timeout 90 python3 jax_transformer.py --steps 4 --layers 24 --batch 64 >"$out/raw_oom.txt" 2>&1
echo "rc=$?" >>"$out/raw_oom.txt"; grep -n "RESOURCE_EXHAUSTED\|Out of memory\|rc=" "$out/raw_oom.txt" | head -8

sweep() { # NAME EXPERIMENT LIMIT_S ARGS...
  local name=$1 exp=$2 lim=$3; shift 3
  step "sweep $name ($exp, at most $lim s)"
  mkdir -p "$out/$name"
  timeout -s INT "$lim" flagtune run "$exp" --name "$name" "$@" >"$out/$name/run.txt" 2>&1
  echo "rc=$?" >>"$out/$name/run.txt"; tail -15 "$out/$name/run.txt"
  flagtune show "$name" >"$out/$name/show.txt" 2>&1
  flagtune show "$name" --json >"$out/$name/show.json" 2>&1
  flagtune export "$name" >"$out/$name/export.sh" 2>&1
}
flagtune check transformer.lua >"$out/check.txt" 2>&1; flagtune check fsdp.lua >>"$out/check.txt" 2>&1
flagtune check oom.lua >>"$out/check.txt" 2>&1; cat "$out/check.txt"
sweep oom oom.lua 100 --trials 3
sweep transformer transformer.lua 180 --trials 10 --hours 0.045
sweep fsdp fsdp.lua 90 --trials 4 --hours 0.022
flagtune best >"$out/best.txt" 2>&1; cat "$out/best.txt"
flagtune sweeps >>"$out/best.txt" 2>&1
flagtune report transformer -o "$out/report.html" >/dev/null 2>&1
step "pack"
cp -r "$work/flagtune-logs" "$out/logs" 2>/dev/null; cp "$work/gpu.db" "$out/" 2>/dev/null
tar -C "$out" -czf /tmp/gpu.tar.gz . && mv /tmp/gpu.tar.gz "$out/gpu.tar.gz"
find "$out" -mindepth 1 -maxdepth 1 ! -name gpu.tar.gz ! -name env.txt ! -name flags.txt ! -name best.txt -exec rm -rf {} +
step finished
