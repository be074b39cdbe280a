-- a jax variable older jax releases lack: compared with the probed jax version
return experiment {
  name = "e2e-env_release_warning",
  hardware = "test",
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  software_probe = "echo 0.5.0 0.5.0",
  vars = { JAX_OPTIMIZATION_LEVEL = choice { "UNKNOWN", "O1" } },
}
