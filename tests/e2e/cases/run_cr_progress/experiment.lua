-- tqdm-style progress: step times separated by '\r' only; each is a step of its own
return experiment {
  name = "run_cr_progress", model = "m", hardware = "h",
  command = { "printf", "step 1: 10.5 ms\\rstep 2: 10.0 ms\\rstep 3: 9.5 ms\\r\\nstep 4: 9.0 ms\\n" },
  metric = { pattern = "step %d+: ([%d.]+) ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 },
}
