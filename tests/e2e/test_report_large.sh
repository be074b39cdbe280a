#!/usr/bin/env bash
# End-to-end: `report` and `compare` of a sweep too large to draw or hold whole (src/report/report.c,
# docs/REPORT.md "Large sweeps", docs/COST.md "Read commands"). A database of 20,000 trials in
# the shapes flagtune writes (tests/bench/gen_big_db.py: sweep 1 of 18,000 trials of a
# parameter with nearly as many values, sweep 2 of 2,000):
#  1. the report of sweep 1 caps its plots: it names "N of 18000 trials shown", N at most the
#     documented 2,000 plus the top table's 10, in runs of 20 consecutive trials (the trials
#     SQL finds by number, read as ranges: at most 2,100 rows); every plot draws at most N marks,
#     none outside the runs but the top table's; a parameter of thousands of values is drawn in
#     12 ranges; the page stays under 2 MB; the top table's intervals draw the baseline's
#     resampled medians once and each row's once per sample size (the page's last note, id="read");
#  2. what is over every trial is: the best-so-far curve has exactly the change points SQL
#     finds over all 18,000 (a window function), the top table's first row is the fastest ok
#     trial, the summary counts every trial;
#  3. sweep 2 (2,000 trials) is drawn whole: no "trials shown" note, one mark per trial;
#  4. compare does not hold the trials' rows: its peak RSS stays under 32 MiB on the 18,000-trial
#     sweep (reading every trial as the report did took 79 MiB), and its output is the same as
#     when the other trials' rows are deleted from a copy;
#  5. report's peak RSS stays under 32 MiB too.
# Usage: test_report_large.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is needed to write the database"
command -v sqlite3 > /dev/null || skip_all "sqlite3 is needed to read the database"

db=$work/big.db
python3 "$src/tests/bench/gen_big_db.py" "$ft" "$db" --trials 20000 --sweeps 2 --big 18000 \
  --steps 5 --long-steps 50 > gen.txt 2>&1 || die "gen_big_db.py failed: $(tail -3 gen.txt)"
n1=$(sql "$db" "SELECT count(*) FROM trials WHERE sweep_id = 1")
n2=$(sql "$db" "SELECT count(*) FROM trials WHERE sweep_id = 2")
check_eq "sweep 1 has 18000 trials" "$n1" 18000
check_eq "sweep 2 has 2000 trials" "$n2" 2000

# Peak RSS in KiB of a command (its own, from wait4; that counts the forked Python's pages
# before the exec, about 14 MiB here: the bound still tells 5 MiB from 79).
peak_kib() {
  python3 - "$@" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
print(ru.ru_maxrss if os.waitstatus_to_exitcode(status) == 0 else -1)
PY
}

# 1. the cap
"$ft" report 1 --db "$db" -o big.html 2> err.txt
check_eq "report of 18000 trials exits 0" "$?" 0
has big.html 'id="sample-1"'
shown=$(grep -o '<p class="note sample" id="sample-1">[0-9]* of [0-9]* trials shown' big.html |
  sed -E 's/.*>([0-9]+) of ([0-9]+) trials shown/\1 \2/')
check_eq "the note names every trial" "${shown#* }" 18000
shown=${shown% *}
check "at most 2000 + 10 trials shown ($shown)" [ "${shown:-0}" -gt 0 ] && [ "${shown:-0}" -le 2010 ]
# the sample is runs of 20 consecutive trials by number, one every P: the trials N with
# N mod P < 20, read as ranges (about 2,000 rows and the top table's few)
period=$(grep -o 'runs of 20 consecutive trials by number, one run every [0-9]* ([0-9]* trials)' \
  big.html | sed -E 's/.* every ([0-9]+) \(([0-9]+) trials\)/\1 \2/')
check_eq "the note's runs are the trials N mod ${period% *} < 20 (${period#* })" "${period#* }" \
  "$(sql "$db" "SELECT count(*) FROM trials WHERE sweep_id = 1 AND number % ${period% *} < 20")"
outside=$(sed -n '/<svg id="param-1-1"/,/<\/svg>/p' big.html | grep -o '<title>trial [0-9]*' |
  awk -v p="${period% *}" '{ sub(/.* /, ""); if ($0 % p >= 20) n++ } END { print n + 0 }')
check "param-1-1 draws no trial outside the runs but the top table's ($outside)" [ "$outside" -le 10 ]
read_note=$(grep -o '<p class="note" id="read">[^<]*' big.html)
rows=$(sed -n 's/.*>Read \([0-9]*\) trial rows for 18000 trials.*/\1/p' <<< "$read_note")
check "the report read at most 2,100 trial rows of 18,000 (${rows:-none})" \
  [ "${rows:-99999}" -le 2100 ] && [ "${rows:-0}" -ge 2000 ]
