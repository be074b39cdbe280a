#!/usr/bin/env bash
# Read-path cost benchmark (not run by CI: it measures, it does not gate). Builds (or reuses)
# a 100,000-trial database with tests/bench/gen_big_db.py, then times every read command:
# median wall time and median CPU time (user + system, of the command and its children) of
# RUNS runs each, next to the floors: /bin/true and `flagtune --version` (the same binary
# doing nothing). Also prints the peak RSS of each command and the EXPLAIN QUERY PLAN of the
# statements behind sweeps, show and best. With OTHER_BUILD, that build's flagtune (a
# "before") runs each command too, alternating with BUILD's run by run, in the same minutes;
# both must read the database's schema without migrating it.
# Usage: bench_reads.sh [BUILD_DIR] [DB] [OTHER_BUILD] [OTHER_DB]   (env: RUNS=7,
# CASES=report,compare for only the cases whose names start so; the DB is kept). OTHER_DB: the
# database OTHER_BUILD reads (default DB), for a before whose schema is older than DB's (a
# read-only command refuses a newer schema, and cannot migrate an older one): a copy of DB
# before the migration.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
db=${2:-${TMPDIR:-/tmp}/flagtune-bench-100k.db}
other=${3:-}
other_db=${4:-$db}
ft=$build/flagtune
ft2=${other:+$other/flagtune}
[ -f "$db" ] || nice python3 "$root/tests/bench/gen_big_db.py" "$ft" "$db"
RUNS=${RUNS:-7}
CASES=${CASES:-} python3 - "$ft" "$db" "$RUNS" "$ft2" "$other_db" <<'PY'
import os, resource, statistics, subprocess, sys, time
ft, db0, runs, ft2, other_db = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def one(argv):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)  # this command's own rusage (and its children's)
    return (time.perf_counter() - t0) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, status
def peak(argv):
    # peak RSS from one more run under GNU time: wait4's ru_maxrss counts the forked python's
    # own image (14 MiB here) before the exec
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True).stderr.strip().splitlines()
    return int(out[-1]) if out and out[-1].isdigit() else 0
def measure(argvs):
    # each run: every build's command once, in turn (a pair when there are two)
    got = [([], [], 0) for _ in argvs]
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            w, c, status = one(argv)
            got[i][0].append(w)
            got[i][1].append(c)
            got[i] = (got[i][0], got[i][1], status)
    return [(statistics.median(w), statistics.median(c), os.waitstatus_to_exitcode(s), peak(a))
            for (w, c, s), a in zip(got, argvs)]
def cases_of(ft):
    db = other_db if ft == ft2 else db0
    return [
    ("/bin/true", ["/bin/true"]),
    ("flagtune --version", [ft, "--version"]),
    ("sweeps", [ft, "sweeps", "--db", db]),
    ("sweeps --json", [ft, "sweeps", "--db", db, "--json"]),
    ("best", [ft, "best", "--db", db]),
    ("show 1 (60k trials)", [ft, "show", "1", "--db", db]),
    ("show 1 --json", [ft, "show", "1", "--db", db, "--json"]),
    ("export 1", [ft, "export", "1", "--db", db]),
    ("export --model model1", [ft, "export", "--model", "model1", "--db", db]),
    ("show 3 (2k trials)", [ft, "show", "3", "--db", db]),
    ("show 2 (20k-step best and baseline)", [ft, "show", "2", "--db", db]),
    ("export 2 (20k-step interval)", [ft, "export", "2", "--db", db]),
    ("query count(*) steps", [ft, "query", "SELECT count(*) FROM steps", "--db", db]),
    ("show 1 --all", [ft, "show", "1", "--all", "--db", db]),
    ("show 1 --all --json", [ft, "show", "1", "--all", "--json", "--db", db]),
    # the page to stdout (DEVNULL here): -o /dev/null would rename its .tmp over /dev/null
    # report's floor: the process, the database opened, the sweep's listing (show reads the
    # same, and its 50-row page). Since schema 13 a report reads no pass over the sweep's rows.
    ("report floor: show 1", [ft, "show", "1", "--db", db]),
    ("report 1 (60k trials)", [ft, "report", "1", "--db", db]),
    ("report 2 (20k-step best and baseline)", [ft, "report", "2", "--db", db]),
    ("report 3 (2k trials)", [ft, "report", "3", "--db", db]),
    ("compare 1 3", [ft, "compare", "1", "3", "--db", db]),
    ("compare 2 3", [ft, "compare", "2", "3", "--db", db]),
    ]
