#!/usr/bin/env bash
# The Slurm executor against a real, throw-away Slurm (tests/slurm/local.sh: one node, 4 fake
# GPUs, no accounting). Covers:
#  a. 4 trials at once as steps of one allocation, each on its own fake GPU, XLA_FLAGS and the
#     variables reaching the step, the job/step/node stored with each trial;
#  b. a trial past its timeout: flagtune's own timer cancels the step;
#  c. a cancelled sweep (SIGINT): exit 130, trials interrupted, no step left, allocation freed;
#  d. the orchestrator SIGKILLed while steps run, then `resume`: the allocation is found again
#     and reused, what was left is cancelled, the budget is met;
#  e. the node drained mid-sweep: running steps finish and new steps still start inside the
#     allocation (a drain stops new jobs, not steps), the sweep ends done;
#  f. a missing binary: srun exits 2 with slurmstepd's execve() error, recorded as a crash
#     saying "command not found";
#  g. the node failing (scontrol state=down) while steps start: the allocation dies, the trials
#     that printed nothing yet are run again in a new allocation and end ok;
#  h. mode = "job": one job per trial, no allocation held.
# Slurm facts relied on (SchedMD/slurm at commit 284c3b95f0; seen the same with Debian's 22.05):
#  - srun's exit status is the task's, 128 + signal for a task a signal ended (137 after
#    scancel J.S's SIGKILL, 139 SIGSEGV, 143 SIGTERM): src/srun/srun_job.c:1591-1594;
#  - srun on SIGTERM says "forcing job termination" and SIGKILLs the step, so the supervisor's
#    TERM of a dead orchestrator's srun ends the step too: src/srun/signals.c:162-168;
#  - a step whose execve() fails: slurmstepd logs "execve(): %s: %m" and the task exits with
#    errno (2 for ENOENT): src/slurmd/slurmstepd/task.c:541-542;
#  - slurmstepd's "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT / PREEMPTION / NODE FAILURE /
#    JOB REQUEUE ***": src/slurmd/slurmstepd/req.c:1122-1135; srun's "Node failure on %s":
#    src/api/step_launch.c:1245 (srun exits 0 then: only the text tells);
#  - srun -v prints "launching %ps on host %s, %u tasks: %s" (StepId=J.S): the step's id,
#    src/api/step_launch.c:1716; salloc prints "Granted job allocation %u":
#    src/salloc/salloc.c:411,431;
#  - --exact gives a step only what it asks for: src/common/slurm_opt.c:1451; the gres plugin
#    sets each step's CUDA_VISIBLE_DEVICES: src/plugins/gres/common/gres_common.c:305;
#  - SLURM_JOB_ID, SLURM_STEP_ID (src/common/env.c:647,723) and SLURMD_NODENAME
#    (src/slurmd/slurmstepd/mgr.c:2756) in each task's environment.
# Skipped (exit 77, CTest's SKIP_RETURN_CODE) when Slurm cannot start here: not root, the
# packages missing (tests/deps.sh installs them), or a daemon that fails.
source "$(dirname "$0")/lib.sh"
# The multi-node example checks anywhere; running it needs a real cluster.
"$ft" check "$src/experiments/slurm_multinode.lua" > example.out 2>&1
check "experiments/slurm_multinode.lua checks" grep -q ": ok: " example.out
[ "$(id -u)" = 0 ] || { echo "SKIP Slurm tests: not root (slurmd runs steps as root here)"; exit 77; }
sdir=$(mktemp -d /tmp/flagtune-slurm.XXXXXX)
chmod 755 "$sdir"
local_sh="$src/tests/slurm/local.sh"
slurm_cleanup() {
  bash "$local_sh" stop "$sdir" 2>/dev/null
  rm -rf "$sdir"
  lib_cleanup
}
trap slurm_cleanup EXIT
t0=$(date +%s.%N)
if ! bash "$local_sh" start "$sdir" 2> slurm-start.err; then
  echo "SKIP Slurm tests: Slurm cannot start here: $(tail -1 slurm-start.err)"
  exit 77
fi
source "$sdir/env"
echo "slurm started in $(echo "$(date +%s.%N) - $t0" | bc) s"

# The trial: where it runs and what it got, then STEPS step times DT apart. FT_MODE=hang
# sleeps without printing; FT_MODE=late prints nothing for 2 s first.
out="$work/out"
mkdir -p "$out"
cat > trial.sh <<'SH'
#!/bin/sh
[ "$FT_MODE" = late ] && sleep 2
echo "where cvd=${CUDA_VISIBLE_DEVICES-unset} job=$SLURM_JOB_ID step=$SLURM_STEP_ID node=$SLURMD_NODENAME"
printf '%s\n' "$XLA_FLAGS" > "$OUT/xla-$FLAGTUNE_TRIAL"
printf '%s\n' "$A" > "$OUT/var-$FLAGTUNE_TRIAL"
echo "${CUDA_VISIBLE_DEVICES-unset} $(date +%s.%N)" > "$OUT/cvd-$FLAGTUNE_TRIAL"
[ "$FT_MODE" = hang ] && exec sleep 60
i=0
while [ $i -lt "$STEPS" ]; do
  sleep "$DT"
  echo "{\"step\": $i, \"step_time_ms\": 10$i}"
  i=$((i + 1))
