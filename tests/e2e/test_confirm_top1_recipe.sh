#!/usr/bin/env bash
# End-to-end: `confirm = { top = 1 }` with a strategy that has a recipe (tpe{}) re-measures the
# baseline and the leader, not the recipe (src/sweep/confirm.h, confirm_add_recipe: the recipe
# comes after the leader of each round, and the plan is cut to the REPEATS * (TOP + 1) trials
# the budget keeps for it). 25-trial sweeps of the simulator's generated landscapes gen:2 and
# gen:3 (tuner seed 1, the experiment tests/bench/bench_search.py writes), where the leader is
# not the recipe: 2 confirm trials, the baseline and a configuration that is neither the
# baseline nor the recipe (trial 1, tpe's guides' start point); the recipe is not re-measured,
# so the answer is the confirmed leader or the baseline, never the recipe (confirm_guard).
# Usage: test_confirm_top1_recipe.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not found (the experiment is written by Python)"

for g in 2 3; do
  PYTHONPATH="$src/tests/bench" python3 -c "
import bench_search as b, sys
sys.stdout.write(b.experiment_text(sys.argv[1], 'gen:$g', 'tpe', 25, 1, '', 'top = 1'))" \
    "$sim" > gen$g.lua || die "could not write the experiment of gen:$g"
  export FLAGTUNE_DB=$work/gen$g.db
  "$ft" -q run gen$g.lua --seed 1 --trials 25 > run$g.out 2>&1
  rc=$?
  check "gen:$g: the sweep ends (exit 0 or 1)" [ "$rc" -le 1 ]
  recipe=$(val "SELECT config FROM trials WHERE sweep_id = 1 AND number = 1")
  check_eq "gen:$g: 25 trials" "$(val "SELECT count(*) FROM trials")" 25
  check_eq "gen:$g: 2 confirm trials, one of them the baseline" \
    "$(val "SELECT count(*) || ',' || sum(config = '{}') FROM trials
                 WHERE role = 'confirm'")" "2,1"
  leader=$(val "SELECT config FROM trials WHERE role = 'confirm'
                 AND config != '{}'")
  check "gen:$g: the other is the leader, not the recipe" test -n "$leader" -a "$leader" != "$recipe"
  check "gen:$g: the answer is the confirmed leader or the baseline, not the recipe" \
    grep -q -x -E 'search|baseline' <<< "$(val "SELECT winner_kind FROM sweeps WHERE id = 1")"
done
finish
