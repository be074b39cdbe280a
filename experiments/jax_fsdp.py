#!/usr/bin/env python3
"""A small decoder-only transformer trained with FSDP in plain jax, for tuning the collective
flags with experiments/jax_fsdp.lua (GPUs) and experiments/jax_cpu_fsdp.lua (8 CPU devices).

Every parameter is sharded over all devices (one mesh axis, "fsdp") and stacked over layers, so
that the layers run under one lax.scan, the shape real FSDP models compile to. Inside the step
(shard_map) the scan's body all-gathers the layer's weights just before use; autodiff turns each
all-gather into a reduce-scatter of the gradients in the backward scan. That per-layer traffic
inside a while loop is what the collectives preset tunes: pipelined all-gather / reduce-scatter
(the collective pipeliner moves them to the previous or next iteration), while-loop double
buffering, combine thresholds, the scheduler. The defaults put 2 Ki tokens per GPU (--batch 8
--seq 2048 over 8) beside 96 MiB of bf16 weights per layer (--dim 2048: 12 d^2 parameters):
a layer's forward is 2 x 2048 x 50 M = 0.21 TFLOP a GPU (about 0.3 ms at 700 TFLOP/s) against
an all-gather of 7/8 of 96 MiB (about 0.25 ms at 360 GB/s of NVLink bus bandwidth), and the
backward twice both; compute and communication are of the same order, so that overlapping
them, and how the collectives are combined and pipelined, can pay.

Prints one JSON line per step: {"step": i, "step_time_ms": x, "loss": y, "cpu_ms": c}, as
experiments/jax_transformer.py does: time.perf_counter around the jitted step and
block_until_ready; step 1 includes compilation: skip it. cpu_ms is the CPU time the process
spent in the step, all threads (on CPU devices: the work itself, whatever else the machine runs). --hlo prints, on stderr, how many
all-gather and reduce-scatter instructions the compiled program holds (a check that the
collectives are really there). Runs on 1-8 GPUs; for a CPU smoke test:
  XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu \
    python3 jax_fsdp.py --steps 3 --dim 128 --layers 2 --seq 64 --batch 16 --vocab 512
"""
import argparse
import json
import re
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
DEFAULTS = dict(steps=50, batch=8, seq=2048, layers=8, dim=2048, heads=16, vocab=32000,
                dtype="bfloat16", lr=3e-4, seed=0)


def parse_args(defaults, argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int)
    p.add_argument("--batch", type=int, help="global batch, split over devices")
    p.add_argument("--seq", type=int)
    p.add_argument("--layers", type=int)
    p.add_argument("--dim", type=int)
    p.add_argument("--heads", type=int)
    p.add_argument("--vocab", type=int)
    p.add_argument("--dtype", choices=("bfloat16", "float32"), help="matmul inputs")
    p.add_argument("--lr", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--hlo", action="store_true",
                   help="print the compiled program's all-gather/reduce-scatter counts on stderr")
    p.set_defaults(**defaults)
    return p.parse_args(argv)


def init_params(seed, a):
    """Full parameters as numpy arrays (no jax program to compile), each layer weight stacked
    over a leading layer axis."""
    rng = np.random.default_rng(seed)

    def dense(*shape):
        return (rng.standard_normal(shape, np.float32) / np.sqrt(shape[-2])).astype(np.float32)

    L, d = a.layers, a.dim
    return {"embed": dense(a.vocab, d) * np.float32(0.02 * np.sqrt(a.vocab)),
            "out": dense(d, a.vocab),
            "layers": {"qkv": dense(L, d, 3 * d), "proj": dense(L, d, d),
                       "up": dense(L, d, 4 * d), "down": dense(L, 4 * d, d),
                       "ln1": np.ones((L, d), np.float32), "ln2": np.ones((L, d), np.float32)}}


def specs(params):
    """The FSDP sharding: every weight split over devices along its first non-layer axis."""
    layer = {name: P(None, AXIS) for name in params["layers"]}
    return {"embed": P(AXIS), "out": P(AXIS), "layers": layer}


def gather(shard, axis):
    return jax.lax.all_gather(shard, AXIS, axis=axis, tiled=True)


def rms_norm(x, w):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def block(x, layer, heads, dtype):
    """One transformer layer over this device's tokens; LAYER holds the gathered weights."""
    def mm(u, w):
        return jnp.matmul(u.astype(dtype), w.astype(dtype), preferred_element_type=jnp.float32)

    b, s, d = x.shape
    h = rms_norm(x, layer["ln1"])
    q, k, v = jnp.split(mm(h, layer["qkv"]), 3, axis=-1)
    q, k, v = (t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3) for t in (q, k, v))
    scores = mm(q, k.transpose(0, 1, 3, 2)) / np.sqrt(d // heads)
    scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, jnp.finfo(jnp.float32).min)
    att = mm(jax.nn.softmax(scores, axis=-1), v).transpose(0, 2, 1, 3).reshape(b, s, d)
    x = x + mm(att, layer["proj"])
    return x + mm(jax.nn.gelu(mm(rms_norm(x, layer["ln2"]), layer["up"])), layer["down"])


