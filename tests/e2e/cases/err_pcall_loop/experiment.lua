-- pcall cannot catch the instruction budget: the next loop fails at once
pcall(function() while true do end end) while true do end
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
