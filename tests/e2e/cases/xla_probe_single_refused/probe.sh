#!/bin/sh
# One probe run of the simulated jaxlib, which names a single unknown flag as today's XLA does:
# "Unknown flag in XLA_FLAGS: --x=true" (openxla/xla xla/parse_flags_from_env.cc:224).
exec "$FLAGTUNE_SIM" --steps 1 --time-scale 0
