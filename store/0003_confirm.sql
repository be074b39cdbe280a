-- Confirmation: before a sweep ends, its top candidates and the baseline are re-measured and
-- the winner is chosen on the pooled measurements. The sweep records that winner: a
-- representative trial of the winning configuration, the pooled step times (median of the
-- trial values of each), and the 95% interval of the speedup. Views prefer the recorded
-- winner and fall back to the single fastest ok trial for sweeps without confirmation.
ALTER TABLE sweeps ADD COLUMN winner_trial_id INTEGER REFERENCES trials(id) ON DELETE SET NULL;
ALTER TABLE sweeps ADD COLUMN winner_ms REAL;          -- pooled value of the winning config
ALTER TABLE sweeps ADD COLUMN winner_baseline_ms REAL; -- pooled value of the baseline
ALTER TABLE sweeps ADD COLUMN winner_trials INTEGER;   -- ok trials pooled for the winner
ALTER TABLE sweeps ADD COLUMN speedup_lo REAL;         -- 95% interval of the speedup
ALTER TABLE sweeps ADD COLUMN speedup_hi REAL;

DROP VIEW best;
DROP VIEW sweep_summary;

-- Each sweep's chosen trial: its recorded winner, else its fastest ok trial run with the
-- sweep's full step budget (a short rung of successive halving is not a result).
CREATE VIEW sweep_best AS
SELECT s.id AS sweep_id,
       coalesce(s.winner_trial_id,
                (SELECT t.id FROM trials t
                 WHERE t.sweep_id = s.id AND t.status = 'ok' AND t.value IS NOT NULL
                   AND (s.budget_steps IS NULL OR t.steps_budget IS NULL
                        OR t.steps_budget >= s.budget_steps)
                 ORDER BY t.value, t.id LIMIT 1)) AS trial_id,
       s.winner_ms, s.winner_baseline_ms, s.winner_trials, s.speedup_lo, s.speedup_hi
FROM sweeps s;

-- The best configuration per (model, hardware): lowest (pooled) value, ties to the earliest.
CREATE VIEW best AS
WITH chosen AS (
  SELECT s.model, s.hardware, p.sweep_id, p.trial_id,
         coalesce(p.winner_ms, t.value) AS value,
         coalesce(p.winner_baseline_ms, b.value) AS baseline_value,
         p.winner_trials, p.speedup_lo, p.speedup_hi, b.id AS baseline_id
  FROM sweep_best p
  JOIN sweeps s ON s.id = p.sweep_id
  JOIN trials t ON t.id = p.trial_id
  LEFT JOIN trials b ON b.sweep_id = p.sweep_id AND b.number = 0 AND b.status = 'ok'
),
ranked AS (
  SELECT c.*, row_number() OVER (PARTITION BY c.model, c.hardware
                                 ORDER BY c.value, c.trial_id) AS rank
  FROM chosen c
)
SELECT r.model, r.hardware, r.sweep_id, s.name AS sweep_name, s.strategy,
       t.id AS trial_id, t.number AS trial, t.role, r.value, t.n_steps, t.label, t.config,
       t.xla_flags, t.tpu_args, t.env, t.finished_at,
       r.baseline_id, r.baseline_value,
       r.baseline_value / r.value AS speedup,
       r.speedup_lo, r.speedup_hi, r.winner_trials AS pooled_trials
FROM ranked r
JOIN sweeps s ON s.id = r.sweep_id
JOIN trials t ON t.id = r.trial_id
WHERE r.rank = 1;

CREATE VIEW sweep_summary AS
SELECT c.id, c.name, c.model, c.hardware, c.strategy, c.status, c.created_at, c.finished_at,
       c.running + c.ok + c.oom + c.invalid + c.timeout + c.crash + c.no_metric + c.pruned
         + c.interrupted + c.lost AS trials,
       c.running, c.ok, c.oom, c.invalid, c.timeout, c.crash, c.no_metric, c.pruned,
       c.interrupted, c.lost,
       bt.number AS best_trial,
       coalesce(c.winner_ms, bt.value) AS best_value,
       coalesce(c.winner_baseline_ms, b.value) AS baseline_value,
       coalesce(c.winner_baseline_ms, b.value) / coalesce(c.winner_ms, bt.value) AS speedup,
       c.speedup_lo, c.speedup_hi
FROM (
  SELECT s.*,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'running') AS running,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'ok') AS ok,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'oom') AS oom,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'invalid') AS invalid,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'timeout') AS timeout,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'crash') AS crash,
    (SELECT count(*) FROM trials t
     WHERE t.sweep_id = s.id AND t.status = 'no_metric') AS no_metric,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'pruned') AS pruned,
    (SELECT count(*) FROM trials t
     WHERE t.sweep_id = s.id AND t.status = 'interrupted') AS interrupted,
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'lost') AS lost,
    (SELECT p.trial_id FROM sweep_best p WHERE p.sweep_id = s.id) AS best_id
  FROM sweeps s
) c
LEFT JOIN trials bt ON bt.id = c.best_id
LEFT JOIN trials b ON b.sweep_id = c.id AND b.number = 0 AND b.status = 'ok';

