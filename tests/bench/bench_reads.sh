#!/usr/bin/env bash
# Read-path cost benchmark (not run by CI: it measures, it does not gate). Builds (or reuses)
# a 100,000-trial database with tests/bench/gen_big_db.py, then times every read command:
# median wall time and median CPU time (user + system, of the command and its children) of
# RUNS runs each, next to the floors: /bin/true and `flagtune --version` (the same binary
# doing nothing). Also prints the peak RSS of each command and the EXPLAIN QUERY PLAN of the
# statements behind sweeps, show and best.
# Usage: bench_reads.sh [BUILD_DIR] [DB]   (env: RUNS=7; the DB is kept for the next run)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
db=${2:-${TMPDIR:-/tmp}/flagtune-bench-100k.db}
ft=$build/flagtune
[ -f "$db" ] || nice python3 "$root/tests/bench/gen_big_db.py" "$ft" "$db"
RUNS=${RUNS:-7}
python3 - "$ft" "$db" "$RUNS" <<'PY'
import os, resource, statistics, subprocess, sys, time
ft, db, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def measure(argv):
    walls, cpus, rss = [], [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)  # this command's own rusage (and its children's)
        walls.append((time.perf_counter() - t0) * 1e3)
        cpus.append((ru.ru_utime + ru.ru_stime) * 1e3)
    # peak RSS from one more run under GNU time: wait4's ru_maxrss counts the forked python's
    # own image (14 MiB here) before the exec
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True).stderr.strip().splitlines()
    rss = int(out[-1]) if out and out[-1].isdigit() else 0
    return statistics.median(walls), statistics.median(cpus), os.waitstatus_to_exitcode(status), rss
cases = [
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
]
print("| command | wall ms (median of %d) | CPU ms | exit | peak RSS MiB |" % runs)
print("| --- | ---: | ---: | ---: | ---: |")
for name, argv in cases:
    w, c, rc, rss = measure(argv)
    print("| `%s` | %.1f | %.1f | %d | %.1f |" % (name, w, c, rc, rss / 1024))
PY
echo
for q in "SELECT * FROM sweep_summary ORDER BY id" "SELECT * FROM best" \
         "SELECT * FROM trial_results WHERE sweep_id = 1 AND status = 'ok' ORDER BY value, number LIMIT 50" \
         "SELECT count(*) FROM trials WHERE sweep_id = 1 AND error LIKE '%flagtune: trial log %'" \
         "SELECT ms FROM steps WHERE trial_id = 1 ORDER BY step"; do
  echo "EXPLAIN QUERY PLAN $q"
  sqlite3 "$db" "EXPLAIN QUERY PLAN $q"
  echo
done
