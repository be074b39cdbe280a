-- The collectives and NCCL presets on the simulated 8-GPU FSDP job (flagtune-sim, see
-- docs/SIMULATOR.md): the JAX-Toolbox GPU performance guide's FSDP flags with combine thresholds on a log2 grid around one
-- Llama-2-7B layer (436MB in bf16), plus NCCL protocol, NVLS and user buffers. The simulator
-- models a jaxlib before 0.7.2, where the latency hiding scheduler runs only when its own flag
-- says so: hence scheduler = "lhs", and before 0.11.0's pipelining modes: hence
-- legacy_pipelining. Swap the command for your training script to use it for real, and drop
-- those options on a recent jaxlib with Hopper or Blackwell GPUs (docs/PRESETS.md). User
-- buffers are searched with the pool they are registered in (collective_mem_mb).
return experiment {
  name = "collectives-preset",
  model = "sim-llama-7b",
  hardware = "sim-8xH100",
  command = { os.getenv("FLAGTUNE_SIM") or "flagtune-sim", "--landscape", "fsdp8",
              "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  presets = { xla.presets.collectives{ layer_bytes = "436MB", scheduler = "lhs",
                                        legacy_pipelining = true },
              xla.presets.nccl{ collective_mem_mb = { 1024, 4096 } } },
  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.75, 0.85, 0.9 } },
  strategy = random {},
  budget = { trials = 12, steps = 12 },
  parallel = 2,
  timeout = "2m",
}
