-- bad: the memory preset searches XLA_CLIENT_MEM_FRACTION and the file adds the old name
return experiment {
  name = "bad_mem_fraction_preset", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  presets = { xla.presets.memory{} },
  vars = {
    XLA_PYTHON_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 },
  },
}
