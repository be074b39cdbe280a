-- executor.mode is "allocation" or "job"
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  executor = slurm { mode = "array" },
}
