-- Real texts from jax 0.11.2 on an H200, replayed (replay.sh): a baseline's steps are ok with
-- their median; the out-of-memory traceback is oom; an unknown flag and a refused value are
-- invalid (never a crash, never retried); a run that only reports failed allocations until its
-- timeout is oom, not timeout.
return experiment {
  name = "xla_real_h200_replay", model = "jax-transformer-8x1024", hardware = "1xNVIDIA-H200",
  command = { "sh", "replay.sh" },
  metric = { json = "step_time_ms", skip = 3, reduce = "median" },
  vars = { REPLAY = choice { "oom", "unknown", "bad_value", "bfc_hang" } },
  strategy = grid {}, budget = { trials = 5 }, seed = 1, timeout = "2s",
}
