# A tiny real JAX job for tests/e2e/test_real_xla*.sh: a jitted matmul, one JSON step time per
# line. First it does what the CUDA plugin does first when jax starts its GPU backend
# (jax-ml/jax plugins/cuda/__init__.py, initialize): jaxlib's own parsing of the GPU client's
# variables, xla_client.generate_pjrt_gpu_plugin_options(). No plugin runs on CPU, so without
# this call a CPU jaxlib would never read XLA_CLIENT_MEM_FRACTION or XLA_PYTHON_CLIENT_ALLOCATOR.
# Usage: python3 train.py STEPS [SIZE]
import json
import sys
import time

from jaxlib import xla_client

xla_client.generate_pjrt_gpu_plugin_options()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

steps = int(sys.argv[1])
size = int(sys.argv[2]) if len(sys.argv) > 2 else 64
x = jnp.ones((size, size), jnp.float32)


@jax.jit
def step(a):
    for _ in range(8):
        a = jnp.tanh(a @ a) * 0.5
    return a


for i in range(steps):
    t = time.perf_counter()
    x = step(x)
    x.block_until_ready()
    print(json.dumps({"step": i, "step_time_ms": (time.perf_counter() - t) * 1e3}), flush=True)
