#!/usr/bin/env bash
# Both memory fractions: jaxlib >= 0.4.32 raises ValueError when XLA_CLIENT_MEM_FRACTION and
# XLA_PYTHON_CLIENT_MEM_FRACTION are both set (jax-ml/jax jaxlib/xla_client.py:180-190), and
# the simulator dies with that text. A caller who exported the old name (as JAX-Toolbox's
# scripts do) runs a sweep that searches the new one: every trial must still run, because
# flagtune keeps the old name from the trials, and the run says so in a note.
# Usage: test_memfrac.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
# probe.sh prints the old name as the trial sees it, then runs the simulator.
cat > probe.sh <<'PROBE'
#!/bin/sh
echo "fraction=${XLA_PYTHON_CLIENT_MEM_FRACTION:-unset}"
exec "$@"
PROBE
chmod +x probe.sh
cat > mf.lua <<LUA
return experiment {
  name = "mf", model = "sim", hardware = "box",
  command = { "$work/probe.sh", "$sim", "--landscape", "single", "--steps", "{steps}",
              "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 1 },
  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 } },
  strategy = grid {},
  budget = { trials = 3, steps = 4 },
  seed = 1,
}
LUA
# The simulator refuses the pair as jaxlib does (the test would prove nothing otherwise).
XLA_CLIENT_MEM_FRACTION=0.8 XLA_PYTHON_CLIENT_MEM_FRACTION=0.9 "$sim" --steps 1 \
  --time-scale 0 > sim.out 2> sim.err
check_eq "the simulator dies on both fractions" "$?" 1
has sim.err "ValueError: XLA_CLIENT_MEM_FRACTION is specified together with XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated."

export XLA_PYTHON_CLIENT_MEM_FRACTION=0.9
"$ft" -q run mf.lua > out.txt 2> err.txt
check_eq "run: exit 0" "$?" 0
has err.txt "flagtune: note: XLA_PYTHON_CLIENT_MEM_FRACTION from your environment is not passed to trials: the experiment sets XLA_CLIENT_MEM_FRACTION"
check_eq "every trial ok, the baseline too" \
  "$(val "SELECT count(*) FROM trials WHERE status='ok'")" \
  "$(val "SELECT count(*) FROM trials")"
check_eq "three trials" "$(val "SELECT count(*) FROM trials")" 3
check "no log holds the ValueError" lacks -rq "ValueError" logs

# `check` prints the same note; a sweep that sets neither fraction passes the caller's on.
"$ft" check mf.lua > check.txt 2>&1
has check.txt "flagtune: note: XLA_PYTHON_CLIENT_MEM_FRACTION from your environment"
sed 's/XLA_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 }/NCCL_PROTO = choice { "SIMPLE" }/;s/"mf"/"keep"/' \
  mf.lua > keep.lua
"$ft" -q run keep.lua > keep.out 2> keep.err
check_eq "keep: exit 0" "$?" 0
check "keep: no note" lacks -q "note:" keep.err
log=$(val "SELECT log_path FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'keep' AND t.number = 1")
has "$log" "fraction=0.9"
log=$(val "SELECT log_path FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'mf' AND t.number = 1")
has "$log" "fraction=unset"
finish
