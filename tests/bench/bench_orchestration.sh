#!/usr/bin/env bash
# Orchestration cost benchmark (not run by CI: it measures, it does not gate).
#  1. trials per second on a trivial command (/bin/echo printing one step), parallel 1 and 2,
#     against a bare fork+exec loop of the same command in the same run (the ratio is the result);
#  2. peak resident memory of flagtune while one trial prints 1 GiB of output.
# Usage: bench_orchestration.sh [BUILD_DIR]   (default: build/)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
ft=$build/flagtune
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FLAGTUNE_LOG_DIR="$work/logs"
N=${N:-400}

cat > trivial.lua <<LUA
return experiment {
  name = "trivial",
  command = { "/bin/echo", '{"step_time_ms": 1.5}' },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 1000000) },
  budget = { trials = $N },
  seed = 1,
}
LUA

now() { date +%s.%N; }
bare_start=$(now)
for _ in $(seq "$N"); do /bin/echo '{"step_time_ms": 1.5}' > /dev/null; done
bare_end=$(now)
bare=$(echo "$bare_end - $bare_start" | bc -l)
printf 'bare fork+exec loop (bash): %d spawns in %.2f s = %.1f /s\n' "$N" "$bare" "$(echo "$N / $bare" | bc -l)"

for par in 1 2; do
  rm -f b.db*
  s=$(now)
  "$ft" -q run trivial.lua --db b.db --parallel "$par" > /dev/null
  e=$(now)
  t=$(echo "$e - $s" | bc -l)
  ok=$(sqlite3 b.db "SELECT count(*) FROM trials WHERE status='ok'")
  printf 'flagtune parallel %d: %d trials (%d ok) in %.2f s = %.1f trials/s (%.2f ms each; bare spawn %.2f ms)\n' \
    "$par" "$N" "$ok" "$t" "$(echo "$N / $t" | bc -l)" "$(echo "1000 * $t / $N" | bc -l)" \
    "$(echo "1000 * $bare / $N" | bc -l)"
done

cat > flood.lua <<'LUA'
return experiment {
  name = "flood",
  command = { "sh", "-c",
    "yes 'step line of output that is not a metric, printed again and again by a noisy trial' | head -c 1073741824; echo; echo '{\"step_time_ms\": 2}'" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 4) },
  budget = { trials = 2 },
  timeout = "10m",
  seed = 1,
}
LUA
rm -f f.db*
python3 - "$ft" <<'PY'
import resource, subprocess, sys, time
t = time.time()
subprocess.run([sys.argv[1], "-q", "run", "flood.lua", "--db", "f.db"], stdout=subprocess.DEVNULL)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"flood: 2 trials printing 1 GiB each in {time.time() - t:.1f} s; peak RSS of flagtune "
      f"(largest process waited for) {peak / 1024:.1f} MiB")
PY
printf 'flood: log sizes kept: %s\n' "$(du -sh logs | cut -f1)"
sqlite3 f.db "SELECT number, status, n_steps FROM trials"
