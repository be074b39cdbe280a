-- two presets defining one name is an error at the +
return experiment {
  name = "e2e-xla_preset_conflict",
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  presets = xla.presets.nccl{} + xla.presets.nccl{},
}
