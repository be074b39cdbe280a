#!/usr/bin/env bash
# The second GPU check, for what tests/gpu/run.sh could not fit: `flags probe` of every non-TPU
# catalog flag against the machine's jaxlib in one call (the search by halves), and a sweep long
# enough for confirmation re-runs (14 trials of a 4-layer transformer, so each trial is short).
#
#   bash tests/gpu/probe_confirm.sh BIN_DIR DEB_DIR OUT_DIR
#
# BIN_DIR, DEB_DIR as for run.sh. Writes env.txt, probe.txt (stderr: the probe's progress), the
# sweep's run/show/export/json, its trials' logs and the database under OUT_DIR.
set -u
out=$3
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/gpu/lib.sh
source "$repo/tests/gpu/lib.sh"
gpu_setup /tmp/ftgpu2 "$1" "$2"

step environment
{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__); print(jax.devices())'
  flagtune --version
  nproc
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

step "flags probe of every non-TPU catalog flag, one call (at most 200 s)"
timeout -s TERM 200 flagtune flags probe --command "python3 -c 'import jax; jax.devices()'" \
  --catalog --timeout 60 >"$out/probe.txt" 2>"$out/probe_progress.txt"
echo "rc=$?" >>"$out/probe.txt"
grep -v accepted "$out/probe.txt" | cut -c1-200 | head -60

cp "$repo/experiments/jax_transformer.py" "$work/"
cat >"$work/confirm.lua" <<'EOF'
return experiment {
  name = "jax-transformer-confirm",
  model = "jax-transformer-4x1024",
  hardware = "auto",
  command = { "python3", "jax_transformer.py", "--steps", "{steps}", "--batch", "16",
              "--seq", "1024", "--layers", "4" },
  workdir = ".",
  env = { PYTHONUNBUFFERED = "1" },
  metric = { json = "step_time_ms", skip = 3, reduce = "median" },
  presets = xla.presets.codegen{},
  flags = { xla_gpu_enable_triton_gemm = auto },
  vars = { XLA_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = tpe { startup = 6 },
  budget = { trials = 14, steps = 20 },
  gpus_per_trial = 1,
  timeout = "3m",
}
EOF
cd "$work" || exit 1
flagtune check confirm.lua >"$out/check.txt" 2>&1
cat "$out/check.txt"
step "sweep with confirmation (14 trials, at most 280 s)"
timeout -s INT 280 flagtune run confirm.lua --name confirm >"$out/run.txt" 2>&1
echo "rc=$?" >>"$out/run.txt"
tail -25 "$out/run.txt"
flagtune show confirm >"$out/show.txt" 2>&1
cat "$out/show.txt"
flagtune show confirm --json >"$out/show.json" 2>&1
flagtune export confirm >"$out/export.sh" 2>&1
flagtune query "SELECT number, role, status, round(value,3), round(duration_s,1), rerun_of, label FROM trials ORDER BY id" \
  >"$out/trials.txt" 2>&1
cat "$out/trials.txt"
step pack
cp -r "$work/flagtune-logs" "$out/logs" 2>/dev/null
cp "$work/gpu.db" "$out/" 2>/dev/null
step finished
