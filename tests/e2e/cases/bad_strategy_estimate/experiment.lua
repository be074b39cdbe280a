-- a user strategy whose estimate() answers malformed: the sweep fails at the confirmation
-- with the protocol's message; every search trial is kept, no confirmation runs
return experiment {
  name = "bad_strategy_estimate", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d", "e", "f" } },
  strategy = strategy_file("s.lua"),
  confirm = { top = 1, repeats = 1 },
  budget = { trials = 8 }, seed = 1,
}
