-- A real multi-GPU JAX job: experiments/jax_fsdp.py (a transformer trained with FSDP: layers
-- under lax.scan, every parameter sharded over all GPUs, each layer all-gathered inside the
-- scan in bf16 and its gradient reduce-scattered back), paired with the collectives preset,
-- the traffic it tunes. One layer's weights are 12 x 2048^2 bf16 = 96 MiB, the preset's
-- layer_bytes; 2 Ki tokens per GPU keep a layer's compute and its all-gather of the same order.
-- Needs python3 with jax[cuda] and 1-8 GPUs (set gpus_per_trial to the count; --batch, --dim
-- and --vocab must divide by it); the tests only check it (`flagtune check`) and run the same
-- model on 8 CPU devices (experiments/jax_cpu_fsdp.lua).
return experiment {
  name = "jax-fsdp-8gpu",
  model = "jax-fsdp-transformer-8x2048",
  hardware = "auto",
  command = { "python3", "jax_fsdp.py", "--steps", "{steps}", "--batch", "8", "--seq", "2048",
              "--dim", "2048", "--layers", "8" },
  workdir = ".",
  env = { PYTHONUNBUFFERED = "1" },
  metric = { json = "step_time_ms", skip = 3, reduce = "median" },
  -- The scheduler switch, pipelined AG/RS/AR, double buffering, combine-by-dim and the
  -- combine thresholds (a log2 grid from one layer, up to the JAX-Toolbox guide's 8 GiB);
  -- scheduler = "lhs" for a jaxlib older than 0.7.2 (docs/PRESETS.md).
  presets = { xla.presets.collectives{ layer_bytes = "96MiB" }, xla.presets.nccl{} },
  vars = { XLA_CLIENT_MEM_FRACTION = choice { 0.8, 0.9 } },
  strategy = tpe { startup = 12 },
  budget = { trials = 60, steps = 30, hours = 4 },
  gpus_per_trial = 8,
  timeout = "15m",
}
