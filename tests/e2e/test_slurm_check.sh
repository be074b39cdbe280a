#!/usr/bin/env bash
# `check` and `run` of a Slurm experiment before anything is asked of Slurm: an unknown
# partition is a path:line error with exit 2 (sinfo -h -p NAME lists nothing); a sinfo that
# cannot reach the controller is a warning; srun missing from $PATH is an error for `run`
# (nothing written) and a warning for `check`. Fake Slurm commands (tests/slurm/fake/).
# Usage: test_slurm_check.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
export FAKE_DIR="$work/fake"
mkdir -p "$FAKE_DIR"
unset SLURM_JOB_ID
fakes="$src/tests/slurm/fake"
mk() {
  cat > "$1" <<LUA
return experiment {
  name = "chk", model = "m", hardware = "h",
  command = { "$sim", "--steps", "2", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  confirm = false,
  executor = slurm { partition = "$2" },
}
LUA
}
mk gpu.lua gpu
PATH="$fakes:$PATH" "$ft" check gpu.lua > /dev/null 2> gpu.err
check_eq "a known partition: check exits 0" "$?" 0
mk typo.lua gpux
PATH="$fakes:$PATH" "$ft" check typo.lua > /dev/null 2> typo.err
check_eq "an unknown partition: check exits 2" "$?" 2
check_eq "path:line and the partitions there are" "$(cat typo.err)" \
  "typo.lua:7: executor.partition 'gpux' does not exist (sinfo -h -p gpux lists nothing); partitions: gpu* cpu"
PATH="$fakes:$PATH" "$ft" run --db typo.db typo.lua > /dev/null 2> typo-run.err
check_eq "an unknown partition: run exits 2" "$?" 2
check "run wrote no database" [ ! -e typo.db ]
check "run asked nothing of salloc" bash -c "! grep -q salloc '$FAKE_DIR/log'"
FAKE_SINFO_FAIL=1 PATH="$fakes:$PATH" "$ft" check typo.lua > /dev/null 2> down.err
check_eq "sinfo without a controller: check exits 0" "$?" 0
has down.err "typo.lua:7: warning: cannot check executor.partition 'gpux': sinfo failed (exit 1"
# No Slurm commands on PATH at all.
mkdir -p empty
PATH="$work/empty" "$ft" check gpu.lua > /dev/null 2> nosrun.err
check_eq "no srun: check exits 0" "$?" 0
has nosrun.err "gpu.lua:7: warning: executor is slurm, but srun is not a program on \$PATH"
PATH="$work/empty" "$ft" run --db nosrun.db gpu.lua > /dev/null 2> nosrun-run.err
check_eq "no srun: run exits 2" "$?" 2
has nosrun-run.err "gpu.lua:7: executor is slurm, but srun is not a program on \$PATH"
check "run wrote no database" [ ! -e nosrun.db ]
finish
