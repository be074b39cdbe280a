-- bad choice empty
return experiment {
  name = "bad_choice_empty", model = "m", hardware = "h",
  command = { os.getenv("FLAGTUNE_SIM"), "--steps", "5", "--time-scale", "0" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice {} },
}
