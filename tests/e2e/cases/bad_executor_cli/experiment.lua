-- --executor on the command line takes local or slurm
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
}
