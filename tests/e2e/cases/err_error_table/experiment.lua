-- an error value that is not a string still names the file and line
local function check(v) if not v then error({ reason = "missing" }) end end
check(os.getenv("FLAGTUNE_NO_SUCH_VARIABLE"))
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
