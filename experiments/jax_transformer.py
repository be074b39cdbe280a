#!/usr/bin/env python3
"""A small decoder-only transformer in plain jax / jax.numpy (no flax), trained with Adam on
random tokens, for tuning single-GPU XLA flags with experiments/jax_transformer.lua.

Prints one JSON line per step: {"step": i, "step_time_ms": x, "loss": y}, the time measured with
time.perf_counter around the jitted step and block_until_ready (dispatch is asynchronous, so
without it the time would be the launch, not the work). Step 1 includes compilation; skip it.
Sized (defaults) to run in about a minute on one recent GPU. XLA_FLAGS and the memory variables
must be set before jax starts its backend: flagtune sets them in the environment.
"""
import argparse
import json
import time

import jax
import jax.numpy as jnp


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def init_params(key, a):
    def dense(k, n_in, n_out):
        return (jax.random.normal(k, (n_in, n_out), jnp.float32) / jnp.sqrt(n_in))

    keys = jax.random.split(key, 2 + 4 * a.layers)
    params = {"embed": dense(keys[0], a.vocab, a.dim) * jnp.sqrt(a.dim) * 0.02,
              "out": dense(keys[1], a.dim, a.vocab), "layers": []}
    for i in range(a.layers):
        k = keys[2 + 4 * i: 6 + 4 * i]
        params["layers"].append({
            "qkv": dense(k[0], a.dim, 3 * a.dim), "proj": dense(k[1], a.dim, a.dim),
            "up": dense(k[2], a.dim, 4 * a.dim), "down": dense(k[3], 4 * a.dim, a.dim),
            "ln1": jnp.ones((a.dim,)), "ln2": jnp.ones((a.dim,))})
    return params


def rms_norm(x, w):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def matmul(x, w):
    """bf16 inputs, f32 accumulation: the tensor-core path the flags under test act on."""
    return jnp.matmul(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16),
                      preferred_element_type=jnp.float32)


def attention(x, layer, heads):
    b, s, d = x.shape
    q, k, v = jnp.split(matmul(x, layer["qkv"]), 3, axis=-1)
    q, k, v = (t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3) for t in (q, k, v))
    scores = matmul(q, k.transpose(0, 1, 3, 2)) / jnp.sqrt(d // heads)
    mask = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(mask, scores, jnp.finfo(jnp.float32).min)
    out = matmul(jax.nn.softmax(scores, axis=-1), v)
    return matmul(out.transpose(0, 2, 1, 3).reshape(b, s, d), layer["proj"])


def forward(params, tokens, heads):
    x = params["embed"][tokens]
    for layer in params["layers"]:
        x = x + attention(rms_norm(x, layer["ln1"]), layer, heads)
        h = jax.nn.gelu(matmul(rms_norm(x, layer["ln2"]), layer["up"]))
        x = x + matmul(h, layer["down"])
    return matmul(x, params["out"])


def loss_fn(params, tokens, heads):
    logits = forward(params, tokens[:, :-1], heads)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1))


def make_step(heads, lr, b1=0.9, b2=0.95, eps=1e-8):
    """One Adam step, jitted; the optimizer state is (m, v, t)."""
    @jax.jit
    def step(params, opt, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, heads)
        m, v, t = opt
        t = t + 1
        m = jax.tree_util.tree_map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
        def update(p, m_, v_):
            mhat, vhat = m_ / (1 - b1 ** t), v_ / (1 - b2 ** t)
            return p - lr * mhat / (jnp.sqrt(vhat) + eps)
        params = jax.tree_util.tree_map(update, params, m, v)
        return params, (m, v, t), loss
    return step


def main():
    a = parse_args()
    key = jax.random.PRNGKey(a.seed)
    params = init_params(key, a)
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    opt = (zeros, zeros, jnp.zeros((), jnp.float32))
    step = make_step(a.heads, a.lr)
    for i in range(1, a.steps + 1):
        tokens = jax.random.randint(jax.random.fold_in(key, i), (a.batch, a.seq + 1), 0, a.vocab)
        tokens.block_until_ready()
        t0 = time.perf_counter()
        params, opt, loss = step(params, opt, tokens)
        loss.block_until_ready()
        ms = (time.perf_counter() - t0) * 1000.0
        print(json.dumps({"step": i, "step_time_ms": round(ms, 3), "loss": round(float(loss), 4)}),
              flush=True)


if __name__ == "__main__":
    main()
