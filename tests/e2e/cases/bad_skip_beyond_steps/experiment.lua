-- skip leaves no step of a 5-step trial: no trial could ever end ok
return experiment {
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 5 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  budget = { trials = 4, steps = 5 },
}
