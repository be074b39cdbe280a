#!/usr/bin/env bash
# A trial the Slurm executor loses after its program started (a node failure, a preemption:
# slurmstepd's "CANCELLED ... DUE TO NODE FAILURE") is recorded `lost`, not `crash`, and runs
# again without counting against the budget; a cluster that loses everything ends the sweep
# after 8 re-queues per parallel slot instead of looping, while one allocation event losing
# every running trial at parallel 8 does not end it; and `hardware = "auto"` keys the compute node (nvidia-smi
# in a step), not the node flagtune runs on. Uses the fake Slurm commands of tests/slurm/fake/
# and a fake nvidia-smi that sees GPUs only inside a step (the real-Slurm test is
# test_slurm.sh), so it runs everywhere.
# Usage: test_slurm_lost.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
export FAKE_DIR="$work/fake" PATH="$src/tests/slurm/fake:$src/tests/slurm/fake-gpu:$PATH"
mkdir -p "$FAKE_DIR"
unset SLURM_JOB_ID
cat > lost.lua <<LUA
return experiment {
  name = "lost", model = "m", hardware = "h",
  command = { "$sim", "--steps", "4", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  strategy = grid {}, budget = { trials = 3 }, confirm = false, seed = 1,
  executor = "slurm",
}
LUA
# Every step fails after its program ran: 8 re-queues, then the losses count.
FAKE_SRUN_MODE=nodefail-after timeout 120 "$ft" -q run lost.lua > out.txt 2> err.txt
code=$?
check "the sweep ends (exit $code, not the 120 s timeout)" [ "$code" != 124 ]
check_eq "no trial reads as a crash" "$(val "SELECT count(*) FROM trials WHERE status = 'crash'")" 0
check_eq "8 re-queued + 3 counted, all lost" "$(val "SELECT count(*) FROM trials WHERE status = 'lost'")" 11
has err.txt "8 trials were lost by the executor in this run"
check_eq "the sweep ends resumable" "$(val "SELECT status || ' ' || error FROM sweeps")" \
  "interrupted trials lost by the executor"
# The cluster healed: resume re-runs the lost configurations to the budget.
"$ft" -q resume 1 > /dev/null 2> resume.err
check_eq "resume exits 0" "$?" 0
check_eq "after resume: baseline and both configurations ok" \
  "$(val "SELECT count(DISTINCT config) FROM trials WHERE status = 'ok'")" 3

# parallel = 8: one event loses the first 10 steps (more than 8, all 8 running trials and
# more); the re-queue budget is per slot, so the sweep still spends its budget.
cat > par.lua <<LUA
return experiment {
  name = "par", model = "m", hardware = "h",
  command = { "$sim", "--steps", "2", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11" } },
  strategy = grid {}, budget = { trials = 12 }, confirm = false, seed = 1,
  executor = "slurm", parallel = 8,
}
LUA
rm -f "$FAKE_DIR/steps"
FAKE_SRUN_LOSE=10 timeout 120 "$ft" -q run --db par.db par.lua > par.out 2> par.err
check_eq "parallel 8, 10 steps lost: run exits 0" "$?" 0
pval() { "$ft" query --db par.db "$1" | tail -n +2; }
check_eq "the sweep is done" "$(pval "SELECT status FROM sweeps")" done
check_eq "every configuration ok" "$(pval "SELECT count(DISTINCT config) FROM trials WHERE status = 'ok'")" 12
check "at least 8 lost and re-queued" [ "$(pval "SELECT count(*) FROM trials WHERE status = 'lost'")" -ge 8 ]
rm -f "$FAKE_DIR/steps"

# hardware = "auto": the key of the compute node's GPUs (8 H200 in the fake step), recorded.
sed -e 's/hardware = "h",/hardware = "auto",/' -e 's/name = "lost"/name = "hw"/' lost.lua > hw.lua
"$ft" run --db hw.db hw.lua > /dev/null 2> hw.err
check_eq "hw run exits 0" "$?" 0
check "the compute node's key, not host:" \
  grep -q '^8xNVIDIA-H200@' <("$ft" query --db hw.db "SELECT hardware FROM sweeps" | tail -n 1)
has hw.err "flagtune: hardware of the compute node: 8xNVIDIA-H200@"

# The GPUs of a Slurm step come from its gres: the node flagtune runs on may list fewer.
sed -e 's/executor = "slurm",/executor = "slurm", gpus_per_trial = 8, parallel = 2,/' lost.lua > gpus.lua
CUDA_VISIBLE_DEVICES=0 "$ft" check gpus.lua > /dev/null 2> gpus.err
check_eq "8 GPUs per trial under Slurm from a 1-GPU login node: check exits 0" "$?" 0
finish
