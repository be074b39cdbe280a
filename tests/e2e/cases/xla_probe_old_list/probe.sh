#!/bin/sh
# The simulated jaxlib as jax <= 0.5.0 was: its "Unknown flags in XLA_FLAGS:" list joins XLA's
# whole compacted argv, so with these four flags it also names the last, known one
# (--xla_gpu_enable_latency_hiding_scheduler), which the probe must confirm alone as accepted.
FLAGTUNE_SIM_OLD_XLA=1 exec "$FLAGTUNE_SIM" --steps 1 --time-scale 0
