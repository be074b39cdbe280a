SELECT s.status, s.error IS NOT NULL AS has_error, (SELECT group_concat(number || ':' || status, ' ') FROM (SELECT number, status FROM trials ORDER BY number)) AS trials FROM sweeps s
