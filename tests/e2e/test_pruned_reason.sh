#!/usr/bin/env bash
# End-to-end: a pruned trial says why (docs/EXPERIMENTS.md "prune"): its stored error, show's
# line under it and the progress line read "pruned at step N: median X ms > M x best Y ms
# (prune.margin)", with X above M times Y, never the program's first stderr line.
# Usage: test_pruned_reason.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

(cd "$src" && "$ft" run experiments/demo.lua --seed 7 > "$work/run.out" 2> "$work/run.err") ||
  die "the demo did not run"
n=$(val "SELECT count(*) FROM trials WHERE status = 'pruned'")
check "the demo prunes trials ($n)" [ "$n" -gt 0 ]
re='^pruned at step [0-9]+: median ([0-9.]+) ms > ([0-9.]+) x best ([0-9.]+) ms \(prune\.margin\)$'
sql "$FLAGTUNE_DB" "SELECT number, substr(error, 1, instr(error || char(10), char(10)) - 1)
  FROM trials WHERE status = 'pruned'" > reasons.txt
bad=0
while IFS='|' read -r num why; do
  if [[ $why =~ $re ]]; then
    awk -v x="${BASH_REMATCH[1]}" -v m="${BASH_REMATCH[2]}" -v y="${BASH_REMATCH[3]}" \
      'BEGIN { exit !(x > m * y) }' || { echo "trial $num: $why is not over the margin"; bad=1; }
  else
    echo "trial $num: '$why'"
    bad=1
  fi
done < reasons.txt
check_eq "every pruned trial's error starts with its reason, over the margin" "$bad" 0
first=$(head -1 reasons.txt | cut -d'|' -f2)
"$ft" show 1 --all > show.out
has show.out "       $first"
has run.err "$first"
finish
