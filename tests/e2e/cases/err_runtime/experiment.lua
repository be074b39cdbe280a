-- a runtime error in the file's own code
local settings = nil
return experiment {
  name = "e2e-err_runtime",
  command = { "python3", settings.script },
  metric = { json = "step_time_ms" },
  vars = { NCCL_PROTO = choice { "LL", "SIMPLE" } },
}
