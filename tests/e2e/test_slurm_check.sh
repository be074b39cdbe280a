#!/usr/bin/env bash
# `check` and `run` of a Slurm experiment before anything is asked of Slurm: an unknown
# partition is a path:line error with exit 2 (sinfo -h -p NAME lists nothing); so are more GPUs
# or nodes than the partition has and a time past its limit (sinfo -h -p NAME -o '%G %l %D'),
# and a time Slurm cannot read; a sinfo that cannot reach the controller is a warning; srun
# missing from $PATH is an error for `run` (nothing written) and a warning for `check`. Fake
# Slurm commands (tests/slurm/fake/); tests/e2e/test_slurm_check_real.sh asks a real Slurm.
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
  executor = slurm { partition = "$2"${3:+, $3} },
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
# What the partition has (the fake: 2 nodes of 4 GPUs, a one-day limit).
fits() { # fits NAME EXECUTOR-FIELDS [WANT-EXIT]: check's exit status
  mk "$1.lua" gpu "$2"
  PATH="$fakes:$PATH" "$ft" check "$1.lua" > /dev/null 2> "$1.err"
  check_eq "$2: check exits ${3:-0}" "$?" "${3:-0}"
}
fits fit 'gpus_per_trial = 4, nodes = 2, time = "1-00:00:00"'
fits gpus 'gpus_per_trial = 8' 2
check_eq "more GPUs than a node has" "$(cat gpus.err)" \
  "gpus.lua:7: gpus_per_trial = 8, but a node of partition 'gpu' has at most 4 GPUs (sinfo -h -p gpu -o %G); ask for 4 or fewer, or another partition"
fits nodes 'nodes = 3' 2
check_eq "more nodes than the partition has" "$(cat nodes.err)" \
  "nodes.lua:7: executor.nodes = 3, but partition 'gpu' has 2 nodes (sinfo -h -p gpu -o %D); ask for 2 or fewer"
fits long 'time = "1-00:00:01"' 2
check_eq "a time past the limit" "$(cat long.err)" \
  "long.lua:7: executor.time '1-00:00:01' (1-00:00:01) exceeds partition 'gpu''s time limit 1-00:00:00 (sinfo -h -p gpu -o %l); ask for 1-00:00:00 or less"
fits minutes 'time = 1441' 2
has minutes.err "executor.time '1441' (1-00:01:00) exceeds partition 'gpu''s time limit 1-00:00:00"
fits d_hh 'time = "0-24"'
fits mm_ss 'time = "1440:00"'
fits unlimited 'time = "UNLIMITED"' 2
has unlimited.err "unlimited.lua:7: executor.time 'UNLIMITED' (no limit) exceeds partition 'gpu''s time limit 1-00:00:00"
fits badtime 'time = "10h"' 2
check_eq "a time Slurm cannot read" "$(cat badtime.err)" \
  "badtime.lua:7: executor.time '10h' is not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED)"
# The top-level gpus_per_trial is what each trial asks of Slurm when executor has none.
sed 's/confirm = false,/confirm = false, gpus_per_trial = 6,/' gpu.lua > top.lua
PATH="$fakes:$PATH" "$ft" check top.lua > /dev/null 2> top.err
check_eq "the top-level gpus_per_trial: check exits 2" "$?" 2
has top.err "top.lua:7: gpus_per_trial = 6, but a node of partition 'gpu' has at most 4 GPUs"
sed 's/partition = "gpu"/partition = "gpu", gpus_per_trial = 0/' top.lua > none.lua
PATH="$fakes:$PATH" "$ft" check none.lua > /dev/null 2> none.err
check_eq "executor.gpus_per_trial = 0 asks Slurm for none: check exits 0" "$?" 0
# Nodes of two kinds: 1 of 8 GPUs, 3 of 2; no limit.
export FAKE_SINFO_NODES='gpu:a100:8(S:0-1) infinite 1;gpu:v100:2,nvme:1 infinite 3'
fits mixed 'gpus_per_trial = 8, time = "30-00:00:00"'
fits mixed2 'gpus_per_trial = 8, nodes = 2' 2
check_eq "too few nodes with the GPUs" "$(cat mixed2.err)" \
  "mixed2.lua:7: executor.nodes = 2, but partition 'gpu' has 1 node with 8 GPUs (of 4 nodes); ask for 1 or fewer"
fits mixed4 'gpus_per_trial = 2, nodes = 4'
export FAKE_SINFO_NODES='(null) 30:00 4'
fits cpuonly 'gpus_per_trial = 1' 2
has cpuonly.err "has at most 0 GPUs"
fits cpuonly30 'time = 30'
fits cpuonly31 'time = "30:01"' 2
unset FAKE_SINFO_NODES
PATH="$fakes:$PATH" "$ft" run --db gpus.db gpus.lua > /dev/null 2> gpus-run.err
check_eq "more GPUs than a node has: run exits 2" "$?" 2
check "run wrote no database" [ ! -e gpus.db ]
FAKE_SINFO_FAIL=1 PATH="$fakes:$PATH" "$ft" check gpus.lua > /dev/null 2> gpus-down.err
check_eq "sinfo without a controller: the GPUs are not checked" "$?" 0
has gpus-down.err "warning: cannot check executor.partition 'gpu': sinfo failed"
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
