-- A real JAX job with no GPU: experiments/jax_cpu_fsdp.py (the FSDP transformer of
-- jax_fsdp.py on 8 host CPU devices: layers under lax.scan, each layer's weights all-gathered
-- inside the scan and its gradients reduce-scattered), searching the XLA CPU flags that move
-- its step time (xla.presets.cpu{}, docs/PRESETS.md; measured in docs/CPU.md). Needs the
-- pinned CPU jax: `bash tests/jax/install.sh` prints its python, which FLAGTUNE_JAX_PYTHON
-- names (else python3 must have jax). `bash tests/demo.sh --jax` runs it end to end;
-- tests/e2e/test_real_cpu_sweep.sh runs a small sweep of it in CI.
local python = os.getenv("FLAGTUNE_JAX_PYTHON") or "python3"
return experiment {
  name = "jax-cpu-fsdp",
  model = "jax-fsdp-4x128-cpu",
  hardware = "8xcpu-host",
  command = { python, "jax_cpu_fsdp.py", "--steps", "{steps}" },
  workdir = ".",
  env = { PYTHONUNBUFFERED = "1", JAX_PLATFORMS = "cpu" },
  -- Step 1 compiles and step 2 still warms up; the loss guards against flags that change the
  -- numbers (fast math) by more than 2 % of the baseline's.
  metric = { json = "step_time_ms", skip = 2, check = { json = "loss", tolerance = 0.02 } },
  fixed_flags = { xla_force_host_platform_device_count = 8 },
  presets = xla.presets.cpu{},
  strategy = random {},
  budget = { trials = 16, steps = 10 },
  software_probe = python .. ' -c "import jax, jaxlib; print(jax.__version__, jaxlib.__version__)"',
  timeout = "5m",
}
