-- a strategy option that holds itself: refused at the strategy's line, not a stack overflow
local o = { startup = 4 }
o.self = o
return experiment {
  command = { "true" },
  metric = { json = "ms" },
  vars = { A = choice { "1", "2" } },
  strategy = tpe(o),
}