done
date +%s.%N >> "$OUT/cvd-$FLAGTUNE_TRIAL"
SH
chmod +x trial.sh

write_exp() { # file name trials parallel steps dt mode [extra-lines [executor]]
  local extra=${8:-} executor='slurm { time = "10" }'
  [ $# -ge 9 ] && executor=$9
  cat > "$1" <<LUA
return experiment {
  name = "$2", model = "m", hardware = "h",
  command = { "$work/trial.sh" },
  env = { OUT = "$out", STEPS = "$5", DT = "$6", FT_MODE = "$7", REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  vars = { A = choice { "a1", "a2", "a3", "a4", "a5", "a6" } },
  strategy = grid {}, budget = { trials = $3 }, parallel = $4, seed = 1, grace = 1,
  gpus_per_trial = 1, confirm = false, prune = false,
  executor = $executor,
  $extra
}
LUA
}
steps_left() { squeue -h -s -o %i 2>/dev/null | grep -v '\.extern' | grep -c . ; }
jobs_left() { squeue -h -o %i 2>/dev/null | grep -c . ; }
# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s.
wait_for() {
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 10; i++)); do "$@" && return 0; sleep 0.1; done
  return 1
}
has_steps() { [ "$(steps_left)" -ge "$1" ]; }

# ---- a. 4 trials at once on 4 fake GPUs
export FLAGTUNE_DB="$work/a.db"
write_exp a.lua a 4 4 5 0.2 run
"$ft" run a.lua > a.out 2> a.err
check_eq "a: sweep exit 0" "$?" 0
check_eq "a: 4 trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 4
check_eq "a: one allocation for all trials" \
  "$(val "SELECT count(DISTINCT slurm_job) || ' ' || count(slurm_job) FROM trials")" "1 4"
check_eq "a: 4 distinct steps on localnode" \
  "$(val "SELECT count(DISTINCT slurm_step) || ' ' || group_concat(DISTINCT node) FROM trials")" \
  "4 localnode"
check_eq "a: each step saw its own GPU (CUDA_VISIBLE_DEVICES from Slurm's gres)" \
  "$(for f in "$out"/cvd-*; do head -1 "$f" | cut -d' ' -f1; done | sort | tr '\n' ' ')" "0 1 2 3 "
# The four ran at once: the last start comes before the first end.
starts=$(for f in "$out"/cvd-*; do head -1 "$f" | cut -d' ' -f2; done | sort -n | tail -1)
ends=$(for f in "$out"/cvd-*; do tail -1 "$f"; done | sort -n | head -1)
check "a: the 4 steps overlapped (last start $starts < first end $ends)" \
  [ "$(echo "$starts < $ends" | bc)" = 1 ]
xla_ok=1
for n in 0 1 2 3; do
  [ "$(cat "$out/xla-$n")" = "$(val "SELECT coalesce(xla_flags,'') FROM trials WHERE number=$n")" ] || xla_ok=0
  [ "$(cat "$out/var-$n")" = "$(val "SELECT coalesce(json_extract(env,'\$.A'),'') FROM trials WHERE number=$n")" ] || xla_ok=0
done
check "a: XLA_FLAGS and the searched variable reached every step" [ $xla_ok = 1 ]
check "a: srun's progress lines kept out of the error excerpt" \
  [ "$(val "SELECT count(*) FROM trials WHERE error LIKE '%launching StepId%'")" = 0 ]
check "a: the step's output streamed into the log" \
  grep -q '"step_time_ms"' "$(val "SELECT log_path FROM trials WHERE number=0")"
check "a: allocation released at the end" wait_for 5 [ "$(jobs_left)" = 0 ]

