-- bad command shell metachars
return experiment {
  name = "bad_command_shell_metachars", model = "m", hardware = "h",
  command = { "echo hi; touch pwned && $(id) `id` > x | cat" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 }, seed = 1,
}
