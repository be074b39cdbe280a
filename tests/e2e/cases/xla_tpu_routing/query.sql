SELECT number, status, tpu_args, xla_flags FROM trials ORDER BY number
