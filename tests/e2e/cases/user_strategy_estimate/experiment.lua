-- a user strategy's estimate() steers the confirmation: its model says "b" and "d" are a
-- million times faster than the rest (with a small error). Of the 5 searched, "e" measured
-- fastest and "b" 4th: "b" is re-measured and wins; "d" measured slowest, outside the 4 per
-- candidate the model is asked about (confirm_pool), so it is not. V changes nothing in the
-- simulator, so "b" is not confirmed faster than the baseline, which is the answer
-- (confirm_guard): the model steers what is re-measured, never what is reported.
return experiment {
  name = "user_strategy_estimate", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d", "e", "f" } },
  strategy = strategy_file("s.lua"),
  confirm = { top = 1, repeats = 1 },
  budget = { trials = 8 }, seed = 1,
}
