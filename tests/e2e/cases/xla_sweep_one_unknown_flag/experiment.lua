-- one unknown flag alone: today's XLA says "Unknown flag in XLA_FLAGS: --x=true" (singular,
-- xla/parse_flags_from_env.cc:234, as jaxlib 0.12.0.1 prints it: tests/e2e/test_real_xla.sh)
-- and dies; the trial is invalid, never a crash
return experiment {
  name = "xla_sweep_one_unknown_flag", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  allow_unknown_flags = { "xla_gpu_made_up_flag" },
  flags = { xla_gpu_made_up_flag = choice { true } },
  strategy = grid {}, budget = { trials = 2 }, seed = 1,
}
