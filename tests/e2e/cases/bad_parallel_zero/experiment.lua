-- bad parallel zero
return experiment {
  name = "bad_parallel_zero", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d" } },
  parallel = 0,
}
