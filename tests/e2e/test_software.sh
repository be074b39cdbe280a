#!/usr/bin/env bash
# The software fingerprint: a sweep records the jax/jaxlib versions its probe prints, `best`
# shows them and warns when this machine's jaxlib differs.
# Usage: test_software.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
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
"$ft" -q run sw.lua > out.txt 2> err.txt || { cat err.txt; die "run"; }
check_eq "software recorded" "$(val "SELECT software FROM sweeps")" "jax 0.4.30, jaxlib 0.4.31"
check_eq "jaxlib recorded" "$(val "SELECT jaxlib FROM sweeps")" "0.4.31"
FLAGTUNE_SOFTWARE_PROBE="echo 0.4.30 0.4.31" "$ft" best > best.txt 2> best.err
check "best shows the versions" grep -q "measured with jax 0.4.30, jaxlib 0.4.31" best.txt
check "same jaxlib: no warning" lacks -q warning best.err
FLAGTUNE_SOFTWARE_PROBE="echo 0.5.0 0.5.1" "$ft" best > best.txt 2> best.err
check "other jaxlib: a warning" grep -q "measured with jaxlib 0.4.31; this machine has jaxlib 0.5.1" best.err
sed -i 's/^  software_probe = .*$/  software_probe = false,/' sw.lua
"$ft" -q run sw.lua > out.txt 2> err.txt || { cat err.txt; die "run 2"; }
check_eq "probe off: nothing recorded" "$(val "SELECT count(*) FROM sweeps WHERE software IS NULL")" 1
# The probe runs once per run, though two places ask (the catalog's release warnings for an
# entry with a jax range, then the sweep's record): it imports jax, which takes seconds.
cat > once.lua <<LUA
return experiment {
  name = "once", model = "sim", hardware = "box",
  command = { "$sim", "--steps", "4", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { JAX_OPTIMIZATION_LEVEL = choice { "O1", "O2" } },
  software_probe = "echo probed >> $work/probes; echo 0.11.0 0.11.0",
  budget = { trials = 2 }, confirm = false, seed = 1,
}
LUA
"$ft" -q run once.lua > /dev/null 2>&1 || die "run once"
check_eq "the software probe ran once" "$(wc -l < "$work/probes")" 1
check_eq "and its answer was recorded" "$(val "SELECT software FROM sweeps WHERE name = 'once'")" \
  "jax 0.11.0, jaxlib 0.11.0"
finish
