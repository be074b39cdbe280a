-- one trial is only the baseline
return experiment {
  name = "e2e-err_budget_trials",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 1, steps = 20 },
}
