# Sourced by bench_orchestration.sh, bench_syscalls.sh, bench_bridge.sh and bench_switches.sh:
# the per-trial sweep they measure, so that their numbers are of the same sweep. A trivial trial (printf writing 5 JSON step
# lines), random{} over one wide flag, no software probe.
#   exp NAME TRIALS PARALLEL   writes NAME.lua in the current directory
line='{"step_time_ms": 1.5}'
five="$line\n$line\n$line\n$line\n$line\n"
exp() {
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1",
  command = { "/usr/bin/printf", '$five' },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 100000000) },
  budget = { trials = $2 }, parallel = $3, seed = 1, software_probe = false,
}
LUA
}
