#!/usr/bin/env bash
# End-to-end: one answer everywhere (docs/CLI.md "show", docs/REPORT.md).
#  1. parameter importance is one estimate over the sweep's trials, failures included: show,
#     show --all, show --json and the report give the same parameters, shares and trial count
#     (show does not score only the page of fastest ok trials it lists)
#  2. one winner: the report's top table starts with the trial that show, best and export
#     name, with the speedup and interval of the summary above it and of show's best line
#  3. the confirmation's note counts the trials it queued as the database holds them
# Usage: test_one_answer.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is needed to read the JSON"

(cd "$src" && "$ft" run experiments/demo.lua --seed 7 > /dev/null 2> "$work/run.err") ||
  die "the demo did not run"
n=$(val "SELECT count(*) FROM trials WHERE sweep_id = 1")
failed=$(val "SELECT count(*) FROM trials WHERE sweep_id = 1 AND status IN ('oom', 'pruned')")
check "the demo has failed trials to score ($failed)" [ "$failed" -gt 0 ]

# 1. importance
"$ft" show 1 > show.out
"$ft" show 1 --all > all.out
"$ft" show 1 --json > show.json
"$ft" report 1 -o r.html > /dev/null 2>&1 || fail "report 1"
imp_show=$(grep '^importance:' show.out)
imp_all=$(grep '^importance:' all.out)
check_eq "show and show --all give one importance" "$imp_all" "$imp_show"
has show.out "over $n trials; failures count as slowest"
has all.out "over $n trials; failures count as slowest"
json_imp=$(python3 -c '
import json
d = json.load(open("show.json"))["importance"]
print(d["trials"], " ".join("%s=%.0f%%" % (p["name"], 100 * p["share"]) for p in d["params"]))')
html_imp=$(sed -n '/id="importance-1"/,/<\/table>/p' r.html |
  grep -o '<tr><td>[^<]*</td><td>[0-9]*%</td>' | sed -E 's#<tr><td>([^<]*)</td><td>([0-9]*%)</td>#\1=\2#' |
  tr '\n' ' ' | sed 's/ $//')
check_eq "show --json's importance is over every trial" "${json_imp%% *}" "$n"
check_eq "the report's importance is show --json's" "$html_imp" "${json_imp#* }"

# 2. one winner
winner=$(python3 -c 'import json; print(json.load(open("show.json"))["best"]["number"])')
speedup=$(sed -n 's/^best: trial [0-9]*, .*: \(1\.[0-9]*x, 95% CI [0-9.-]*\)$/\1/p' show.out)
check "show's best line has a confirmed speedup ($speedup)" [ -n "$speedup" ]
first=$(sed -n '/<table class="top" id="top-1">/,/<\/table>/p' r.html | grep -m1 '^<tr')
check "the report's top table starts with the winner, trial $winner" \
  grep -q "^<tr class=\"winner\"><td>1</td><td>$winner</td>" <<< "$first"
check "the winner's row has show's speedup and interval ($speedup)" grep -qF "$speedup" <<< "$first"
summary=$(sed -n '/<table id="summary">/,/<\/table>/p' r.html)
check "the summary has the same speedup" grep -qF "$speedup" <<< "$summary"
"$ft" export 1 > export.out
has export.out "($speedup), trial $winner, confirmed"
"$ft" best > best.out
has best.out "($speedup), sweep 1 \"demo-fsdp8\" trial $winner"
check "the report's export comment is export's" grep -qF "($speedup), trial $winner, confirmed" r.html

# 3. the confirmation's note counts what it queued
c=$(val "SELECT count(*) || ' trials: ' || sum(config = '{}') || ' re-measurement' ||
  CASE WHEN sum(config = '{}') = 1 THEN '' ELSE 's' END || ' of the baseline and ' ||
  sum(config <> '{}') || ' of ' || count(DISTINCT CASE WHEN config <> '{}' THEN config END)
  FROM trials WHERE role = 'confirm'")
has run.err "confirming: $c candidate"
finish
