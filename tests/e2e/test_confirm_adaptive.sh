#!/usr/bin/env bash
# The end of a sweep (docs/ARCHITECTURE.md): the confirmation re-runs only the candidates whose
# re-run can still change the answer, and the trials it does not need go back to the search.
#  1. A 20-trial random{} sweep over fsdp8 (a leader clearly ahead of the rest): the plan gives
#     trials back (its note), the search runs them (more than the 15 search trials a full
#     confirmation leaves), the sweep still spends exactly its budget, re-runs the baseline and
#     the leader at least, and records a confirmed winner with its 95 % interval.
#  2. The same sweep killed (SIGKILL) once trials have gone back, before its end, then resumed:
#     it reaches the same end (done, its budget exactly, a confirmed winner among the confirmed
#     configurations, no search configuration run twice). The done sweep extended by
#     `resume --trials` spends the new budget exactly.
#  3. `confirm = { top = 3 }` is a maximum: no more than 3 candidates, whatever the budget.
# Usage: test_confirm_adaptive.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
budget=20

cat > adapt.lua <<LUA
return experiment {
  name = "adapt", model = "m", hardware = "h",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0.05",
              "--compile-ms", "4000" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_enable_pipelined_all_gather = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "8GiB"),
    xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("64MiB", "8GiB"),
  },
  vars = { XLA_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = random {}, budget = { trials = $budget, steps = 6 }, parallel = 1, seed = 7,
  confirm = { top = 3, repeats = 1 },
}
LUA

counted() { # DB: finished trials (what the budget counts)
  FLAGTUNE_DB=$1 val "SELECT count(*) FROM trials WHERE sweep_id=1
    AND status NOT IN ('lost', 'interrupted', 'running')"
}
roles() { # DB ROLE: finished trials of ROLE
  FLAGTUNE_DB=$1 val "SELECT count(*) FROM trials WHERE sweep_id=1 AND role='$2'
    AND status NOT IN ('lost', 'interrupted', 'running')"
}
ends_confirmed() { # DB NAME: the checks every end of this sweep must pass
  local db=$1 name=$2 c
  check_eq "$name: sweep done" "$(FLAGTUNE_DB=$db val 'SELECT status FROM sweeps WHERE id=1')" done
  check_eq "$name: exactly the budget" "$(counted "$db")" $budget
  c=$(roles "$db" confirm)
  check "$name: the baseline and the leader re-run, fewer than 4 ($c confirm trials)" \
    [ "$c" -ge 2 ] && [ "$c" -lt 4 ]
  check "$name: the search got them ($(roles "$db" search) search trials > 15)" \
    [ "$(roles "$db" search)" -gt 15 ]
  check_eq "$name: the baseline re-run" "$(FLAGTUNE_DB=$db val "SELECT
    count(*) AS n FROM trials WHERE sweep_id=1 AND role='confirm' AND config='{}' AND status='ok'")" 1
  check_eq "$name: the winner is a confirmed configuration" "$(FLAGTUNE_DB=$db val "SELECT
    count(*) AS n FROM sweeps s JOIN trials w ON w.id = s.winner_trial_id WHERE s.id=1 AND EXISTS (SELECT 1
    FROM trials c WHERE c.sweep_id=1 AND c.role='confirm' AND c.config=w.config)")" 1
  check_eq "$name: with its interval" "$(FLAGTUNE_DB=$db val "SELECT
    speedup_lo < speedup_hi AS ci FROM sweeps WHERE id=1")" 1
  check_eq "$name: no search configuration run twice" "$(FLAGTUNE_DB=$db val "SELECT
    count(*) - count(DISTINCT config) AS dups FROM trials WHERE sweep_id=1 AND role IN ('search', 'rerun')
    AND status NOT IN ('lost', 'interrupted', 'running')")" 0
}

sed 's/"0.05"/"0"/' adapt.lua > fast.lua # only the kill below needs trials that take a while

# 1. Uninterrupted.
FLAGTUNE_DB=$work/a.db "$ft" run fast.lua > a.out 2> a.err
code=$?
check "run exits 0 (got $code)" [ $code = 0 ]
has a.err "go back to the search"
has a.err "confirmed winner"
ends_confirmed "$work/a.db" "run"

# 2. Killed once trials have gone back, then resumed.
FLAGTUNE_DB=$work/b.db "$ft" run adapt.lua > b.out 2> b.err &
pid=$!
for ((i = 0; i < 1500; i++)); do
  grep -q "go back to the search" b.err 2>/dev/null && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.02
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
before=$(counted "$work/b.db")
none_left "REL_MARK=$$" 5 || fail "trial processes outlived the killed orchestrator"
[ "$before" -lt $budget ] || die "the sweep ended before the kill ($before trials)"
has b.err "go back to the search"
FLAGTUNE_DB=$work/b.db "$ft" -q resume 1 > b.resume 2>&1
code=$?
echo "     killed after $before counted trials; resume exit $code"
check "resume exits 0 (got $code)" [ $code = 0 ]
[ $code = 0 ] || tail -5 b.resume
ends_confirmed "$work/b.db" "resumed"

# 2b. The done sweep extended (`resume --trials`): the new trials are spent exactly, whatever
#     the plan re-runs of them, and the winner stays a confirmed one.
FLAGTUNE_DB=$work/a.db "$ft" -q resume 1 --trials 27 > a.more 2>&1
code=$?
check "resume --trials 27 exits 0 (got $code)" [ $code = 0 ]
check_eq "extended: exactly the new budget" "$(counted "$work/a.db")" 27
check_eq "extended: a confirmed winner" \
  "$(FLAGTUNE_DB=$work/a.db val 'SELECT winner_trial_id IS NOT NULL FROM sweeps WHERE id=1')" 1

# 3. top is a maximum: a noisy, flat landscape (every candidate can change the answer) with
#    a large budget re-runs no more than the baseline and 3.
sed -e 's/"fsdp8"/"sparse", "--noise", "300"/' -e "s/trials = $budget/trials = 40/" fast.lua \
  > flat.lua
FLAGTUNE_DB=$work/c.db "$ft" -q run flat.lua > c.out 2>&1
code=$?
check "flat: run exits 0 (got $code)" [ $code = 0 ]
check "flat: at most the baseline and 3 re-run ($(roles "$work/c.db" confirm))" \
  [ "$(roles "$work/c.db" confirm)" -le 4 ]
check_eq "flat: exactly the budget" "$(counted "$work/c.db")" 40
check_eq "flat: a confirmed winner" \
  "$(FLAGTUNE_DB=$work/c.db val 'SELECT winner_trial_id IS NOT NULL FROM sweeps WHERE id=1')" 1
finish
