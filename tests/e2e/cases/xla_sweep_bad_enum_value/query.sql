SELECT number, status, xla_flags FROM trials ORDER BY number
