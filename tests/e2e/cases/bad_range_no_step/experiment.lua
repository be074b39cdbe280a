-- range() without its step: an internal error (lua/dsl.lua: compare nil with number) before
return experiment {
  command = { "true" },
  metric = { json = "ms" },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.5, 0.95) },
}
