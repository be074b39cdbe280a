-- a deprecated flag is accepted with the catalog's text as a warning
return experiment {
  name = "e2e-xla_deprecated_warning",
  hardware = "test",
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_enable_pipelined_collectives = bool() },
}
