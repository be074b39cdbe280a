-- a misspelt XLA flag is refused with the catalog's closest name
return experiment {
  name = "e2e-xla_typo_flag",
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_latency_hidding_scheduler = bool() },
}
