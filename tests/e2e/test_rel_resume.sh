#!/usr/bin/env bash
# Reliability: `resume` runs a sweep to its budget (docs/RELIABILITY.md, "Resume to budget").
#  1. For each shipped strategy (random, grid, tpe, halving): a 200-trial sweep of a fast
#     command is killed (SIGKILL) at a random moment, then resumed: the resume exits 0, the
#     sweep ends `done` with exactly its budget of counted trials, and no finished trial
#     repeats a configuration (at the same step budget: halving's survivors run again with
#     more steps by design). random's space is larger than the kit enumerates, where a
#     strategy replayed from its seed's start drew only configurations already run and said
#     it was exhausted.
#  2. `resume --trials N` raises the budget, also of a done sweep.
#  3. A sweep cut by its time budget ends `interrupted` ("time budget"), and resumes (each
#     resume gets the time anew) until its trial budget is spent.
# Usage: test_rel_resume.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR   (env: REL_SEED)
source "$(dirname "$0")/lib.sh"
RANDOM=${REL_SEED:-$$}
budget=120

write_exp() { # name strategy space extra
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.0005" },
  env = { REL_MARK = "$$", REL_ITER = "$1" },
  metric = { json = "step_time_ms", skip = 1 },
  $3
  strategy = $2, budget = { trials = $budget, steps = 9 $4 }, parallel = 2, seed = 5,
}
LUA
}
# 202,124 configurations: more than the kit enumerates (200,000).
big='flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB"),
            xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("1MiB", "4GiB"),
            xla_gpu_all_reduce_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.50, 0.95, 0.01) },'
# 338 configurations: a grid that fits the budget with room to spare.
small='flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB"),
            xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("1MiB", "4GiB") },'

# counted DB SWEEP: finished trials (what the budget counts).
counted() {
  FLAGTUNE_DB=$1 val "SELECT count(*) FROM trials WHERE sweep_id=$2
    AND status NOT IN ('lost', 'interrupted', 'running')"
}
# dups DB SWEEP: finished trials that repeat a configuration at the same step budget.
dups() {
  FLAGTUNE_DB=$1 val "SELECT count(*) - count(DISTINCT config || '@' || coalesce(steps_budget, 0))
    FROM trials WHERE sweep_id=$2 AND role IN ('search', 'rerun')
    AND status NOT IN ('lost', 'interrupted', 'running')"
}

