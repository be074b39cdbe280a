-- TPU (libtpu) flags go to LIBTPU_INIT_ARGS by the catalog's backend, not by name prefix:
-- xla_latency_hiding_scheduler_rerun has no xla_tpu_ prefix. The simulator refuses TPU flags
-- in XLA_FLAGS, so a wrong routing ends every trial as invalid.
return experiment {
  name = "e2e-xla_tpu_routing",
  hardware = "sim",
  command = { os.getenv("FLAGTUNE_SIM"), "--landscape", "single", "--steps", "4" },
  metric = { json = "step_time_ms", skip = 1 },
  fixed_flags = { xla_latency_hiding_scheduler_rerun = 5, xla_tpu_enable_async_all_to_all = true },
  flags = { xla_gpu_triton_gemm_any = choice { true } },
  strategy = grid {},
  budget = { trials = 2 },
}
