-- The collectives and NCCL presets on the simulated 8-GPU FSDP job (flagtune-sim, see
-- docs/SIMULATOR.md): seed 000's FSDP flags with combine thresholds on a log2 grid around one
-- Llama-2-7B layer (436MB in bf16), plus NCCL protocol, NVLS and user buffers. Swap the
-- command for your training script to use it for real.
return experiment {
  name = "collectives-preset",
  model = "sim-llama-7b",
  hardware = "sim-8xH100",
  command = { os.getenv("FLAGTUNE_SIM") or "flagtune-sim", "--landscape", "fsdp8",
              "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  presets = { xla.presets.collectives{ layer_bytes = "436MB" }, xla.presets.nccl{} },
  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.75, 0.85, 0.9 } },
  strategy = random {},
  budget = { trials = 12, steps = 12 },
  parallel = 2,
  timeout = "2m",
}
