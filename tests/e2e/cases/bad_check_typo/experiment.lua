-- metric.check with a misspelt key: refused at check time with a "did you mean"
return experiment {
  command = { "true" },
  metric = { json = "step_ms",
             check = { json = "loss", tolerence = 0.05 } },
  vars = { A = choice { "1", "2" } },
}
