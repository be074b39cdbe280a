-- auto needs candidates in the catalog
return experiment {
  name = "e2e-xla_auto_no_candidates",
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_max_solutions = auto },
}
