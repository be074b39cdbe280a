#!/usr/bin/env bash
# End-to-end: what schema 13 keeps for `report` as trials are written (store/0013_report.sql:
# the best-so-far curves' candidates, the span, the tails, the repeated configurations) gives
# the page that every trial gives (docs/REPORT.md "Large sweeps", docs/COST.md "Read
# commands"), against a hostile history: trials finishing out of number order (parallel
# workers, a few long runners), halving's short rungs faster than any full-budget trial,
# repeated configurations (confirmation re-runs), a baseline. Checks:
#  1. the best-so-far curves, by number and by finishing time, have exactly the change points
#     SQL's window functions find over every trial (values in order, to the page's 2 decimals);
#  2. the top table starts with the sweep's winner (sweep_summary's best_trial, one run), then
#     the other configurations and run counts in SQL's own ranking (median over each
#     configuration's full-budget ok trials, then its fastest trial's number), ten rows in all;
#  3. the same history stored before schema 13 and then migrated (the backfill) gives the
#     same page, byte for byte;
#  4. the report of an 8,000-trial sweep reads a bounded number of trial rows
#     (the page's last note, id="read"): the 2,000-trial sample and tens more, not every trial.
# Usage: test_report_kept.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is needed to write the history"
command -v sqlite3 > /dev/null || skip_all "sqlite3 is needed to read the database"

# A schema-current database from flagtune itself (its 2-trial seed sweep, then emptied).
python3 "$src/tests/bench/gen_big_db.py" "$ft" seed.db --trials 2 --sweeps 1 --big 2 \
  --steps 3 --long-steps 3 > gen.txt 2>&1 || die "gen_big_db.py failed: $(tail -3 gen.txt)"
# (no cascade in the shell: the seed sweep's kept rows stay, and a new sweep 1 must drop them)
sql seed.db "DELETE FROM steps; DELETE FROM trials; DELETE FROM sweeps;" || die "cannot empty"

# history.py DB N SEED [RUNG [SPACE]]: sweep 1 of N trials written as flagtune writes them (inserted
# running, finished by an update), finishing out of order, with halving rungs (their values
# RUNG times a full-budget trial's: 0.6 by default, faster than any) and repeats (re-runs,
# and by chance in a space of SPACE x 14 configurations, 560 by default).
cat > history.py <<'PY'
import json, random, sqlite3, sys
db, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rung = float(sys.argv[4]) if len(sys.argv) > 4 else 0.6
space = int(sys.argv[5]) if len(sys.argv) > 5 else 40
rng = random.Random(seed)
c = sqlite3.connect(db)
c.execute("INSERT INTO sweeps (id, name, model, hardware, strategy, options_json, status)"
          " VALUES (1, 'kept', 'm', 'h', 'random{}', ?, 'done')",
          (json.dumps({"skip": 1}),))
