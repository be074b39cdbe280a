-- a flag newer than the installed jaxlib (the probe's answer) is a warning, by version
return experiment {
  name = "e2e-xla_release_warning",
  hardware = "test",
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  software_probe = "echo 0.11.0 0.11.0",
  fixed_flags = { xla_gpu_pipeline_all_gather = "on" },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
}
