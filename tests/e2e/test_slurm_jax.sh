#!/usr/bin/env bash
# Multi-process trials under Slurm, with the pinned real jax: each step's
# jax.distributed.initialize() would find its coordinator on the step's first node at the
# JAX_COORDINATOR_PORT flagtune gave it, so two trials running at once (parallel 2,
# tasks_per_node 2) get different ports where JAX's own choice (from SLURM_JOB_ID alone) would
# be one. The fake srun (tests/slurm/fake/) runs each step locally; the step's other SLURM_*
# variables are what a real two-node step has.
# Usage: test_slurm_jax.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
need_jax
export FAKE_DIR="$work/fake" PATH="$src/tests/slurm/fake:$PATH"
mkdir -p "$FAKE_DIR"
unset SLURM_JOB_ID
cat > step.py <<'PY'
import os, sys, time
os.environ.update(SLURM_STEP_NODELIST="gpu[07-08]", SLURM_NTASKS="4", SLURM_PROCID="0",
                  SLURM_LOCALID="0")
from jax._src import clusters
addr = clusters.ClusterEnv.auto_detect_unset_distributed_params(None, None, None, None, None,
                                                               None)[0]
print("coordinator", addr, file=sys.stderr, flush=True)
time.sleep(1)  # both trials hold their ports at once
for _ in range(3):
    print('{"step_time_ms": 1.5}', flush=True)
PY
cat > jax.lua <<LUA
return experiment {
  name = "jaxport", model = "m", hardware = "h",
  command = { "$jaxpy", "$work/step.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1" } },
  strategy = grid {}, budget = { trials = 2 }, confirm = false, seed = 1,
  executor = slurm { tasks_per_node = 2 }, parallel = 2,
}
LUA
timeout 300 "$ft" -q run jax.lua > out.txt 2> err.txt
check_eq "run exits 0" "$?" 0
check_eq "both trials ok" "$(val "SELECT count(*) FROM trials WHERE status = 'ok'")" 2
ports=$(grep -rh "^coordinator " "$work/logs" | sed -n 's/^coordinator gpu07:\([0-9]*\)$/\1/p' | sort)
check_eq "two coordinators on the step's first node, at two ports next to JAX's 61482" \
  "$(echo $ports)" "61483 61484"
finish
