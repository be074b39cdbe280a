-- a misspelt key gets a suggestion
return experiment {
  name = "e2e-err_typo_key",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 10, steps = 20 },
  tiemout = "20m",
}
