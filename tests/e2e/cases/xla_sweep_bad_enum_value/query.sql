SELECT number, status, xla_flags, CASE WHEN status = 'ok' THEN '' ELSE substr(error, 1, instr(error || char(10), char(10)) - 1) END AS first_error_line FROM trials ORDER BY number
