#!/usr/bin/env bash
# Memory of a long sweep (not run by CI; docs/COST.md "Memory"): peak RSS and the growth per
# trial, split into where it lives. flagtune runs one sweep of TRIALS trivial trials (`printf`
# of 5 JSON step lines) over a 14-parameter space (8 bools, a choice of 3, int(0, 4),
# int(50, 100), three int(0, 4096)) with STRATEGY, while
#   - /proc/PID/status is sampled every 0.2 s from outside (VmRSS, VmHWM: the process alone,
#     not its trials), and
#   - flagtune itself writes one line per finished trial (FLAGTUNE_MEMLOG): the bytes its Lua
#     state holds (live and uncollected), SQLite's, the C heap's in use (malloc: Lua's and
#     SQLite's included) and its RSS.
# It prints the samples at 10/25/50/75/100 % of the trials and each column's slope in bytes
# per trial over the middle of the run (25 % to 90 % of the trials: past the start-up, before
# the confirmation), by a least-squares line.
# Usage: bench_memory.sh [BUILD_DIR]   (env: STRATEGY=random TRIALS=10000 PARALLEL=1
#        KEEP=DIR keeps the database and the logs there)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ft=$build/flagtune
STRATEGY=${STRATEGY:-random} TRIALS=${TRIALS:-10000} PARALLEL=${PARALLEL:-1}
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  work=$(cd "$KEEP" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"
rm -rf mem.db* logs memlog.txt proc.txt
export FLAGTUNE_LOG_DIR="$work/logs"
line='{"step_time_ms": 1.5}'
five="$line\n$line\n$line\n$line\n$line\n"
cat > mem.lua <<LUA
return experiment {
  name = "mem", hardware = "bench",
  command = { "/usr/bin/printf", '$five' },
  metric = { json = "step_time_ms" },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_enable_highest_priority_async_stream = bool(),
    xla_gpu_enable_pipelined_all_gather = bool(),
    xla_gpu_enable_pipelined_all_reduce = bool(),
    xla_gpu_enable_pipelined_reduce_scatter = bool(),
    xla_gpu_enable_while_loop_double_buffering = bool(),
    xla_gpu_enable_triton_gemm = bool(),
    xla_gpu_enable_nccl_comm_splitting = bool(),
    xla_gpu_autotune_level = int(0, 4),
  },
  vars = {
    BENCH_CHOICE = choice { "a", "b", "c" },
    BENCH_PERCENT = int(50, 100),
    BENCH_A = int(0, 4096), BENCH_B = int(0, 4096), BENCH_C = int(0, 4096),
  },
  strategy = $STRATEGY {},
  budget = { trials = $TRIALS }, parallel = $PARALLEL, seed = 1, software_probe = false,
}
LUA
"$ft" -q check mem.lua
FLAGTUNE_MEMLOG="$work/memlog.txt" "$ft" -q run mem.lua --db mem.db > /dev/null 2> run.err &
pid=$!
python3 - "$pid" > proc.txt <<'PY'
import os, sys, time
pid = int(sys.argv[1])
t0 = time.time()
while True:
    try:
        with open("/proc/%d/status" % pid) as f:
            v = dict(l.split(":", 1) for l in f if l.startswith(("VmRSS", "VmHWM", "State")))
        if v["State"].split()[0] == "Z": break
        print("%.1f %s %s" % (time.time() - t0, v["VmRSS"].split()[0], v["VmHWM"].split()[0]),
              flush=True)
    except (OSError, KeyError):
        break
    time.sleep(0.2)
PY
rc=0; wait "$pid" || rc=$?
echo "## $STRATEGY{}, $TRIALS trials, parallel $PARALLEL: exit $rc"
[ "$rc" = 0 ] || { cat run.err; exit 1; }
python3 - memlog.txt proc.txt <<'PY'
import sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]).readlines()[1:]]
proc = [l.split() for l in open(sys.argv[2])]
hwm = max(int(p[2]) for p in proc) if proc else 0
n = rows[-1][0]
print("peak RSS (VmHWM, sampled from /proc): %.1f MiB" % (hwm / 1024))
print()
print("| trials | Lua heap MiB | SQLite MiB | C heap in use MiB | RSS MiB |")
print("| ---: | ---: | ---: | ---: | ---: |")
for frac in (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0):
    r = next(r for r in rows if r[0] >= max(1, int(frac * n)))
    print("| %d | %.2f | %.2f | %.2f | %.2f |" % (r[0], r[1] / 2**20, r[2] / 2**20, r[3] / 2**20,
                                                r[4] / 1024))
mid = [r for r in rows if 0.25 * n <= r[0] <= 0.9 * n]
def slope(col, scale=1):
    xs = [r[0] for r in mid]; ys = [r[col] * scale for r in mid]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
print()
print("growth per trial, %d to %d trials (bytes): Lua %.0f, SQLite %.0f, C heap %.0f "
      "(of which outside Lua and SQLite %.0f), RSS %.0f" % (
          mid[0][0], mid[-1][0], slope(1), slope(2), slope(3),
          slope(3) - slope(1) - slope(2), slope(4, 1024)))
PY
