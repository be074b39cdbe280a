-- a misspelt strategy
return experiment {
  name = "e2e-err_unknown_strategy",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  strategy = "randon",
  budget = { trials = 10, steps = 20 },
}
