#!/bin/sh
# Replays, byte for byte, what jax/jaxlib 0.11.2 printed on an NVIDIA H200 (driver 580.159.04,
# CUDA 13.0) when flagtune's GPU check ran experiments/jax_transformer.py (tests/gpu/run.sh,
# tests/gpu/truth.sh): steps.log a baseline's 30 step lines; oom.log a trial whose model did
# not fit (XLA's rematerialization warning, the BFC allocator's report, the Python traceback,
# jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED); unknown_flag.log XLA_FLAGS naming a flag
# XLA lacks (parse_flags_from_env.cc:234, exit 1); bad_value.log the QCHECK when tsl's parser
# fails (parse_flags_from_env.cc:220, here for --help, with the usage table after it, exit 1);
# bfc_hang.log what XLA_CLIENT_MEM_FRACTION=0.01 gave: the BFC allocator's failure every 10 s
# and no step, the process never ending by itself.
case "${REPLAY:-}" in
  oom) cat oom.log >&2; exit 1 ;;
  unknown) cat unknown_flag.log >&2; exit 1 ;;
  bad_value) cat bad_value.log >&2; exit 1 ;;
  bfc_hang) cat bfc_hang.log >&2; exec sleep 60 ;;
  *) cat steps.log; exit 0 ;;
esac
