-- an environment variable among the XLA flags
return experiment {
  name = "e2e-err_env_in_flags",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    NCCL_PROTO = choice { "LL,LL128,SIMPLE", "SIMPLE" },
  },
  budget = { trials = 10, steps = 20 },
}
