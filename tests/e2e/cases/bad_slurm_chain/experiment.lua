-- executor.chain is true or false: a string would read as true in Lua
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  executor = slurm { time = "10:00:00", chain = "yes" },
}
