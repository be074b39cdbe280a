-- bad range reversed
return experiment {
  name = "bad_range_reversed", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.95, 0.75, 0.05) },
}