# CASES=report,compare runs only the cases whose name starts with one of those ("report 3"
# names one; the floors always run); every case by default.
only = [w for w in os.environ.get("CASES", "").split(",") if w]
builds = [ft] + ([ft2] if ft2 else [])
if ft2:
    print("Medians of %d runs; each run: the other build's command, then this build's." % runs)
    print()
    print("| command | before: wall ms | before: CPU ms | after: wall ms | after: CPU ms | "
          "after: exit | before: peak RSS MiB | after: peak RSS MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
else:
    print("| command | wall ms (median of %d) | CPU ms | exit | peak RSS MiB |" % runs)
    print("| --- | ---: | ---: | ---: | ---: |")
per_build = [[c for c in cases_of(b) if not only or c[0].startswith(("/bin/true", "flagtune --"))
              or c[0].startswith(tuple(only))] for b in builds]
for k, (name, argv) in enumerate(per_build[0]):
    argvs = [argv] + [cases[k][1] for cases in per_build[1:]]
    r = measure(argvs)
    if ft2:
        (w, c, rc, rss), (w2, c2, _, rss2) = r
        print("| `%s` | %.1f | %.1f | %.1f | %.1f | %d | %.1f | %.1f |"
              % (name, w2, c2, w, c, rc, rss2 / 1024, rss / 1024))
    else:
        w, c, rc, rss = r[0]
        print("| `%s` | %.1f | %.1f | %d | %.1f |" % (name, w, c, rc, rss / 1024))
PY
echo
for q in "SELECT * FROM sweep_summary ORDER BY id" "SELECT * FROM best" \
         "SELECT * FROM trial_results WHERE sweep_id = 1 AND status = 'ok' ORDER BY value, number LIMIT 50" \
         "SELECT count(*) FROM trials WHERE sweep_id = 1 AND error LIKE '%flagtune: trial log %'" \
         "SELECT ms FROM steps WHERE trial_id = 1 ORDER BY step" \
         "SELECT config FROM trials WHERE sweep_id = 1 AND status = 'ok' AND value IS NOT NULL AND role NOT IN ('baseline', 'confirm', 'minimize') AND (0 <= 0 OR coalesce(steps_budget, 0) <= 0 OR steps_budget >= 0) ORDER BY value, number" \
         "SELECT DISTINCT config FROM trials WHERE sweep_id = 1 AND role = 'confirm'" \
         "SELECT length(config) FROM trials WHERE sweep_id = 1 AND status = 'ok' AND value > 0 AND (0 <= 0 OR coalesce(steps_budget, 0) <= 0 OR steps_budget >= 0) GROUP BY 1 HAVING count(*) > 1" \
         "SELECT id, number, role, status, config, value, steps_budget, started_at, finished_at FROM trials WHERE sweep_id = 1 ORDER BY number" \
         "SELECT id, number, role, status, value, steps_budget, label, config, xla_flags, tpu_args, env FROM trials WHERE id = 1" \
         "SELECT max_budget, first_start FROM report_span WHERE sweep_id = 1" \
         "SELECT last_number, budget, last_finish FROM report_tail WHERE sweep_id = 1" \
         "SELECT t.id, t.number, t.role, t.status, t.value, t.steps_budget, t.finished_at FROM report_curve c JOIN trials t ON t.id = c.trial_id WHERE c.sweep_id = 1 AND t.status = 'ok' AND t.value IS NOT NULL ORDER BY t.number" \
         "SELECT id, number, config, value, steps_budget FROM trials WHERE sweep_id = 1 AND status = 'ok' AND value IS NOT NULL AND config <> '{}' AND config NOT IN (SELECT config FROM report_repeats WHERE sweep_id = 1) ORDER BY value, number" \
         "SELECT id, number, config, value, steps_budget FROM trials WHERE sweep_id = 1 AND status = 'ok' AND config IN (SELECT config FROM report_repeats WHERE sweep_id = 1 AND best <= 370 UNION ALL SELECT '{}') ORDER BY config, number" \
         "SELECT max(number) FROM trials WHERE sweep_id = 1" \
         "SELECT id, number, role, status, config, value, steps_budget FROM trials WHERE sweep_id = 1 AND number >= 600 AND number < 620 ORDER BY number"; do
  echo "EXPLAIN QUERY PLAN $q"
  sqlite3 "$db" "EXPLAIN QUERY PLAN $q"
  echo
done
