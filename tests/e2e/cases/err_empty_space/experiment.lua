-- nothing to search
return experiment {
  name = "e2e-err_empty_space",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  budget = { trials = 10, steps = 20 },
}
