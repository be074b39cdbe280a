-- error(msg, 2) at the top level blames the file's caller, which is flagtune: the file's line
-- is named instead
if not os.getenv("FLAGTUNE_NO_SUCH_VARIABLE") then
  error("boom", 2)
end
return experiment {
  command = { "python3", "train.py" },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
