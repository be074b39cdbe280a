-- executor.cpus_per_trial is shared equally by the tasks of a node
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2" } },
  executor = slurm { tasks_per_node = 4, cpus_per_trial = 6 },
}
