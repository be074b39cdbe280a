#!/usr/bin/env bash
# End-to-end: never worse than the recipe nor the baseline (src/sweep/confirm.h, confirm_guard;
# docs/STRATEGIES.md, "recipe"). tpe{}'s guides' start makes trial 1 the public recipe
# (xla_gpu_enable_latency_hiding_scheduler recommended true); the confirmation re-measures it
# with the baseline. The stub prints the same step times whatever the flags, so nothing is
# confirmed faster than the baseline: the baseline is the answer, the sweep row says
# winner_kind 'baseline', and show and the run's summary say so.
# Usage: test_recipe.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > flat.lua <<LUA
return experiment {
  name = "flat", model = "m", hardware = "h",
  command = { "$stub", "steps", "6", "1" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  vars = { V = int(1, 6, 1) },
  strategy = tpe {},
  budget = { trials = 14 }, seed = 1, software_probe = false,
}
LUA
"$ft" run flat.lua > run.out 2>&1 || die "the sweep failed: $(cat run.out)"
recipe=$(val "SELECT config FROM trials WHERE sweep_id = 1 AND number = 1")
check "trial 1 is the guides' point" grep -q '"xla_gpu_enable_latency_hiding_scheduler":true' \
  <<< "$recipe"
check_eq "the recipe is re-measured by the confirmation" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id = 1 AND role = 'confirm'
          AND config = '$recipe'")" 1
check_eq "the answer is the baseline" \
  "$(val "SELECT s.winner_kind || ',' || t.role FROM sweeps s JOIN trials t
          ON t.id = s.winner_trial_id WHERE s.id = 1")" "baseline,baseline"
has run.out 'the baseline is the answer: no configuration was confirmed faster than it'
"$ft" show 1 > show.out
has show.out 'the baseline is the answer'
check_eq "best: speedup 1 (the baseline itself)" \
  "$(val "SELECT round(speedup, 3) = 1 FROM best WHERE sweep_id = 1")" 1
finish
