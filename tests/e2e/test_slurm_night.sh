#!/usr/bin/env bash
# A night on a cluster, against a real, throw-away Slurm (tests/slurm/local.sh): flagtune as the
# batch job itself (`sbatch`), as docs/SLURM.md's recipe runs it. Covers:
#  a. the batch job requeued while steps run (`scontrol requeue`: same job id, step ids from 0
#     again, SLURM_RESTART_COUNT=1): the script's `flagtune run` continues the sweep ("continuing
#     sweep 1"), the new run's steps are named after the restart count, one sweep, every
#     configuration's trial ends ok;
#  b. SIGUSR1 to the batch shell (`scancel --signal=USR1 --batch`, what --signal=B:USR1@N
#     sends), forwarded by the recipe's trap: no trial starts after it, the running ones finish
#     ok, flagtune exits 130 with the sweep interrupted; `flagtune run` again (run or resume)
#     finishes it, and `run --new` starts a second sweep;
#  c. a batch job with a 1-minute time limit and slurm { chain = true }: the allocation's time
#     left (squeue %L) is a deadline, no trial starts that its measured durations say cannot
#     finish 30 s before it, the sweep drains, submits its continuation (sbatch of the same
#     script, --dependency=afterany), which continues the sweep to its budget.
# Slurm facts relied on (SchedMD/slurm, Debian's 22.05): a requeued job's batch script gets
# SLURM_RESTART_COUNT (src/common/env.c, "SLURM_RESTART_COUNT"); a requeued job waits for its
# BeginTime (scontrol update StartTime=now lifts it); squeue -O RestartCnt and -o %L.
# Skipped (exit 77) when Slurm cannot start here: not root, the packages missing.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP Slurm tests: not root (slurmd runs steps as root here)"; exit 77; }
sdir=$(mktemp -d /tmp/flagtune-slurm.XXXXXX)
chmod 755 "$sdir" "$work"
local_sh="$src/tests/slurm/local.sh"
slurm_cleanup() {
  bash "$local_sh" stop "$sdir" 2>/dev/null
  rm -rf "$sdir"
  lib_cleanup
}
trap slurm_cleanup EXIT
if ! bash "$local_sh" start "$sdir" 2> slurm-start.err; then
  echo "SKIP Slurm tests: Slurm cannot start here: $(tail -1 slurm-start.err)"
  exit 77
fi
source "$sdir/env"
out="$work/out"
mkdir -p "$out"
cat > trial.sh <<'SH'
#!/bin/sh
echo "$SLURM_JOB_NAME" > "$OUT/name-$FLAGTUNE_TRIAL"
i=0
while [ $i -lt "$STEPS" ]; do
  sleep "$DT"
  echo "{\"step\": $i, \"step_time_ms\": 10$i}"
  i=$((i + 1))
done
SH
chmod +x trial.sh
write_exp() { # file name trials steps dt [executor options]
  cat > "$1" <<LUA
return experiment {
  name = "$2", model = "m", hardware = "h",
  command = { "$work/trial.sh" },
  env = { OUT = "$out", STEPS = "$4", DT = "$5", REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  vars = { A = choice { "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12",
                        "a13", "a14", "a15", "a16" } },
  strategy = grid {}, budget = { trials = $3 }, parallel = 2, seed = 1, grace = 1,
  gpus_per_trial = 1, confirm = false, prune = false,
  executor = slurm { ${6:-} },
}
LUA
}
# The recipe's batch script (docs/SLURM.md): SIGUSR1 forwarded to flagtune, its exit status said.
write_job() { # file experiment db [extra sbatch lines]
  cat > "$1" <<SH
#!/bin/bash
#SBATCH --ntasks=2 --gres=gpu:2
${4:-}
export REL_MARK=$$
trap 'kill -USR1 "\$pid" 2>/dev/null' USR1
"$ft" run "$2" --db "$3" & pid=\$!
while :; do wait "\$pid"; rc=\$?; kill -0 "\$pid" 2>/dev/null || break; done
echo "flagtune exit \$rc"
SH
  chmod +x "$1"
}
jobs_left() { squeue -h -o %i 2>/dev/null | grep -c . ; }
wait_for() { # SECONDS COMMAND...: polls COMMAND every 0.2 s
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 5; i++)); do "$@" && return 0; sleep 0.2; done
  return 1
}
ok_trials() { # (never creates the database: flagtune's job does)
  [ -s "$1" ] && sql "$1" "SELECT count(*) FROM trials WHERE status = 'ok'" 2>/dev/null || echo 0
}
at_least() { [ "$(ok_trials "$1")" -ge "$2" ]; }
state_of() { squeue -h -j "$1" -o %T 2>/dev/null; }
no_jobs() { [ "$(jobs_left)" = 0 ]; } # (a function: wait_for asks it again each time)
pending() { [ "$(state_of "$1")" = PENDING ]; }

