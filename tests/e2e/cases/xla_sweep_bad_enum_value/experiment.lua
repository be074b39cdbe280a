-- a command-buffer type this jaxlib lacks (CONVOLUTION, added in later XLAs): XLA's setter
-- refuses it, naming the piece ("Illegal value for --xla_gpu_enable_command_buffer 'X'", the
-- reason stored), and the QCHECK dies with "Flag parsing failed." (parse_flags_from_env.cc:220,
-- as jaxlib 0.12.0.1 prints both: tests/e2e/test_real_xla.sh); the trial is invalid, never
-- retried, never a crash
return experiment {
  name = "xla_sweep_bad_enum_value", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_command_buffer = choice { "FUSION,CONVOLUTION" } },
  strategy = grid {}, budget = { trials = 2 }, seed = 1,
}
