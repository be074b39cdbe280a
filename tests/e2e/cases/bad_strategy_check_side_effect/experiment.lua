return experiment {
  hardware = "h",
  command = { "sh", "-c", "true" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
  strategy = strategy_file("s.lua"),
}