# ---- b. a trial past its timeout: flagtune's timer, then scancel J.S
export FLAGTUNE_DB="$work/b.db"
rm -f "$out"/*
write_exp b.lua b 2 2 5 0.2 hang 'timeout = "2s",'
tb=$(date +%s)
"$ft" -q run b.lua --keep-going > /dev/null 2> b.err # the baseline times out too
took=$(($(date +%s) - tb))
check_eq "b: both trials timeout, as Slurm steps" \
  "$(val "SELECT group_concat(status) || ' ' || count(slurm_step) FROM trials")" "timeout,timeout 2"
check "b: ended within 12 s of a 2 s timeout (${took} s)" [ $took -le 12 ]
check "b: no step left running" wait_for 5 [ "$(steps_left)" = 0 ]
check "b: allocation released" wait_for 5 [ "$(jobs_left)" = 0 ]

# ---- c. a cancelled sweep
export FLAGTUNE_DB="$work/c.db"
write_exp c.lua c 4 2 5 0.2 hang
"$ft" -q run c.lua > /dev/null 2> c.err &
pid=$!
wait_for 15 has_steps 2 || fail "c: the steps never started"
kill -INT $pid
wait $pid
check_eq "c: SIGINT: exit 130" "$?" 130
check_eq "c: running trials recorded interrupted" \
  "$(val "SELECT count(*) FROM trials WHERE status='interrupted'")" 2
check "c: no step left running" wait_for 5 [ "$(steps_left)" = 0 ]
check "c: allocation released" wait_for 5 [ "$(jobs_left)" = 0 ]

# ---- d. the orchestrator killed while steps run, then resume
export FLAGTUNE_DB="$work/d.db"
write_exp d.lua d 4 2 10 0.3 run
"$ft" -q run d.lua > /dev/null 2> d.err &
pid=$!
wait_for 15 has_steps 2 || fail "d: the steps never started"
job=$(val "SELECT slurm_job FROM trials WHERE slurm_job IS NOT NULL LIMIT 1")
kill -9 $pid
wait $pid 2>/dev/null
check "d: the allocation outlives the killed orchestrator" \
  [ "$(squeue -h -j "$job" -o %T 2>/dev/null)" = RUNNING ]
"$ft" resume 1 > d2.out 2> d2.err
check_eq "d: resume exit 0" "$?" 0
has d2.err "reusing allocation $job"
check_eq "d: budget met (4 counted trials)" \
  "$(val "SELECT count(*) FROM trials WHERE status NOT IN ('lost','interrupted','running')")" 4
check "d: the killed trials recorded lost" \
  [ "$(val "SELECT count(*) FROM trials WHERE status='lost'")" -ge 1 ]
check_eq "d: re-runs ran in the same allocation" \
  "$(val "SELECT count(DISTINCT slurm_job) FROM trials WHERE slurm_job IS NOT NULL")" 1
check "d: no step left running" wait_for 5 [ "$(steps_left)" = 0 ]
check "d: allocation released" wait_for 5 [ "$(jobs_left)" = 0 ]

# ---- e. the node drained mid-sweep
export FLAGTUNE_DB="$work/e.db"
write_exp e.lua e 6 2 4 0.3 run
"$ft" -q run e.lua > /dev/null 2> e.err &
pid=$!
wait_for 15 has_steps 2 || fail "e: the steps never started"
scontrol update nodename=localnode state=drain reason=flagtune-test
drained=$(sinfo -h -n localnode -o %T)
wait $pid
code=$?
scontrol update nodename=localnode state=resume
check "e: node draining while the sweep ran ($drained)" [ "${drained#drain}" != "$drained" ]
check_eq "e: sweep exit 0" "$code" 0
check_eq "e: all 6 trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 6
check_eq "e: sweep done" "$(val "SELECT status FROM sweeps")" done

# ---- f. a missing binary
export FLAGTUNE_DB="$work/f.db"
write_exp f.lua f 2 2 1 0.1 run
sed -i "s|\"$work/trial.sh\"|\"$work/no-such-program\"|" f.lua
# --keep-going: both trials run to their own end (fail fast would stop the second one when the
# baseline fails first, while srun may still be starting it: then its record is the stop's).
"$ft" -q run f.lua --keep-going > /dev/null 2> f.err
check_eq "f: both trials crash" "$(val "SELECT group_concat(status) FROM trials")" "crash,crash"
check "f: excerpt says command not found on the node" \
  [ "$(val "SELECT count(*) FROM trials WHERE error LIKE 'command not found: %no-such-program (execve() on node localnode)%'")" = 2 ]

# ---- g. the node fails while the steps start
export FLAGTUNE_DB="$work/g.db"
write_exp g.lua g 4 2 3 0.1 late
"$ft" run g.lua > /dev/null 2> g.err &
pid=$!
wait_for 15 has_steps 2 || fail "g: the steps never started"
gjob=$(squeue -h -o %i | head -1)
scontrol update nodename=localnode state=down reason=flagtune-test
sleep 1
scontrol update nodename=localnode state=resume 2>/dev/null
wait $pid
check_eq "g: sweep exit 0" "$?" 0
has g.err "lost before it started"
check_eq "g: all 4 trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 4
check "g: the re-runs ran in a new allocation" \
  [ "$(val "SELECT count(*) FROM trials WHERE slurm_job <> $gjob")" -ge 2 ]
check "g: node back to idle" wait_for 10 [ "$(sinfo -h -n localnode -o %T)" = idle ]

# ---- h. one job per trial
export FLAGTUNE_DB="$work/h.db"
write_exp h.lua h 3 2 3 0.1 run "" 'slurm { mode = "job", time = 5 }'
"$ft" -q run h.lua > /dev/null 2> h.err
check_eq "h: sweep exit 0" "$?" 0
check_eq "h: 3 trials ok, each its own job's step 0" \
  "$(val "SELECT count(*) || ' ' || count(DISTINCT slurm_job) || ' ' || max(slurm_step) FROM trials WHERE status='ok'")" \
  "3 3 0"
check "h: no job left" wait_for 5 [ "$(jobs_left)" = 0 ]

t1=$(date +%s.%N)
bash "$local_sh" stop "$sdir"
echo "slurm stopped in $(echo "$(date +%s.%N) - $t1" | bc) s"
finish
