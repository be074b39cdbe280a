-- executor = slurm { ... } with a misspelt option: refused at check time with a "did you mean"
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  executor = slurm {
    partition = "gpu",
    gpus_per_trail = 8,
  },
}
