#!/usr/bin/env bash
# `show SWEEP --all` against sqlite3 printing the same columns of the same rows, paired: in each
# pair both run in turn (the order alternating), so a loaded machine slows both alike; prints
# each side's median and the median of the per-pair ratios. Bench only (timings never gate CI).
# usage: bench_show_all.sh FLAGTUNE DB [PAIRS (7)] [SWEEP (1)]
#   DB: python3 tests/bench/gen_big_db.py FLAGTUNE DB (sweep 1 holds 60,000 trials; --big 100000
#   for a 100,000-trial sweep)
set -euo pipefail
ft=${1:?usage: bench_show_all.sh FLAGTUNE DB [PAIRS] [SWEEP]}
db=${2:?usage: bench_show_all.sh FLAGTUNE DB [PAIRS] [SWEEP]}
pairs=${3:-7}
sweep=${4:-1}
command -v sqlite3 > /dev/null || { echo "bench_show_all: sqlite3 is needed" >&2; exit 2; }
python3 - "$ft" "$db" "$pairs" "$sweep" <<'PY'
import statistics, subprocess, sys, time
ft, db, pairs, sweep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sql = ("SELECT number, role, status, value, n_steps, duration_s, first_step_ms, label, error "
       "FROM trials WHERE sweep_id = %d ORDER BY number" % sweep)
cases = {"flagtune": [ft, "show", str(sweep), "--all", "--db", db], "sqlite3": ["sqlite3", db, sql]}
def wall(argv):
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t
for argv in cases.values():
    wall(argv)  # warm the page cache
times = {k: [] for k in cases}
for i in range(pairs):
    for k in (list(cases) if i % 2 == 0 else list(reversed(list(cases)))):
        times[k].append(wall(cases[k]))
rows = subprocess.run(["sqlite3", db, "SELECT count(*) FROM trials WHERE sweep_id = %d" % sweep],
                      capture_output=True, text=True, check=True).stdout.strip()
print("show %d --all over %s trials, %d pairs" % (sweep, rows, pairs))
for k, v in times.items():
    print("  %-8s median %.3f s  (%s)" % (k, statistics.median(v), " ".join("%.3f" % x for x in v)))
ratios = [a / b for a, b in zip(times["flagtune"], times["sqlite3"])]
print("  flagtune / sqlite3: median ratio %.2f" % statistics.median(ratios))
PY
