-- bad strategy ask later loops
return experiment {
  name = "bad_strategy_ask_later_loops", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c" } },
  strategy = strategy_file("s.lua"),
  budget = { trials = 4 }, seed = 1,
}
