-- XLA reads XLA_FLAGS (and a flagfile) split at whitespace: a line break would make two items
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
  },
  fixed_flags = {
    xla_gpu_autotune_level = "4\n--xla_dump_to=/tmp/x",
  },
}