# the top table's ten intervals: the baseline's resampled medians drawn once, each row's ranks
# once per sample size (every trial here has 5 steps): 2 x 2,000, not 2 x 2,000 a row
draws=$(sed -n 's/.*intervals from \([0-9]*\) resampled medians\..*/\1/p' <<< "$read_note")
check_eq "the top table drew 2 x 2,000 resampled medians" "${draws:-none}" 4000
# one plot's marks: every circle, OOM cross and ring of param-1-K
for k in 1 2; do
  marks=$(sed -n "/<svg id=\"param-1-$k\"/,/<\/svg>/p" big.html |
    grep -cE '<circle class="(ok|failed)"|<path class="oom"')
  check "param-1-$k draws at most the $shown shown ($marks)" [ "$marks" -le "$shown" ] &&
    [ "$marks" -gt 1000 ]
done
# the plot of xla_gpu_autotune_level (nearly one value per trial), whichever its place
plot_of() { # FILE PARAMETER: that parameter's step-time-by-value plot
  awk -v t="<title>step time by value of $2</title>" '/<svg id="param-/ { buf = ""; on = 1 }
    on { buf = buf $0 "\n" } /<\/svg>/ && on { on = 0; if (index(buf, t)) printf "%s", buf }' "$1"
}
ranges=$(plot_of big.html xla_gpu_autotune_level | grep -c '–')
check_eq "the many-valued parameter is drawn in 12 ranges" "$ranges" 12
size=$(wc -c < big.html)
check "the page is under 2 MB ($size bytes)" [ "$size" -lt 2000000 ]

# 2. over every trial
want=$(sql "$db" "SELECT count(*) FROM (SELECT value, min(value) OVER (ORDER BY number ROWS
  BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev FROM trials WHERE sweep_id = 1 AND
  status = 'ok' AND value IS NOT NULL AND role NOT IN ('baseline', 'confirm'))
  WHERE prev IS NULL OR value < prev")
got=$(sed -n '/<svg id="best-by-trial"/,/<\/svg>/p' big.html | grep -c '<circle fill=')
check_eq "the best-so-far curve has every change point SQL finds" "$got" "$want"
fastest=$(sql "$db" "SELECT number FROM trials WHERE sweep_id = 1 AND status = 'ok'
  AND config <> '{}' ORDER BY value, number LIMIT 1")
check "the top table's first row is the fastest trial ($fastest)" \
  grep -q "<tr class=\"winner\"><td>1</td><td>$fastest</td>" big.html
check "the summary counts every trial" grep -q '<td>18000: ' big.html

# 3. a sweep of 2,000 is drawn whole
"$ft" report 2 --db "$db" -o small.html || fail "report 2"
check "no sample note for 2000 trials" lacks -q 'trials shown' small.html
# every trial but the baseline (which sets nothing) sets both parameters; none is running
drawn=$(sql "$db" "SELECT count(*) FROM trials WHERE sweep_id = 2 AND number > 0")
for p in xla_gpu_autotune_level xla_gpu_enable_latency_hiding_scheduler; do
  marks=$(plot_of small.html $p | grep -cE '<circle class="(ok|failed)"|<path class="oom"')
  check_eq "every trial of sweep 2 is a mark on the plot of $p" "$marks" "$drawn"
done

# 4. compare reads its two sweeps' rows, best and baseline, and no other trial
rss=$(peak_kib "$ft" compare 1 2 --db "$db")
check "compare's peak RSS is under 32 MiB (${rss} KiB)" [ "$rss" -gt 0 ] && [ "$rss" -lt 32768 ]
"$ft" compare 1 2 --db "$db" --json > c.json || fail "compare 1 2"
cp "$db" bare.db
sql bare.db "DROP TRIGGER IF EXISTS trials_count_delete;
  DELETE FROM steps WHERE trial_id NOT IN (SELECT trial_id FROM sweep_best UNION
    SELECT id FROM trials WHERE number = 0);
  DELETE FROM trials WHERE number <> 0 AND id NOT IN (SELECT trial_id FROM sweep_best);" ||
  die "cannot strip the copy"
check_eq "the copy kept only the best and baseline rows" \
  "$(sql bare.db "SELECT count(*) FROM trials")" 4
"$ft" compare 1 2 --db "$work/bare.db" --json | sed 's/bare\.db/big.db/' > bare.json
check "compare prints the same without the other trials' rows" cmp -s c.json bare.json

# 5. report's memory
rss=$(peak_kib "$ft" report 1 --db "$db" -o rss.html)
check "report's peak RSS is under 32 MiB (${rss} KiB)" [ "$rss" -gt 0 ] && [ "$rss" -lt 32768 ]
finish
