#!/usr/bin/env bash
# Warm start: a sweep with warm_start = true replays the trials of earlier sweeps of the same
# model and hardware: over the same space it never re-runs their configurations; over a
# space that differs, tpe takes the parameters the spaces share (as a prior); sweeps of
# another model are not used.
# Usage: test_warm.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# exp NAME MODEL WARM EXTRA_VARS: a tpe sweep of 8 trials over two flags (+ EXTRA_VARS).
exp() {
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "$2", hardware = "box",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0", "--landscape", "sparse" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_reduce_combine_threshold_bytes = pow2("1MiB", "64MiB") },
  vars = { $4 },
  strategy = tpe { startup = 3 },
  warm_start = $3,
  confirm = { top = 0 },
  budget = { trials = 8, steps = 6 },
  seed = 1,
}
LUA
}
configs() { val "SELECT config FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.name = '$1' AND t.role = 'search' ORDER BY config"; }
exp a sim false ""
"$ft" -q run a.lua > /dev/null 2> a.err || { cat a.err; die "run a"; }
check "no warm start: no note" lacks -q "warm start" a.err
exp b sim true ""
"$ft" run b.lua > /dev/null 2> b.err || { cat b.err; die "run b"; }
check "same space: the note counts a's trials" \
  grep -q "flagtune: warm start: 7 trials of earlier sweeps of sim on box (0 by the parameters shared with this space)" b.err
check "same space: none of a's configurations again" eval '[ -z "$(comm -12 <(configs a | sort) <(configs b | sort))" ]'
check "b ran its own trials" [ "$(configs b | wc -l)" -ge 6 ]
exp c sim true 'XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.8, 0.9, 0.05)'
"$ft" run c.lua > /dev/null 2> c.err || { cat c.err; die "run c"; }
check "another space: a's and b's trials by their shared parameters" \
  grep -q "flagtune: warm start: 14 trials of earlier sweeps of sim on box (14 by the parameters shared with this space)" c.err
check "another space: c ran" [ "$(val "SELECT status FROM sweeps WHERE name = 'c'")" = done ]
exp d other true ""
"$ft" run d.lua > /dev/null 2> d.err || { cat d.err; die "run d"; }
check "another model: no warm start" lacks -q "warm start" d.err
finish
