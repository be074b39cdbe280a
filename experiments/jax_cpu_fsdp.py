#!/usr/bin/env python3
"""The FSDP transformer of experiments/jax_fsdp.py on 8 host CPU devices, sized for a trial of a
few seconds on a small machine, for experiments/jax_cpu_fsdp.lua and tests/e2e/test_real_cpu_sweep.sh.

The model, sharding and output are jax_fsdp.py's (layers under lax.scan, each layer's weights
all-gathered inside the scan, gradients reduce-scattered; one JSON line per step with
step_time_ms and loss). Only the platform and the sizes differ: JAX_PLATFORMS=cpu, 8 devices
(--xla_force_host_platform_device_count=8 appended to XLA_FLAGS unless XLA_FLAGS already sets a
count), float32 matmuls (bf16 dots are emulated on most CPUs), 4 layers of dim 128 over 16
sequences of 64 tokens. XLA's CPU collectives are real: each device runs on its own thread and
the all-gathers and reduce-scatters exchange the shards in memory.
  python3 jax_cpu_fsdp.py --steps 8 --hlo
"""
import os
import sys

DEVICES = 8
if "JAX_PLATFORMS" not in os.environ:
    os.environ["JAX_PLATFORMS"] = "cpu"
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_force_host_platform_device_count={DEVICES}").strip()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_fsdp  # noqa: E402  (after the environment: jax reads it when its backend starts)

CPU_DEFAULTS = dict(jax_fsdp.DEFAULTS, steps=8, batch=16, seq=64, layers=4, dim=128, heads=4,
                    vocab=512, dtype="float32", lr=1e-3)

if __name__ == "__main__":
    jax_fsdp.main(CPU_DEFAULTS, name="jax_cpu_fsdp.py")
