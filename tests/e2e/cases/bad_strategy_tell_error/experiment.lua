-- bad strategy tell error
return experiment {
  name = "bad_strategy_tell_error", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c" } },
  strategy = strategy_file("s.lua"),
  budget = { trials = 3 }, seed = 1,
}
