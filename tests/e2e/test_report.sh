#!/usr/bin/env bash
# End-to-end: `flagtune report` on real sweeps of the simulated workload, and importance in
# `show`.
#  1. report of two sweeps: one file, exit 0, every section's element, the page fetches and
#     runs nothing (no script, no external URL)
#  2. user data is HTML-escaped (a model name and a variable's values that hold markup)
#  3. bad input: unknown sweep, missing database, unwritable -o: exit 2, nothing written
#  4. DB:SWEEP takes a sweep from another database
#  5. headless Chromium (Debian's chromium; tests/deps.sh installs it): a screenshot, no
#     script error in the console, the sections present in the DOM after loading
#  6. show prints the importance line; show --json carries "importance"
# Usage: test_report.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # name seed
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "sim<b>7b</b>&co", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("2GiB", "8GiB"),
  },
  vars = {
    XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05),
    FT_REPORT_TAG = choice { "<script>alert(1)</script>", "a&b\"c'" },
  },
  strategy = random {},
  budget = { trials = 16, steps = 10 },
  seed = $2,
}
LUA
}
write_exp first 5
write_exp second 6
"$ft" -q run first.lua > /dev/null 2> run1.err || die "first sweep failed: $(tail -3 run1.err)"
"$ft" -q run second.lua > /dev/null 2> run2.err || die "second sweep failed: $(tail -3 run2.err)"
[ "$(val "SELECT count(*) FROM trials WHERE status = 'oom' AND sweep_id = 1")" -ge 1 ] ||
  die "the first sweep has no OOM to mark"

# 1. the report
"$ft" report 1 second -o r.html > out.txt 2> err.txt
code=$?
check_eq "report exits 0" "$code" 0
check "report writes the file" [ -s r.html ]
check "no temporary file left" [ -z "$(ls -A | grep "^r\.html\.")" ]
for id in summary best-by-trial best-by-time sweep-1 sweep-2 importance-1 importance-2 \
  param-1-1 param-1-4 oommap-1 top-1 top-2 export-1 export-2; do
  has r.html "id=\"$id\""
done
check "an OOM is marked (the sweeps have OOMs)" grep -q 'class="oom"' r.html
check "the OOM map has an OOM cell" grep -q '>OOM<' r.html
check "the export snippet is there" grep -q 'export XLA_FLAGS=' r.html
check "a sweep of 16 trials is drawn whole (no sample note)" lacks -q 'trials shown' r.html
check "speedups with intervals" grep -Eq '[0-9]\.[0-9]{3}x \([0-9.]+&ndash;[0-9.]+\)' r.html
check "no script element" lacks -qi '<script' r.html
check "nothing fetched (no URL but the SVG namespace)" [ -z "$(grep -Eo '(src|href)=|url\(|https?://[^"]*' r.html |
  grep -vx 'http://www.w3.org/2000/svg')" ]
# the winning trial's differences name what it set
best_flag=$(val "SELECT xla_flags FROM trials t JOIN sweep_best b ON b.trial_id = t.id WHERE t.sweep_id = 1" |
  tr ' ' '\n' | head -1 | sed 's/^--//')
