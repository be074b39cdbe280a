-- executor.srun cannot set what flagtune sets for every step
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  executor = slurm { srun = { "--gpu-bind=closest", "--ntasks=4" } },
}