# ---- a. the batch job requeued mid-sweep: run continues, steps named after the restart count
write_exp a.lua a 8 6 0.5
write_job a.sh "$work/a.lua" "$work/a.db" "#SBATCH --requeue --output=$work/a-%j-%r.out"
ja=$(sbatch --parsable --output="$work/a.out" --open-mode=append a.sh)
check "a: 2 trials ok before the requeue" wait_for 60 at_least "$work/a.db" 2
scontrol requeue "$ja"
check "a: the job is pending again" wait_for 20 pending "$ja"
scontrol update jobid="$ja" StartTime=now
check "a: the requeued job ran to its end" wait_for 90 no_jobs
check "a: the second run continued sweep 1" grep -q 'continuing sweep 1 "a" (interrupted\|continuing sweep 1 "a" (running' a.out
check_eq "a: one sweep, done" "$(sql a.db "SELECT count(*) || ' ' || max(status) FROM sweeps")" "1 done"
check_eq "a: 8 trials ok (the budget), none a configuration's failure" \
  "$(sql a.db "SELECT sum(status = 'ok') || ' ' || sum(status NOT IN ('ok', 'interrupted', 'lost')) FROM trials")" "8 0"
late=$(sql a.db "SELECT min(number) FROM trials WHERE started_at > (SELECT max(t.started_at) FROM trials t WHERE t.status IN ('interrupted', 'lost'))")
check "a: the second run's steps carry the restart count" grep -qx "flagtune-sweep-1-trial-$late-restart-1" "$out/name-$late"
check "a: the first run's steps did not" grep -qx "flagtune-sweep-1-trial-1" "$out/name-1"
check_eq "a: flagtune ended 0 in the second run" "$(grep 'flagtune exit' a.out | tail -1)" "flagtune exit 0"

# ---- b. SIGUSR1: drain, exit 130, then run continues it; run --new starts afresh
rm -f "$out"/*
write_exp b.lua b 12 6 0.5
write_job b.sh "$work/b.lua" "$work/b.db"
jb=$(sbatch --parsable --output="$work/b.out" b.sh)
check "b: 2 trials ok before the signal" wait_for 60 at_least "$work/b.db" 2
scancel --signal=USR1 --batch "$jb"
check "b: it said it was draining" wait_for 30 grep -q 'SIGUSR1: draining' b.out
# Every trial has its row from its start: none may be added once the drain was said.
n_sig=$(sql b.db "SELECT count(*) FROM trials")
check "b: the job ended" wait_for 60 no_jobs
check_eq "b: flagtune exit 130" "$(grep 'flagtune exit' b.out)" "flagtune exit 130"
check_eq "b: the sweep is interrupted" "$(sql b.db "SELECT status FROM sweeps")" interrupted
check_eq "b: the running trials finished ok, none interrupted" \
  "$(sql b.db "SELECT sum(status NOT IN ('ok')) FROM trials")" 0
check_eq "b: no trial started after the drain began" "$(sql b.db "SELECT count(*) FROM trials")" "$n_sig"
done_b=$(ok_trials "$work/b.db")
check "b: the sweep stopped short of its budget ($done_b < 12)" [ "$done_b" -lt 12 ]
jb2=$(sbatch --parsable --output="$work/b2.out" b.sh)
check "b: the job submitted again ended" wait_for 90 no_jobs
check "b: it continued sweep 1" grep -q 'continuing sweep 1 "b"' b2.out
check_eq "b: one sweep, done, 12 ok" \
  "$(sql b.db "SELECT (SELECT count(*) FROM sweeps) || ' ' || (SELECT status FROM sweeps) || ' ' || count(*) FROM trials WHERE status = 'ok'")" "1 done 12"
"$ft" run b.lua --db b.db --executor local --trials 2 --new > bnew.out 2>&1
check_eq "b: run --new starts sweep 2" "$(sql b.db "SELECT count(*) FROM sweeps")" 2
check "b: run --new says nothing of continuing" lacks -q continuing bnew.out

# ---- c. the allocation's time limit: drain before it, chain the continuation
rm -f "$out"/*
write_exp c.lua c 24 6 0.5 "chain = true"
write_job c.sh "$work/c.lua" "$work/c.db" "#SBATCH --time=1 --output=$work/c-%j.out"
jc=$(sbatch --parsable c.sh)
check "c: the first job ended and its continuation ran" wait_for 150 no_jobs
c1="$work/c-$jc.out"
check "c: the deadline was the allocation's" grep -q "allocation $jc ends in" "$c1"
check "c: drained before the time limit" grep -q "drained before the allocation's time limit" "$c1"
check "c: the continuation was submitted" grep -q "slurm.chain: submitted job" "$c1"
check_eq "c: the first job's flagtune exit 130" "$(grep 'flagtune exit' "$c1")" "flagtune exit 130"
jc2=$(sed -n 's/.*slurm.chain: submitted job \([0-9]*\).*/\1/p' "$c1")
check "c: the continuation continued sweep 1" grep -q 'continuing sweep 1 "c"' "$work/c-$jc2.out"
check_eq "c: one sweep, done, 24 ok, no timeout or crash" \
  "$(sql c.db "SELECT (SELECT status FROM sweeps) || ' ' || sum(status = 'ok') || ' ' || sum(status IN ('timeout', 'crash')) FROM trials")" "done 24 0"
finish
