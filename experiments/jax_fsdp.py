#!/usr/bin/env python3
"""A small FSDP (fully sharded data parallel) MLP stack in plain jax, trained with Adam on every
visible device, for tuning the collective flags with experiments/jax_fsdp.lua.

Each device holds 1/N of every parameter and of every batch (one mesh axis, "fsdp"). Inside the
step (shard_map) each layer's weights are all-gathered just before use, and the gradients are
reduce-scattered back to the shards (psum_scatter), which is the traffic the collectives preset
tunes: combine thresholds, pipelined all-gather / reduce-scatter, the scheduler.

Prints one JSON line per step: {"step": i, "step_time_ms": x, "loss": y}, as
experiments/jax_transformer.py does (time.perf_counter around the jitted step and
block_until_ready; step 1 includes compilation: skip it). Runs on 1-8 GPUs; for a CPU smoke test:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu \
    python3 jax_fsdp.py --steps 3 --dim 256 --hidden 512 --batch 32
"""
import argparse
import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

try:  # jax >= 0.6 exports it at the top level; older ones only as experimental
    shard_map = jax.shard_map
except AttributeError:
    from jax.experimental.shard_map import shard_map

AXIS = "fsdp"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=64, help="global batch, split over devices")
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--hidden", type=int, default=8192)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def matmul(x, w):
    """bf16 inputs, f32 accumulation (the tensor-core path)."""
    return jnp.matmul(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16),
                      preferred_element_type=jnp.float32)


def init_params(key, a):
    """Full (unsharded) parameters; every leading dimension divides by the device count."""
    keys = jax.random.split(key, 2 * a.layers)
    layers = []
    for i in range(a.layers):
        layers.append({
            "up": jax.random.normal(keys[2 * i], (a.dim, a.hidden)) / np.sqrt(a.dim),
            "down": jax.random.normal(keys[2 * i + 1], (a.hidden, a.dim)) / np.sqrt(a.hidden)})
    return {"layers": layers}


def forward(full, x):
    for layer in full["layers"]:
        x = x + matmul(jax.nn.gelu(matmul(x, layer["up"])), layer["down"]) / len(full["layers"])
    return x


def local_loss(full, x, y):
    """Mean squared error of this device's batch shard, with the gathered (full) weights."""
    return jnp.mean((forward(full, x) - y) ** 2)


def make_step(mesh, n, lr, b1=0.9, b2=0.95, eps=1e-8):
    """One Adam step over the shards, jitted. Opt state (m, v, t) is sharded like the params."""
    def local_step(shards, opt, x, y):
        # All-gather each parameter for use (tiled: the shards concatenate along axis 0).
        full = jax.tree_util.tree_map(
            lambda s: jax.lax.all_gather(s, AXIS, axis=0, tiled=True), shards)
        loss, g_full = jax.value_and_grad(local_loss)(full, x, y)
        # Reduce-scatter the gradients back to the shards; / n: the mean over the global batch.
        grads = jax.tree_util.tree_map(
            lambda g: jax.lax.psum_scatter(g, AXIS, scatter_dimension=0, tiled=True) / n, g_full)
        m, v, t = opt
        t = t + 1
        m = jax.tree_util.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)

        def update(p, m_, v_):
            mhat, vhat = m_ / (1 - b1 ** t), v_ / (1 - b2 ** t)
            return p - lr * mhat / (jnp.sqrt(vhat) + eps)
        shards = jax.tree_util.tree_map(update, shards, m, v)
        return shards, (m, v, t), jax.lax.pmean(loss, AXIS)

    sharded = P(AXIS)
    fn = shard_map(local_step, mesh=mesh,
                   in_specs=(sharded, (sharded, sharded, P()), sharded, sharded),
                   out_specs=(sharded, (sharded, sharded, P()), P()))
    return jax.jit(fn, donate_argnums=(0, 1))


def main():
    a = parse_args()
    devices = jax.devices()
    n = len(devices)
    for name, size in (("--batch", a.batch), ("--dim", a.dim), ("--hidden", a.hidden)):
        if size % n:
            sys.exit(f"jax_fsdp.py: {name} {size} does not divide by {n} devices")
    mesh = Mesh(np.array(devices), (AXIS,))
    shard = NamedSharding(mesh, P(AXIS))
    print(f"jax_fsdp.py: {n} devices ({devices[0].platform}), fsdp over all", file=sys.stderr)

    key = jax.random.PRNGKey(a.seed)
    params = jax.device_put(init_params(key, a), shard)
    def zeros():  # a fresh sharded tree each: m and v are donated separately
        return jax.device_put(jax.tree_util.tree_map(jnp.zeros_like, params), shard)
    opt = (zeros(), zeros(), jax.device_put(jnp.zeros((), jnp.float32), NamedSharding(mesh, P())))
    teacher = init_params(jax.random.fold_in(key, 10**6), a)  # the function to learn
    step = make_step(mesh, n, a.lr)
    for i in range(1, a.steps + 1):
        x = jax.random.normal(jax.random.fold_in(key, i), (a.batch, a.dim))
        y = forward(teacher, x)
        x, y = jax.device_put(x, shard), jax.device_put(y, shard)
        y.block_until_ready()
        t0 = time.perf_counter()
        params, opt, loss = step(params, opt, x, y)
        loss.block_until_ready()
        ms = (time.perf_counter() - t0) * 1000.0
        print(json.dumps({"step": i, "step_time_ms": round(ms, 3), "loss": round(float(loss), 6)}),
              flush=True)


if __name__ == "__main__":
    main()
