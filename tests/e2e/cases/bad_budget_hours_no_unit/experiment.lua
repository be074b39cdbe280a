-- budget.hours = "8": a string without a unit was read as 8 seconds; now refused
return experiment {
  command = { "true" },
  metric = { json = "ms" },
  vars = { A = choice { "1", "2" } },
  budget = { trials = 4, hours = "8" },
}
