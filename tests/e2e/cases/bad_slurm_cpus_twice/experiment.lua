-- executor.cpus_per_trial and a --cpus-per-task in extra would ask the allocation and the
-- steps for different shares
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  executor = slurm { cpus_per_trial = 4, extra = { "--cpus-per-task=2" } },
}
