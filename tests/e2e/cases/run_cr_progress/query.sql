SELECT t.number, t.status, count(s.step), group_concat(s.ms, ' ') FROM trials t LEFT JOIN steps s ON s.trial_id = t.id GROUP BY t.id ORDER BY t.number
