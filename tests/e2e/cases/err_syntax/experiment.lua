-- a missing comma
return experiment {
  name = "e2e-err_syntax",
  command = { "python3", "train.py" }
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
