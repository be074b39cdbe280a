-- an endless loop is stopped by the instruction budget
local n = 0
while n >= 0 do n = n + 1 end
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
