-- a pattern metric must capture the step time
return experiment {
  name = "e2e-err_pattern_no_capture",
  command = { "./bench" },
  metric = { pattern = "step %d+: [%d.]+ ms", skip = 1 },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
