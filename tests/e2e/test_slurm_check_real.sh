#!/usr/bin/env bash
# `check` and `run` against a real, throw-away Slurm (tests/slurm/local.sh: one node, 4 fake
# GPUs, the partition's MaxTime 2 hours): what `sinfo -h -p debug -o '%G %l %D'` says of the
# partition refuses more GPUs than its node has, more nodes than it has and a time past its
# limit (path:line, exit 2, nothing written), and lets what fits through; the limit raised to
# INFINITE (scontrol update) lets any time through. A stopped controller only warns.
# Skipped (exit 77) when Slurm cannot start here: not root, the packages missing (tests/deps.sh
# installs them), or a daemon that fails.
source "$(dirname "$0")/lib.sh"
unset SLURM_JOB_ID
[ "$(id -u)" = 0 ] || skip_all "Slurm check tests: not root (slurmd runs steps as root here)"
sdir=$(mktemp -d /tmp/flagtune-slurm.XXXXXX)
chmod 755 "$sdir"
local_sh="$src/tests/slurm/local.sh"
slurm_cleanup() {
  bash "$local_sh" stop "$sdir" 2>/dev/null
  rm -rf "$sdir"
  lib_cleanup
}
trap slurm_cleanup EXIT
if ! SLURM_LOCAL_MAXTIME=2:00:00 bash "$local_sh" start "$sdir" 2> slurm-start.err; then
  skip_all "Slurm check tests: Slurm cannot start here: $(tail -1 slurm-start.err)"
fi
source "$sdir/env"
sinfo -h -p debug -o '%G %l %D' > sinfo.out
echo "sinfo -h -p debug -o '%G %l %D': $(cat sinfo.out)"
check_eq "the partition as sinfo tells it" "$(cat sinfo.out)" "gpu:4 2:00:00 1"
mk() { # mk NAME EXECUTOR-FIELDS
  cat > "$1.lua" <<LUA
return experiment {
  name = "chk", model = "m", hardware = "h",
  command = { "$sim", "--steps", "2", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  confirm = false,
  executor = slurm { partition = "debug", $2 },
}
LUA
}
fits() { # fits NAME EXECUTOR-FIELDS [WANT-EXIT]
  mk "$1" "$2"
  "$ft" check "$1.lua" > /dev/null 2> "$1.err"
  check_eq "$2: check exits ${3:-0}" "$?" "${3:-0}"
}
fits fit 'gpus_per_trial = 4, nodes = 1, time = "2:00:00"'
fits gpus 'gpus_per_trial = 5' 2
check_eq "more GPUs than the node has" "$(cat gpus.err)" \
  "gpus.lua:7: gpus_per_trial = 5, but a node of partition 'debug' has at most 4 GPUs (sinfo -h -p debug -o %G); ask for 4 or fewer, or another partition"
fits nodes 'nodes = 2' 2
check_eq "more nodes than the partition has" "$(cat nodes.err)" \
  "nodes.lua:7: executor.nodes = 2, but partition 'debug' has 1 node (sinfo -h -p debug -o %D); ask for 1 or fewer"
fits long 'time = "0-02:00:01"' 2
check_eq "a time past the limit" "$(cat long.err)" \
  "long.lua:7: executor.time '0-02:00:01' (02:00:01) exceeds partition 'debug''s time limit 02:00:00 (sinfo -h -p debug -o %l); ask for 02:00:00 or less"
fits minutes 'time = 121' 2
fits minutes120 'time = 120'
"$ft" run --db long.db long.lua > /dev/null 2> long-run.err
check_eq "a time past the limit: run exits 2" "$?" 2
check "run wrote no database" [ ! -e long.db ]
check "no job was asked for" [ -z "$(squeue -h -o %i)" ]
scontrol update PartitionName=debug MaxTime=INFINITE
check_eq "the limit raised: sinfo's %l" "$(sinfo -h -p debug -o %l)" "infinite"
fits forever 'time = "30-00:00:00"'
fits unlimited 'time = "infinite"'
# The controller gone: the partition cannot be asked about, a warning only.
ctld=$(cat "$sdir/slurmctld.pid")
kill "$ctld"
for _ in $(seq 50); do kill -0 "$ctld" 2> /dev/null || break; sleep 0.1; done
fits down 'gpus_per_trial = 5'
has down.err "down.lua:7: warning: cannot check executor.partition 'debug': sinfo failed"
finish
