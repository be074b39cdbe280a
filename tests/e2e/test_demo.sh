#!/usr/bin/env bash
# The quick start's sweep, experiments/demo.lua, as shipped: it finishes, confirms a winner
# faster than the baseline, and its export sources.
# Usage: test_demo.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
set -u
ft=$1 sim=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FLAGTUNE_DB="$work/demo.db" FLAGTUNE_SIM="$sim" FLAGTUNE_LOG_DIR="$work/logs"
unset XLA_FLAGS
fails=0 passes=0
check() { if eval "$2"; then passes=$((passes + 1)); else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
q() { "$ft" query "$1" | tail -n 1; }
(cd "$src" && "$ft" -q run experiments/demo.lua --seed 7 > "$work/out.txt" 2> "$work/err.txt")
code=$?
check "demo exits 0 (got $code)" '[ $code = 0 ]'
check "30 trials" '[ "$(q "SELECT count(*) FROM trials")" = 30 ]'
check "a confirmed winner" '[ "$(q "SELECT winner_trial_id IS NOT NULL FROM sweeps")" = 1 ]'
check "faster than the baseline" '[ "$(q "SELECT speedup > 1.1 FROM sweep_summary")" = 1 ]'
check "prints the export" 'grep -q "^export XLA_FLAGS=" "$work/out.txt"'
"$ft" export 1 > "$work/export.sh"
got=$(bash -c '. "$0"; printf %s "$XLA_FLAGS"' "$work/export.sh")
check "the export sources" '[ -n "$got" ] && [ "$got" = "$(q "SELECT xla_flags FROM best")" ]'
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
