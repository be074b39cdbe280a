-- error(msg, 0) asks for no position; flagtune still names the file and line
if not os.getenv("FLAGTUNE_NO_SUCH_VARIABLE") then
  error("set FLAGTUNE_NO_SUCH_VARIABLE first", 0)
end
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
