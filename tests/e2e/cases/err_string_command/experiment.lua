-- a shell string instead of an argv array
return experiment {
  name = "e2e-err_string_command",
  command = "python3 train.py --steps 20",
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
