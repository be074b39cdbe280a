-- one 2 GiB string is refused by the Lua memory cap (1 GiB by default)
local big = ("x"):rep((1 << 31) - 1)
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
