#!/usr/bin/env bash
# The software fingerprint: a sweep records the jax/jaxlib versions its probe prints, `best`
# shows them and warns when this machine's jaxlib differs.
# Usage: test_software.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
set -u
ft=$1 sim=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export FLAGTUNE_DB="$work/t.db" FLAGTUNE_LOG_DIR="$work/logs"
unset XLA_FLAGS
fails=0 passes=0
check() { if eval "$2"; then passes=$((passes + 1)); else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
cat > sw.lua <<LUA
return experiment {
  name = "sw", model = "sim", hardware = "box",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  software_probe = "echo 'jax and jaxlib:'; echo 0.4.30 0.4.31",
  budget = { trials = 3, steps = 6 },
  seed = 1,
}
LUA
"$ft" -q run sw.lua > out.txt 2> err.txt || { cat err.txt; echo "FAIL: run"; exit 1; }
check "software recorded" '[ "$("$ft" query "SELECT software FROM sweeps" | tail -n1)" = "jax 0.4.30, jaxlib 0.4.31" ]'
check "jaxlib recorded" '[ "$("$ft" query "SELECT jaxlib FROM sweeps" | tail -n1)" = "0.4.31" ]'
FLAGTUNE_SOFTWARE_PROBE="echo 0.4.30 0.4.31" "$ft" best > best.txt 2> best.err
check "best shows the versions" 'grep -q "measured with jax 0.4.30, jaxlib 0.4.31" best.txt'
check "same jaxlib: no warning" '! grep -q warning best.err'
FLAGTUNE_SOFTWARE_PROBE="echo 0.5.0 0.5.1" "$ft" best > best.txt 2> best.err
check "other jaxlib: a warning" 'grep -q "measured with jaxlib 0.4.31; this machine has jaxlib 0.5.1" best.err'
sed -i 's/^  software_probe = .*$/  software_probe = false,/' sw.lua
"$ft" -q run sw.lua > out.txt 2> err.txt || { cat err.txt; echo "FAIL: run 2"; exit 1; }
check "probe off: nothing recorded" '[ "$("$ft" query "SELECT count(*) FROM sweeps WHERE software IS NULL" | tail -n1)" = 1 ]'
echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