def local_loss(shards, tokens, heads, dtype):
    """Next-token cross entropy of this device's batch, gathering each layer inside the scan.
    Shards are cast to DTYPE before they are gathered (mixed precision: bf16 on the wire, the
    reduce-scatter of their gradients too), the f32 master copy stays sharded."""
    x = gather(shards["embed"].astype(dtype), 0)[tokens[:, :-1]].astype(jnp.float32)

    def body(x, layer_shards):
        layer = {name: gather(w.astype(dtype), 0) for name, w in layer_shards.items()}
        return block(x, layer, heads, dtype), None

    x, _ = jax.lax.scan(body, x, shards["layers"])
    logits = jnp.matmul(x.astype(dtype), gather(shards["out"].astype(dtype), 0),
                        preferred_element_type=jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1))


def make_step(mesh, n, a, spec, b1=0.9, b2=0.95, eps=1e-8):
    """One Adam step over the shards, jitted; the optimizer state is sharded like the params."""
    dtype = jnp.dtype(a.dtype)

    def local_step(shards, opt, tokens):
        # The gradient of an all-gather is a reduce-scatter: the grads arrive as shards, summed
        # over devices; / n makes them the mean over the global batch.
        loss, grads = jax.value_and_grad(local_loss)(shards, tokens, a.heads, dtype)
        grads = jax.tree_util.tree_map(lambda g: g / n, grads)
        m, v, t = opt
        t = t + 1
        m = jax.tree_util.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)

        def update(p, m_, v_):
            mhat, vhat = m_ / (1 - b1 ** t), v_ / (1 - b2 ** t)
            return p - a.lr * mhat / (jnp.sqrt(vhat) + eps)
        shards = jax.tree_util.tree_map(update, shards, m, v)
        return shards, (m, v, t), jax.lax.pmean(loss, AXIS)

    fn = shard_map(local_step, mesh=mesh, in_specs=(spec, (spec, spec, P()), P(AXIS)),
                   out_specs=(spec, (spec, spec, P()), P()))
    return jax.jit(fn, donate_argnums=(0, 1))


def count_collectives(step, *args):
    """All-gather and reduce-scatter instructions of the compiled step (async pairs count once)."""
    text = step.lower(*args).compile().as_text()
    return {op: len(re.findall(r"= \S+ " + op + r"(?:-start)?\(", text))
            for op in ("all-gather", "reduce-scatter", "all-reduce")}


def main(defaults=DEFAULTS, argv=None, name="jax_fsdp.py"):
    a = parse_args(defaults, argv)
    devices = jax.devices()
    n = len(devices)
    for flag, size in (("--batch", a.batch), ("--dim", a.dim), ("--vocab", a.vocab)):
        if size % n:
            sys.exit(f"{name}: {flag} {size} does not divide by {n} devices")
    if a.dim % a.heads:
        sys.exit(f"{name}: --dim {a.dim} does not divide by --heads {a.heads}")
    mesh = Mesh(np.array(devices), (AXIS,))
    print(f"{name}: {n} devices ({devices[0].platform}), fsdp over all, {a.layers} layers "
          f"under scan, {a.batch * a.seq // n} tokens per device", file=sys.stderr)

    params = init_params(a.seed, a)
    spec = specs(params)
    shard = jax.tree_util.tree_map(lambda s: NamedSharding(mesh, s), spec)
    zeros = jax.tree_util.tree_map(np.zeros_like, params)
    params = jax.device_put(params, shard)
    # m and v: separate sharded trees (both are donated); t replicated.
    opt = (jax.device_put(zeros, shard), jax.device_put(zeros, shard),
           jax.device_put(np.zeros((), np.float32), NamedSharding(mesh, P())))
    batch = NamedSharding(mesh, P(AXIS))
    step = make_step(mesh, n, a, spec)
    # Tokens from a fixed random bigram table (10 % noise), so that the loss has something to
    # learn; made on the host with numpy, outside the timed step.
    table = np.random.default_rng(a.seed).integers(0, a.vocab, a.vocab)

    def tokens_for(i):
        rng = np.random.default_rng((a.seed, i))
        toks = np.empty((a.batch, a.seq + 1), np.int32)
        toks[:, 0] = rng.integers(0, a.vocab, a.batch)
        for t in range(a.seq):
            toks[:, t + 1] = table[toks[:, t]]
        noise = rng.random(toks.shape) < 0.1
        toks[noise] = rng.integers(0, a.vocab, int(noise.sum()))
        return jax.device_put(toks, batch)

    if a.hlo:
        counts = count_collectives(step, params, opt, tokens_for(0))
        print(f"{name}: compiled step holds " + ", ".join(f"{v} {k}" for k, v in counts.items()),
              file=sys.stderr)
    for i in range(1, a.steps + 1):
        tokens = tokens_for(i)
        tokens.block_until_ready()
        t0, c0 = time.perf_counter(), time.process_time()
        params, opt, loss = step(params, opt, tokens)
        loss.block_until_ready()
        ms = (time.perf_counter() - t0) * 1000.0
        cpu = (time.process_time() - c0) * 1000.0
        print(json.dumps({"step": i, "step_time_ms": round(ms, 3), "loss": round(float(loss), 4),
                          "cpu_ms": round(cpu, 3)}), flush=True)


if __name__ == "__main__":
    main()
