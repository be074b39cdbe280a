-- A real JAX job on one GPU: experiments/jax_transformer.py (a small decoder-only transformer,
-- bf16 matmuls, Adam), searching the flags that matter without collectives: the autotune
-- level, command buffers (CUDA graphs; '' turns them off), Triton GEMM and cuDNN GEMM fusion.
-- No memory fraction (it only moves the OOM risk of a model that fits) and no cuDNN fused
-- attention flag (a no-op in recent XLA). Needs python3 with jax[cuda] and a GPU; the
-- tests only check it (`flagtune check`). On one H200 with jax 0.11.2 its trials took 17-31 s
-- and the best of 7 ran 1.040x faster than XLA's defaults (docs/GPU.md).
return experiment {
  name = "jax-transformer-1gpu",
  model = "jax-transformer-8x1024",
  hardware = "auto",
  command = { "python3", "jax_transformer.py", "--steps", "{steps}", "--batch", "16",
              "--seq", "1024", "--layers", "8" },
  workdir = ".",
  env = { PYTHONUNBUFFERED = "1" },
  metric = { json = "step_time_ms", skip = 3, reduce = "median" },
  -- The codegen preset: triton_gemm_any, command buffers, cuDNN GEMM fusion level, autotune
  -- level 0-4.
  presets = xla.presets.codegen{},
  flags = { xla_gpu_enable_triton_gemm = auto },
  strategy = tpe { startup = 10 },
  budget = { trials = 40, steps = 30, hours = 2 },
  gpus_per_trial = 1,
  timeout = "10m",
}