for strat in random grid tpe halving; do
  case $strat in
    random) write_exp "$strat" 'random {}' "$big" '' ;;
    grid) write_exp "$strat" 'grid {}' "$small" '' ;;
    tpe) write_exp "$strat" 'tpe { startup = 10 }' "$big" '' ;;
    halving) write_exp "$strat" 'halving { base = random {}, eta = 3, min_steps = 3 }' "$big" '' ;;
  esac
  db="$work/$strat.db"
  FLAGTUNE_DB=$db "$ft" -q run "$strat.lua" > "$strat.out" 2>&1 &
  pid=$!
  # Kill once a random number of trials (70..109) has been recorded: more than the 64
  # samples random{} draws before giving up on a space too large to enumerate.
  at=$((70 + RANDOM % 40))
  for ((i = 0; i < 400; i++)); do
    n=$(sql "$db" "SELECT count(*) FROM trials" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge $at ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.02
  done
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  before=$(counted "$db" 1)
  none_left "REL_ITER=$strat" 5 || fail "$strat: trial processes outlived the killed orchestrator"
  FLAGTUNE_DB=$db "$ft" -q resume 1 > "$strat.resume" 2>&1
  code=$?
  echo "     $strat: killed after $before counted trials (aimed at $at recorded); resume exit $code"
  check "$strat: resume exit 0 (got $code)" [ $code = 0 ]
  check_eq "$strat: counted trials after resume" "$(counted "$db" 1)" $budget
  check_eq "$strat: sweep done" "$(FLAGTUNE_DB=$db val 'SELECT status FROM sweeps WHERE id=1')" done
  check_eq "$strat: no configuration run twice" "$(dups "$db" 1)" 0
  [ $code = 0 ] || tail -5 "$strat.resume"
done

# 2. resume --trials N raises the budget, here of the done random sweep.
db="$work/random.db"
FLAGTUNE_DB=$db "$ft" -q resume 1 > more.out 2>&1
check "resume of a done sweep without --trials: exit 2" [ $? = 2 ]
FLAGTUNE_DB=$db "$ft" -q resume 1 --trials $((budget + 20)) > more.out 2>&1
code=$?
check "resume --trials $((budget + 20)): exit 0 (got $code)" [ $code = 0 ]
check_eq "resume --trials: counted trials" "$(counted "$db" 1)" $((budget + 20))
check_eq "resume --trials: budget stored" \
  "$(FLAGTUNE_DB=$db val 'SELECT budget_trials FROM sweeps WHERE id=1')" $((budget + 20))
check_eq "resume --trials: no configuration run twice" "$(dups "$db" 1)" 0

# 3. The time budget: 2 s per run or resume, trials of ~0.2 s; 24 trials need a few.
budget=24
cat > timed.lua <<LUA
return experiment {
  name = "timed", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.004" },
  env = { REL_MARK = "$$", REL_ITER = "timed" },
  metric = { json = "step_time_ms", skip = 1 },
  $big
  strategy = random {}, budget = { trials = $budget, steps = 9, hours = "2s" }, seed = 3,
  software_probe = false, -- the time budget is under test, not python3's start-up
}
LUA
db="$work/timed.db"
FLAGTUNE_DB=$db "$ft" -q run timed.lua > timed.out 2>&1
code=$?
check "time budget: run exit 0 (got $code)" [ $code = 0 ]
check_eq "time budget: sweep interrupted by its time budget" \
  "$(FLAGTUNE_DB=$db val "SELECT status || ',' || error FROM sweeps WHERE id=1")" \
  "interrupted,time budget"
first=$(counted "$db" 1)
check "time budget: fewer than $budget trials before the resume ($first)" [ "$first" -lt $budget ]
resumes=0
while [ "$(FLAGTUNE_DB=$db val 'SELECT status FROM sweeps WHERE id=1')" != done ] && [ $resumes -lt 20 ]; do
  FLAGTUNE_DB=$db "$ft" -q resume 1 >> timed.out 2>&1 || break
  resumes=$((resumes + 1))
done
echo "     time budget: $first trials in the first 2 s, $resumes resume(s) to the budget"
check_eq "time budget: resumes reach the budget" "$(counted "$db" 1)" $budget
check_eq "time budget: done" "$(FLAGTUNE_DB=$db val 'SELECT status FROM sweeps WHERE id=1')" done
check_eq "time budget: no configuration run twice" "$(dups "$db" 1)" 0

# 4. Stopped while its baseline runs (the first trial: on a GPU 20-30 s of jax's start and
#    compile), resumed: `resume` measures the baseline again as trial 1, and every read
#    command takes that one as the sweep's baseline (schema 14; the view sweep_baseline since 15). Before, the views joined on
#    trial 0 only, so the sweep reported no speedup ever, and `export` "no baseline".
for sig in INT KILL; do
  cat > base$sig.lua <<LUA
return experiment {
  name = "base$sig", model = "mb$sig", hardware = "h",
  command = { "sh", "-c", "[ -e $work/slow$sig ] && sleep 30; exec $sim --steps {steps} --time-scale 0" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms", skip = 1 },
  $small
  strategy = random {}, budget = { trials = 6, steps = 9 }, seed = 4, confirm = false,
  software_probe = false,
}
LUA
  # The first run's baseline hangs (while the file slow$sig exists) until the signal.
  touch "$work/slow$sig"
  db="$work/base$sig.db"
  FLAGTUNE_DB=$db "$ft" -q run base$sig.lua > base$sig.out 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    [ "$(FLAGTUNE_DB=$db val "SELECT status FROM trials WHERE sweep_id=1 AND number=0" 2>/dev/null)" = running ] && break
    sleep 0.1
  done
  kill -$sig $pid; wait $pid 2>/dev/null
  check_eq "baseline stopped by SIG$sig: trial 0" \
    "$(FLAGTUNE_DB=$db val "SELECT status FROM trials WHERE sweep_id=1 AND number=0")" \
    "$([ $sig = INT ] && echo interrupted || echo running)"
  FLAGTUNE_DB=$db "$ft" show 1 > before$sig.txt 2>&1
  has before$sig.txt "$([ $sig = INT ] && echo "the baseline ended interrupted)" || echo "the baseline is running)")"
  rm "$work/slow$sig"
  FLAGTUNE_DB=$db "$ft" -q resume 1 >> base$sig.out 2>&1
  code=$?
  check "baseline stopped by SIG$sig: resume exit 0 (got $code)" [ $code = 0 ]
  check_eq "baseline stopped by SIG$sig: trial 1 is the baseline again" \
    "$(FLAGTUNE_DB=$db val "SELECT role || ',' || status FROM trials WHERE sweep_id=1 AND number=1")" \
    "baseline,ok"
  base=$(FLAGTUNE_DB=$db val "SELECT printf('%.2f', value) FROM trials WHERE sweep_id=1 AND number=1")
  FLAGTUNE_DB=$db "$ft" show 1 > show$sig.txt 2>&1
  check "baseline stopped by SIG$sig: show names the baseline's time ($base ms)" \
    grep -q "vs baseline $base ms" show$sig.txt
  FLAGTUNE_DB=$db "$ft" export 1 > export$sig.txt 2>&1
  check "baseline stopped by SIG$sig: export compares with it" grep -q "vs baseline $base ms" export$sig.txt
  check "baseline stopped by SIG$sig: best has a speedup" \
    sh -c "FLAGTUNE_DB=$db '$ft' best --model mb$sig | grep -q 'vs baseline $base ms'"
  check_eq "baseline stopped by SIG$sig: the view sweep_baseline names trial 1" \
    "$(FLAGTUNE_DB=$db val "SELECT t.number FROM sweep_baseline b JOIN trials t ON t.id = b.trial_id WHERE b.sweep_id=1")" 1
  check_eq "baseline stopped by SIG$sig: sweeps' baseline" \
    "$(FLAGTUNE_DB=$db val "SELECT printf('%.2f', baseline_ms) FROM sweep_summary WHERE id=1")" "$base"
  check_eq "baseline stopped by SIG$sig: show --json's baseline is trial 1" \
    "$(FLAGTUNE_DB=$db "$ft" show 1 --json | tr -d ' \n\t' | grep -o '"baseline":{"id":[0-9]*,"number":[0-9]*' | sed 's/.*://')" 1
done
finish
