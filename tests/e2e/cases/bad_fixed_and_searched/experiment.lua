-- bad fixed and searched
return experiment {
  name = "bad_fixed_and_searched", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  fixed_flags = { xla_gpu_enable_latency_hiding_scheduler = true },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
}
