-- a rate is not a size
return experiment {
  name = "e2e-err_pow2_unit",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "8GB/s"),
  },
  budget = { trials = 10, steps = 20 },
}
