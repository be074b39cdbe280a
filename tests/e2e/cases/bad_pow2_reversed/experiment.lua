-- bad pow2 reversed
return experiment {
  name = "bad_pow2_reversed", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_all_gather_combine_threshold_bytes = pow2("8GiB", "1MiB") },
}
