-- {steps} with no step budget
return experiment {
  name = "e2e-err_steps_without_budget",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 10 },
}
