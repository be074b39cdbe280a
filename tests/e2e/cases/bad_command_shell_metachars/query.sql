SELECT number, status, error FROM trials ORDER BY number