configs, trials = [], []
for num in range(n):
    role = "baseline" if num == 0 else "search"
    if num == 0:
        cfg = {}
    elif num > 20 and rng.random() < 0.08:      # a re-run of an earlier configuration
        cfg = rng.choice(configs[1:])
        role = rng.choice(["confirm", "rerun", "search"])
    else:
        cfg = {"a": rng.randrange(space), "b": rng.choice([True, False]), "c": rng.randrange(7)}
    configs.append(cfg)
    budget = 50 if num == 0 or rng.random() < 0.7 else rng.choice([10, 25])
    start = "2026-01-01T%02d:%02d:%02d.000Z" % (num // 3600 % 24, num // 60 % 60, num % 60)
    c.execute("INSERT INTO trials (sweep_id, number, role, status, config, steps_budget,"
              " started_at) VALUES (1, ?, ?, 'running', ?, ?, ?)",
              (num, role, json.dumps(cfg, sort_keys=True), budget, start))
    trials.append((num, budget))
# Finishing order: the number plus a delay (eight workers' jitter, some long runners).
def delay(num):
    return num + rng.uniform(0, 8) + (rng.uniform(50, 400) if rng.random() < 0.03 else 0)
order = sorted(trials, key=lambda t: delay(t[0]))
for k, (num, budget) in enumerate(order):
    r = rng.random()
    status = "ok" if num == 0 or r < 0.8 else rng.choice(["oom", "crash", "pruned"])
    # short rungs look faster: they must not count on the full-budget curves
    value = (rng.uniform(200, 400) * (rung if budget < 50 else 1.0)
             * (1 - 0.3 * num / n)) if status == "ok" else None
    fin = "2026-01-02T%02d:%02d:%02d.%03dZ" % (k // 3600 % 24, k // 60 % 60, k % 60, k % 1000)
    c.execute("UPDATE trials SET status = ?, value = ?, n_steps = 3, finished_at = ?"
              " WHERE sweep_id = 1 AND number = ?", (status, value, fin, num))
    if status == "ok":
        tid = c.execute("SELECT id FROM trials WHERE sweep_id = 1 AND number = ?",
                        (num,)).fetchone()[0]
        c.executemany("INSERT INTO steps (trial_id, step, ms) VALUES (?, ?, ?)",
                      [(tid, s + 1, value * (1 + 0.01 * s)) for s in range(3)])
c.commit()
PY
cp seed.db kept.db
python3 history.py kept.db 1500 8 || die "history.py failed"

curve_page() { # FILE SVG-ID: the curve's points' values, in order
  sed -n "/<svg id=\"$2\"/,/<\/svg>/p" "$1" | grep -o '<circle fill="[^"]*" cx="[^"]*" cy="[^"]*" r="3"><title>[0-9.]* ms' |
    sed -E 's/.*<title>([0-9.]+) ms/\1/'
}
"$ft" report 1 --db kept.db -o kept.html 2> err.txt || die "report failed: $(cat err.txt)"

# 1. the curves
want_n=$(sql kept.db "SELECT printf('%.2f', value) FROM (SELECT number, value, min(value) OVER
  (ORDER BY number ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev FROM trials
  WHERE sweep_id = 1 AND status = 'ok' AND value IS NOT NULL AND role NOT IN ('baseline',
  'confirm') AND steps_budget >= 50) WHERE prev IS NULL OR value < prev ORDER BY number")
want_t=$(sql kept.db "SELECT printf('%.2f', value) FROM (SELECT finished_at, number, value,
  min(value) OVER (ORDER BY finished_at, number ROWS BETWEEN UNBOUNDED PRECEDING AND 1
  PRECEDING) AS prev FROM trials WHERE sweep_id = 1 AND status = 'ok' AND value IS NOT NULL
  AND role NOT IN ('baseline', 'confirm') AND steps_budget >= 50)
  WHERE prev IS NULL OR value < prev ORDER BY finished_at, number")
got_n=$(curve_page kept.html best-by-trial)
got_t=$(curve_page kept.html best-by-time)
check "the by-number curve has change points ($(echo "$want_n" | wc -l))" \
  [ "$(echo "$want_n" | wc -l)" -gt 3 ]
check_eq "the by-number curve is SQL's over every trial" "$(echo $got_n)" "$(echo $want_n)"
check_eq "the by-time curve is SQL's over every trial" "$(echo $got_t)" "$(echo $want_t)"
check "the two curves differ (the history finishes out of order)" \
  [ "$(echo $want_n)" != "$(echo $want_t)" ]
n_cand=$(sql kept.db "SELECT count(*) FROM report_curve WHERE sweep_id = 1")
n_ok=$(sql kept.db "SELECT count(*) FROM trials WHERE sweep_id = 1 AND status = 'ok'")
check "the candidates are few ($n_cand of $n_ok ok trials)" [ "$n_cand" -lt 100 ]

# 2. the top table: SQL's ranking by median (the middle of each configuration's sorted
# full-budget values; the mean of the two middle ones for an even count), then fastest number
want_top=$(sql kept.db "WITH f AS (SELECT config, number, value, row_number() OVER
  (PARTITION BY config ORDER BY value, number) AS k, count(*) OVER (PARTITION BY config) AS n
  FROM trials WHERE sweep_id = 1 AND status = 'ok' AND value IS NOT NULL AND steps_budget >= 50
  AND config <> '{}' AND config <> (SELECT t.config FROM trials t JOIN sweep_summary s
    ON s.id = t.sweep_id AND s.best_trial = t.number WHERE s.id = 1)),
  g AS (SELECT config, n, avg(CASE WHEN k IN ((n + 1) / 2, (n + 2) / 2) THEN value END) AS med,
    min(CASE WHEN k = 1 THEN number END) AS best FROM f GROUP BY config)
  SELECT (SELECT best_trial FROM sweep_summary WHERE id = 1) || ' 1'
  UNION ALL SELECT * FROM (SELECT best || ' ' || n FROM g ORDER BY med, best LIMIT 9)")
got_top=$(sed -n '/<table class="top" id="top-1">/,/<\/table>/p' kept.html | grep -o '<tr[^>]*><td>[0-9]*</td><td>[0-9]*</td><td>[^<]*</td><td>[0-9]*</td>' |
  sed -E 's#<tr[^>]*><td>[0-9]+</td><td>([0-9]+)</td><td>[^<]*</td><td>([0-9]+)</td>#\1 \2#')
check_eq "the top table is SQL's ranking over every trial" "$(echo $got_top)" "$(echo $want_top)"
check "a repeated configuration is in the top table" grep -qE '^[0-9]+ [2-9]' <<< "$got_top"

# 3. the same history before schema 13, then migrated: the same page
latest=$(sql kept.db "PRAGMA user_version")
cp seed.db old.db
sql old.db "DROP VIEW trial_results; ALTER TABLE trials DROP COLUMN first_step_ms;
  ALTER TABLE trials DROP COLUMN step_ms; ALTER TABLE sweeps DROP COLUMN winner_kind;
  ALTER TABLE sweeps DROP COLUMN space_digest;
  CREATE VIEW trial_results AS SELECT 1 AS replaced_by_0014; DROP TRIGGER trials_report_insert; DROP TRIGGER trials_report_span;
  DROP TRIGGER trials_report_ok_insert; DROP TRIGGER trials_report_ok_update;
  DROP TRIGGER sweeps_report_insert; DROP TRIGGER trials_report_delete;
  DROP TABLE report_stale; DROP INDEX trials_ok_config; DROP TABLE report_curve; DROP TABLE report_span;
  DROP TABLE report_tail; DROP TABLE report_repeats;
  DROP INDEX trials_baseline_ok; DROP VIEW sweep_baseline; PRAGMA user_version = 12;" || # and 14-16, 19
  die "cannot make a schema-12 copy"
python3 history.py old.db 1500 8 || die "history.py failed on the copy"
check_eq "the copy keeps nothing for report" \
  "$(sql old.db "SELECT count(*) FROM sqlite_master WHERE name LIKE 'report_%'")" 0
"$ft" report 1 --db old.db -o /dev/null > /dev/null 2> refuse.txt
has refuse.txt "schema 12, this flagtune needs $latest"
"$ft" resume 99 --db old.db > /dev/null 2>&1 # a write command migrates (no sweep 99)
check_eq "resume migrated the copy" "$(sql old.db "PRAGMA user_version")" "$latest"
"$ft" report 1 --db old.db -o migrated.html || fail "report of the migrated copy"
sed -e 's/old\.db/kept.db/' -e '/^<p class="note">Written /d' migrated.html > a.html
sed '/^<p class="note">Written /d' kept.html > b.html
check "the migrated copy's page is the kept one's" cmp -s a.html b.html

# 4. a bounded read (short rungs as fast as the others: the top table reads the fastest ok
# trials until ten at the full budget, and rungs faster than all of those would be read too;
# a space too large to repeat by chance: a repeat's trials are read when it can rank)
cp seed.db big.db
python3 history.py big.db 8000 11 1.0 1000000 || die "history.py failed (8000)"
"$ft" report 1 --db big.db -o big.html ||
  fail "report of 8000 trials"
rows=$(grep -o '<p class="note" id="read">Read [0-9]* trial rows for [0-9]* trials' big.html |
  sed 's/.*Read \([0-9]*\) trial rows.*/\1/')
check "the report read at most 2,300 trial rows of 8,000 (${rows:-none})" \
  [ "${rows:-99999}" -le 2300 ] && [ "${rows:-0}" -ge 2000 ]
got_n=$(curve_page big.html best-by-trial)
want_n=$(sql big.db "SELECT printf('%.2f', value) FROM (SELECT number, value, min(value) OVER
  (ORDER BY number ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev FROM trials
  WHERE sweep_id = 1 AND status = 'ok' AND value IS NOT NULL AND role NOT IN ('baseline',
  'confirm') AND steps_budget >= 50) WHERE prev IS NULL OR value < prev ORDER BY number")
check_eq "its by-number curve is SQL's over every trial" "$(echo $got_n)" "$(echo $want_n)"

# 5. an ok trial deleted by hand (flagtune deletes only whole sweeps): the deleted change
# point hid later trials that no candidate holds; the report reads the sweep's trials instead
first=$(sql kept.db "SELECT t.number FROM report_curve c JOIN trials t ON t.id = c.trial_id
  WHERE c.sweep_id = 1 AND t.steps_budget >= 50 ORDER BY t.value LIMIT 1")
sql kept.db "DELETE FROM steps WHERE trial_id IN (SELECT id FROM trials WHERE sweep_id = 1 AND
  number = $first); DELETE FROM trials WHERE sweep_id = 1 AND number = $first" ||
  die "cannot delete trial $first"
check_eq "the sweep is marked" "$(sql kept.db "SELECT count(*) FROM report_stale")" 1
"$ft" report 1 --db kept.db -o deleted.html || fail "report after a delete"
want_n=$(sql kept.db "SELECT printf('%.2f', value) FROM (SELECT number, value, min(value) OVER
  (ORDER BY number ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev FROM trials
  WHERE sweep_id = 1 AND status = 'ok' AND value IS NOT NULL AND role NOT IN ('baseline',
  'confirm') AND steps_budget >= 50) WHERE prev IS NULL OR value < prev ORDER BY number")
check_eq "after the delete the curve is SQL's over the trials left" \
  "$(echo $(curve_page deleted.html best-by-trial))" "$(echo $want_n)"
finish
