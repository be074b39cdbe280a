-- bad strategy ask memory
return experiment {
  name = "bad_strategy_ask_memory", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d" } },
  strategy = strategy_file("s.lua"),
}
