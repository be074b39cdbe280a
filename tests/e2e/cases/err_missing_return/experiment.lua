-- the experiment is built but not returned
experiment {
  name = "e2e-err_missing_return",
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
