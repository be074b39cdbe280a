-- bad budget hours word
return experiment {
  name = "bad_budget_hours_word", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d" } },
  budget = { trials = 5, hours = "forever" },
}
