#!/usr/bin/env bash
# An in-trial rung (a proposal's rung = { steps = K, value = V }, docs/STRATEGIES.md): a search
# trial whose value after K step times is above V is stopped and recorded pruned, with the K
# step times its verdict read (not what it printed before the stop landed) and the reason
# "pruned at step K: median X ms > V ms, the strategy's rung"; one below V runs to the end. And
# halving{} at full fidelity (a start of 60 steps) prunes at its first rung in the trial.
# Usage: test_rung.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# A program whose step time is $MS, printing 8 steps at once and exiting 0.
cat > steps.sh <<'SH'
#!/usr/bin/env bash
for i in 1 2 3 4 5 6 7 8; do echo "{\"step_time_ms\": ${MS:-70}}"; done
SH
chmod +x steps.sh
cat > rungs.lua <<'LUA'
local M = {}
M.__index = M
function M.new(space) return setmetatable({ space = space, i = 0 }, M) end
function M:ask(n)
  self.i = self.i + 1
  local ms = ({ "150", "50", "100" })[self.i]
  if not ms then return {} end
  return { { config = { MS = ms }, steps = 8, rung = { steps = 3, value = 100 } } }
end
return M
LUA
cat > exp.lua <<LUA
return experiment {
  name = "rung", model = "m", hardware = "h",
  command = { "$work/steps.sh" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms", skip = 1 },
  vars = { MS = choice { "150", "50", "100" } },
  strategy = strategy_file("rungs.lua"), budget = { trials = 4, steps = 8 },
  confirm = false, prune = false, software_probe = false,
}
LUA
"$ft" run exp.lua > run.out 2> run.err || { cat run.err; die "the sweep failed"; }
rows=$(sql "$FLAGTUNE_DB" "SELECT role, json_extract(config, '$.MS'), status, n_steps
  FROM trials WHERE sweep_id = 1 ORDER BY number" | tr '\n' ' ')
check_eq "the baseline runs whole, 150 ms stops at the rung with its 3 steps, 50 and 100 (not above) run on" \
  "$rows" "baseline||ok|8 search|150|pruned|3 search|50|ok|8 search|100|ok|8 "
why=$(val "SELECT substr(error, 1, instr(error || char(10), char(10)) - 1) FROM trials
  WHERE status = 'pruned'")
check_eq "its reason" "$why" "pruned at step 3: median 150.00 ms > 100.00 ms, the strategy's rung"
has run.err "$why"
n=$(val "SELECT count(*) FROM steps JOIN trials t ON t.id = steps.trial_id WHERE status = 'pruned'")
check_eq "the pruned trial's stored step times are the 3 its verdict read" "$n" 3

# halving{} with a start of 60 steps: the rungs inside the trial; every trial it stops has
# exactly min_steps step times and says the strategy's rung stopped it.
cat > halving.lua <<LUA
return experiment {
  name = "halving", model = "m2", hardware = "h",
  command = { "$sim", "--landscape", "gen:3", "--steps", "{steps}", "--time-scale", "0" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("16MiB", "1GiB"),
            xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("16MiB", "1GiB") },
  strategy = halving { base = tpe {}, min_steps = 5, compile_steps = 60 },
  budget = { trials = 20, steps = 45 }, seed = 3, prune = false, software_probe = false,
}
LUA
"$ft" run halving.lua > h.out 2> h.err || { cat h.err; die "the halving sweep failed"; }
pruned=$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'halving'
  AND t.status = 'pruned'")
check "halving at full fidelity prunes in the trial ($pruned of 20)" [ "$pruned" -ge 5 ]
other=$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'halving'
  AND t.status = 'pruned' AND (n_steps != 5 OR t.error NOT LIKE 'pruned at step 5: median % ms > % ms, the strategy''s rung%')")
check_eq "each at step 5, by the strategy's rung" "$other" 0
full=$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = 'halving'
  AND role = 'search' AND t.status = 'ok' AND n_steps = 45 AND steps_budget = 45")
check "its survivors run on to 45 steps in the same trial ($full)" [ "$full" -ge 2 ]
finish
