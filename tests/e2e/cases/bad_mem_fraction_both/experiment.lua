-- bad: both memory fractions (jaxlib >= 0.4.32 raises ValueError on the pair)
return experiment {
  name = "bad_mem_fraction_both", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 } },
  env = { XLA_PYTHON_CLIENT_MEM_FRACTION = "0.75" },
}
