-- a variable both fixed and searched
return experiment {
  name = "e2e-err_env_vars_overlap",
  command = { "python3", "train.py", "--steps", "{steps}" },
  metric = { json = "step_time_ms", skip = 2 },
  env = { NCCL_PROTO = "SIMPLE" },
  vars = { NCCL_PROTO = choice { "LL,LL128,SIMPLE", "SIMPLE" } },
  budget = { trials = 10, steps = 20 },
}
