-- a misspelt key inside metric
return experiment {
  name = "e2e-err_metric_unknown_key",
  command = { "./bench" },
  metric = {
    json = "step_time_ms",
    reduse = "median",
  },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
