-- bad budget fractional trials
return experiment {
  name = "bad_budget_fractional_trials", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d" } },
  budget = { trials = 2.5 },
}
