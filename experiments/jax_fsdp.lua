-- A real multi-GPU JAX job: experiments/jax_fsdp.py (an MLP stack trained with FSDP: every
-- parameter sharded over all GPUs, all-gathered per layer for use and its gradient
-- reduce-scattered back), paired with the collectives preset, the traffic it tunes. One layer's
-- weights are 2 x 2048 x 8192 f32 = 128 MiB, the preset's layer_bytes. Needs python3 with
-- jax[cuda] and 1-8 GPUs (set gpus_per_trial to the count; --batch, --dim and --hidden must
-- divide by it); the tests only check it (`flagtune check`). A CPU smoke test of the script:
-- XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu python3 jax_fsdp.py ...
return experiment {
  name = "jax-fsdp-8gpu",
  model = "jax-fsdp-mlp-8x2048",
  hardware = "auto",
  command = { "python3", "jax_fsdp.py", "--steps", "{steps}", "--batch", "64", "--dim", "2048",
              "--hidden", "8192", "--layers", "8" },
  workdir = ".",
  env = { PYTHONUNBUFFERED = "1" },
  metric = { json = "step_time_ms", skip = 3, reduce = "median" },
  -- The scheduler switch, pipelined AG/RS/AR, double buffering, combine-by-dim and the
  -- combine thresholds (a log2 grid from one layer, up to the JAX-Toolbox guide's 8 GiB);
  -- scheduler = "lhs" for a jaxlib older than 0.7.2 (docs/PRESETS.md).
  presets = { xla.presets.collectives{ layer_bytes = "128MiB" }, xla.presets.nccl{} },
  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 } },
  strategy = tpe { startup = 12 },
  budget = { trials = 60, steps = 30, hours = 4 },
  gpus_per_trial = 8,
  timeout = "15m",
}
