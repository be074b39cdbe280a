#!/usr/bin/env bash
# The quick start's sweep, experiments/demo.lua, as shipped: it finishes, confirms a winner
# faster than the baseline, and its export sources.
# Usage: test_demo.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
(cd "$src" && "$ft" -q run experiments/demo.lua --seed 7 > "$work/out.txt" 2> "$work/err.txt")
code=$?
check "demo exits 0 (got $code)" [ $code = 0 ]
check_eq "30 trials" "$(val "SELECT count(*) FROM trials")" 30
check_eq "a confirmed winner" "$(val "SELECT winner_trial_id IS NOT NULL FROM sweeps")" 1
check_eq "faster than the baseline" "$(val "SELECT speedup > 1.1 FROM sweep_summary")" 1
check "prints the export" grep -q "^export XLA_FLAGS=" "$work/out.txt"
"$ft" export 1 > "$work/export.sh"
got=$(bash -c '. "$0"; printf %s "$XLA_FLAGS"' "$work/export.sh")
check "the export sources" [ -n "$got" ]
check_eq "the export's XLA_FLAGS are the best's" "$got" "$(val "SELECT xla_flags FROM best")"
finish