[ -n "$best_flag" ] && has r.html "$best_flag"
n_ok=$(val "SELECT count(*) FROM trials t JOIN sweeps s ON s.id = t.sweep_id
  WHERE (s.id = 1 OR s.name = 'second') AND t.status = 'ok'")
dots=$(sed -n '/<svg id="best-by-trial"/,/<\/svg>/p' r.html | grep -c '<circle class="trial"')
check_eq "the history by trial number draws every ok trial under the best so far" "$dots" "$n_ok"
check "the history by time draws none (no finish times in the sample)" \
  not grep -q '<circle class="trial"' <(sed -n '/<svg id="best-by-time"/,/<\/svg>/p' r.html)
check "the OOM map's caption names each axis on its own line" \
  grep -qE '<text class="label" x="110" y="[0-9]+">y: ' r.html
w=$(sed -n 's/.*<svg id="oommap-1" class="plot" [^>]*width="\([0-9]*\)".*/\1/p' r.html)
cap=$(sed -n '/<svg id="oommap-1"/,/<\/svg>/p' r.html | sed -n 's/.*>\([xy]: [^<]*\)<\/text>.*/\1/p' |
  awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }')
check "the OOM map is wide enough for its caption (${w:-none} px, $cap characters)" \
  [ "$cap" -gt 10 ] && [ "${w:-0}" -ge $((110 + 7 * cap)) ]
check "the top table gives byte thresholds in human units, the exact bytes as its title" \
  grep -qE '<code title="[0-9]+">xla_gpu_all_gather_combine_threshold_bytes=[0-9.]+GiB</code>' r.html

# 1b. a tpe sweep that prunes, in its own database: every trial in the history, the pruned
# trials' reasons, the per-step curves, the parallel coordinates
cat > views.lua <<LUA
return experiment {
  name = "views", model = "sim", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "8GiB"),
    xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("64MiB", "8GiB"),
  },
  vars = { XLA_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = tpe { startup = 6 }, prune = { margin = 0.05, min_steps = 3 },
  budget = { trials = 30, steps = 20 },
  seed = 7, parallel = 2,
}
LUA
"$ft" -q run views.lua --db v.db > /dev/null 2> runv.err || die "views sweep failed: $(tail -3 runv.err)"
"$ft" report 1 --db v.db -o v.html || fail "report of the tpe sweep"
vsql() { sql v.db "$1"; }
n_pruned=$(vsql "SELECT count(*) FROM trials WHERE status = 'pruned'")
check "the tpe sweep prunes trials ($n_pruned)" [ "${n_pruned:-0}" -gt 0 ]
n_all=$(vsql "SELECT count(*) FROM trials WHERE status <> 'running'")
marks=$(sed -n '/<svg id="best-by-trial"/,/<\/svg>/p' v.html | grep -c '<title>trial [0-9]*:')
check_eq "the history by trial number marks every trial of the tpe sweep" "$marks" "$n_all"
for id in steps-1 parallel-1 failures-1 read; do has v.html "id=\"$id\""; done
# each pruned trial: its row in the failed trials' table and its mark's title give its reason
bad=0
while IFS='|' read -r num why; do
  esc=$(sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' <<< "$why")
  grep -qF "<tr class=\"st-pruned\"><td>$num</td><td>pruned</td><td>$esc</td></tr>" v.html ||
    { echo "trial $num: no table row with '$esc'"; bad=1; }
  grep -qF "<title>trial $num: pruned: $esc</title>" v.html ||
    { echo "trial $num: no mark titled with its reason"; bad=1; }
done < <(vsql "SELECT number, substr(error, 1, instr(error || char(10), char(10)) - 1) FROM trials
  WHERE status = 'pruned' ORDER BY number")
check_eq "every pruned trial's reason is in the table and on its marks" "$bad" 0
check "a pruned reason reads 'pruned at step N: ...'" grep -q '<td>pruned at step [0-9]*: median' v.html
# the step curves: the baseline's and the winner's trials, each as many points as its steps
steps_svg=$(sed -n '/<svg id="steps-1"/,/<\/svg>/p' v.html)
base_n=$(vsql "SELECT number FROM trials WHERE role = 'baseline' ORDER BY number LIMIT 1")
win_n=$(vsql "SELECT t.number FROM trials t JOIN sweep_best b ON b.trial_id = t.id")
check "the step curves have the baseline's trial ($base_n)" grep -qF "<title>baseline, trial $base_n</title>" <<< "$steps_svg"
check "the step curves have the winner's trial ($win_n)" \
  grep -qF "<title>1: trial $win_n (the winner)</title>" <<< "$steps_svg"
win_pts=$(grep -F "<title>1: trial $win_n (the winner)" <<< "$steps_svg" | grep -o 'd="[^"]*"' |
  grep -oE '[ML]' | wc -l)
check_eq "the winner's curve has a point per step" "$win_pts" \
  "$(vsql "SELECT count(*) FROM steps s JOIN sweep_best b ON b.trial_id = s.trial_id")"
check "the warm-up line is drawn (metric.skip = 2)" grep -q '<line class="skip"' <<< "$steps_svg"
# the parallel coordinates: a line per ok full-budget trial and per failed trial, one point
# per parameter and one for the step time
pc=$(sed -n '/<svg id="parallel-1"/,/<\/svg>/p' v.html)
check_eq "a coloured polyline per ok trial" "$(grep -c '<polyline class="pc"' <<< "$pc")" \
  "$(vsql "SELECT count(*) FROM trials WHERE status = 'ok' AND value IS NOT NULL")"
check_eq "a dashed polyline per failed trial" "$(grep -c '<polyline class="pcfail"' <<< "$pc")" \
  "$(vsql "SELECT count(*) FROM trials WHERE status NOT IN ('ok', 'running')")"
check_eq "each polyline crosses the 4 parameters' axes and the step time's" \
  "$(grep -o 'points="[^"]*"' <<< "$pc" | awk '{ print NF }' | sort -u)" 5
fastest=$(vsql "SELECT number FROM trials WHERE status = 'ok' ORDER BY value, number LIMIT 1")
check "the fastest trial's line is drawn last, in the scale's blue" \
  grep -qE "stroke=\"#2c7bb6\" points=\"[^\"]*\"><title>trial $fastest:" <(grep '<polyline class="pc"' <<< "$pc" | tail -1)

# a sweep whose baseline fails: the page still writes, naming the failure and its reason
cat > allfail.lua <<'LUA'
return experiment {
  name = "allfail", model = "m", hardware = "h",
  command = { "/bin/sh", "-c", "echo 'Fatal: <no> device' >&2; exit 2" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c" } },
  budget = { trials = 3 }, seed = 1,
}
LUA
"$ft" -q run allfail.lua --db af.db > /dev/null 2>&1
"$ft" report 1 --db af.db -o af.html
check_eq "a failed sweep's report exits 0" "$?" 0
has af.html '<tr class="st-crash"><td>0</td><td>crash</td><td>Fatal: &lt;no&gt; device</td></tr>'
has af.html '<p class="note" id="steps-1">No step times recorded.</p>'
has af.html 'id="parallel-1">Needs the importance estimate'

# 2. escaping
has r.html 'sim&lt;b&gt;7b&lt;/b&gt;&amp;co'
check "a variable's markup is escaped" lacks -qF '<script>alert(1)' r.html
check "a model name's markup is escaped" lacks -qF '<b>7b</b>' r.html

# 3. bad input
"$ft" report 1 nosuch -o bad.html 2> err.txt
check_eq "unknown sweep: exit 2" "$?" 2
has err.txt "no sweep named 'nosuch'"
check "unknown sweep: nothing written" [ -z "$(ls -A | grep "^bad\.html")" ]
"$ft" report 1 --db missing.db -o bad.html 2> err.txt
check_eq "missing database: exit 2" "$?" 2
check "missing database: nothing written" [ ! -e bad.html ] && [ ! -e missing.db ]
"$ft" report 1 -o nodir/r.html 2> err.txt
check_eq "unwritable -o: exit 2" "$?" 2
has err.txt "cannot write nodir/r.html"
cp r.html keep.html
"$ft" report 1 nosuch -o r.html 2> /dev/null
check "a failed report leaves an existing file as it was" cmp -s r.html keep.html

# 4. another database
cp t.db other.db
"$ft" report "other.db:2" 1 -o two.html
check_eq "DB:SWEEP report exits 0" "$?" 0
has two.html '(other.db)'
"$ft" report "gone.db:2" -o x.html 2> err.txt
check_eq "DB:SWEEP with a missing database: exit 2" "$?" 2
has err.txt "gone.db"

# 5. in a browser
if ! command -v chromium > /dev/null; then
  if [ -n "${CI:-}" ]; then fail "chromium is missing in CI (tests/deps.sh installs it)"; else
    skip "chromium not installed (tests/deps.sh installs it)"; fi
else
  export HOME=$work # chromium writes its profile there
  ch=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=3000
    --enable-logging=stderr --v=0)
  timeout 120 "${ch[@]}" --window-size=1280,2000 --screenshot="$work/shot.png" "file://$work/r.html" \
    > /dev/null 2> shot.log
  timeout 120 "${ch[@]}" --dump-dom "file://$work/r.html" > dom.html 2> dom.log
  check "chromium wrote a screenshot" [ -s shot.png ]
  check "the screenshot is a PNG" grep -q PNG <(head -c 8 shot.png)
  check "no script error in the console" lacks -q 'Uncaught' dom.log
  check "the page loaded" lacks -q 'Page load failed' dom.log
  for id in summary best-by-trial best-by-time importance-1 oommap-1 top-2 export-1 \
    steps-1 parallel-1 failures-1 read; do
    check "DOM has #$id" grep -q "id=\"$id\"" dom.html
  done
  check "DOM has the escaped model name as text" grep -qF 'sim&lt;b&gt;7b&lt;/b&gt;&amp;co' dom.html
  check "DOM has no script element" lacks -qi '<script' dom.html
  check "DOM has SVG plots" [ "$(grep -o '<svg' dom.html | wc -l)" -ge 8 ]
fi

# 6. importance in show
"$ft" show 1 > show.txt
has show.txt "importance: "
"$ft" show 1 --json > show.json
check_eq "show --json has importance for each parameter" \
  "$(sql :memory: "SELECT json_array_length(json_extract(readfile('show.json'), '\$.importance.params'))")" 4
finish
