SELECT number, status, xla_flags, instr(coalesce(error, ''), 'Unknown flag in XLA_FLAGS: --xla_gpu_made_up_flag=true') > 0 AS said FROM trials ORDER BY number
