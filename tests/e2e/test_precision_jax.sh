#!/usr/bin/env bash
# The precision space under the correctness guard, on real XLA (the pinned CPU jaxlib):
# - `check` refuses xla.presets.precision{} without metric.check (file:line, exit 2);
# - CPU XLA ignores JAX_DEFAULT_MATMUL_PRECISION: an f32 matmul's loss is the same to the last
#   bit at highest and bfloat16, so that trial ends ok;
# - xla_allow_excess_precision=false does act on CPU: a bf16 chain's loss moves from
#   0.8663995 to 0.8663394 (7e-5 relative), past a 1e-5 tolerance, so that trial ends wrong.
source "$(dirname "$0")/lib.sh"
need_jax

cat > train.py <<'PY'
import json, sys, time
import jax, jax.numpy as jnp
steps = int(sys.argv[1])
x0 = jax.random.normal(jax.random.PRNGKey(0), (4096,), jnp.float32).astype(jnp.bfloat16)
a = jax.random.normal(jax.random.PRNGKey(1), (256, 256), jnp.float32)
b = jax.random.normal(jax.random.PRNGKey(2), (256, 256), jnp.float32)
@jax.jit
def loss(x, a, b):
    y = x
    for _ in range(8):
        y = jnp.tanh(y * jnp.bfloat16(1.37)) + x * jnp.bfloat16(0.11)
    return jnp.mean(y.astype(jnp.float32) ** 2) + jnp.mean((a @ b) ** 2) * 1e-3
for i in range(steps):
    t = time.perf_counter()
    v = float(loss(x0, a * (1 + i / 100), b).block_until_ready())
    print(json.dumps({"step": i, "step_time_ms": (time.perf_counter() - t) * 1e3, "loss": v}),
          flush=True)
PY
exp() { # exp FILE METRIC [PRESETS]
  cat > "$1" <<LUA
return experiment {
  name = "${1%.lua}", model = "tiny", hardware = "cpu",
  command = { "$jaxpy", "train.py", "{steps}" },
  metric = $2,
  ${3:-presets = nil,}
  flags = { xla_allow_excess_precision = bool() },
  vars = { JAX_DEFAULT_MATMUL_PRECISION = choice { "bfloat16" } },
  strategy = grid {},
  budget = { trials = 3, steps = 4 },
  software_probe = false,
}
LUA
}
exp bare.lua '{ json = "step_time_ms" }' 'presets = xla.presets.precision{},'
"$ft" check bare.lua > bare.txt 2>&1
check_eq "preset without the guard: exit 2" "$?" 2
has bare.txt "bare.lua:5: 'xla_gpu_default_to_alg_dot_bf16_bf16_f32' trades accuracy for speed: searching it needs the correctness guard"
exp own.lua '{ json = "step_time_ms" }'
"$ft" check own.lua > own.txt 2>&1
check_eq "own choice without the guard: exit 2" "$?" 2
has own.txt "own.lua:6: 'xla_allow_excess_precision' trades accuracy for speed"
exp guarded.lua '{ json = "step_time_ms", check = { json = "loss" } }' 'presets = xla.presets.precision{},'
"$ft" check guarded.lua > guarded.txt 2>&1
check_eq "preset with the guard: check exit 0" "$?" 0

exp guard.lua '{ json = "step_time_ms", check = { json = "loss", tolerance = 1e-5 } }'
"$ft" -q run guard.lua > run.txt 2>&1
echo "run exit $?"
st() { val "SELECT status FROM trials WHERE config LIKE '%\"xla_allow_excess_precision\":$1%'"; }
check_eq "baseline ok" "$(val "SELECT status FROM trials WHERE number = 0")" ok
check_eq "bfloat16 matmuls, excess precision on: ok (CPU ignores the precision)" "$(st true)" ok
check_eq "excess precision off: wrong" "$(st false)" wrong
val "SELECT number, status, error FROM trials ORDER BY number" > trials.txt
has trials.txt "wrong: loss"
finish
