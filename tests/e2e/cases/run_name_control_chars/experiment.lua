-- a name with a terminal escape and a byte that is not UTF-8: printed escaped, stored as is
return experiment {
  name = "evil\27[2J\255", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 },
}
