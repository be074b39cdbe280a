-- an XLA flag among the environment variables
return experiment {
  name = "e2e-err_flag_in_vars",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  vars = {
    XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.70, 0.95, 0.05),
    xla_gpu_enable_latency_hiding_scheduler = bool(),
  },
  budget = { trials = 10, steps = 20 },
}
