-- Two searched flags whose longest values make an XLA_FLAGS over Linux's MAX_ARG_STRLEN
-- (131,072 bytes for one environment string): every trial would fail with "argument list too
-- long", so check refuses it
return experiment {
  command = { "true" },
  metric = { json = "ms" },
  flags = {
    xla_dump_to = choice { "/tmp/a", string.rep("x", 70000) },
    xla_gpu_dump_autotune_results_to = choice { string.rep("y", 70000) },
  },
}
