-- The demo: tune the collective flags of a simulated 8-GPU FSDP job (flagtune-sim, a
-- stand-in for a JAX training script; see docs/SIMULATOR.md). Runs in well under a minute.
return experiment {
  name = "demo-fsdp8",
  model = "sim-llama-7b",
  hardware = "sim-8xH100",
  command = { os.getenv("FLAGTUNE_SIM") or "flagtune-sim", "--landscape", "fsdp8",
              "--steps", "{steps}" },
  env = { PYTHONUNBUFFERED = "1" },
  metric = { json = "step_time_ms", skip = 2, reduce = "median" },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_enable_pipelined_all_gather = bool(),
    xla_gpu_enable_pipelined_reduce_scatter = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "8GiB"),
    xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("64MiB", "8GiB"),
  },
  vars = {
    XLA_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05),
    CUDA_DEVICE_MAX_CONNECTIONS = choice { "1", "8" },
  },
  strategy = random {},
  budget = { trials = 30, steps = 20 },
  parallel = 2,
  timeout = "2m",
}
