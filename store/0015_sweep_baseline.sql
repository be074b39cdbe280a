-- One definition of a sweep's baseline, read by every view and statement that compares with
-- it: its first trial with role 'baseline' that ended ok (schema 14; trial 0 unless `resume`
-- measured the baseline again after trial 0 was interrupted or lost). Schema 14 wrote that
-- rule out in three views and two statements of src/store.c; they now read this view, shaped
-- like sweep_best. The subquery is one seek of schema 14's partial index trials_baseline_ok.
CREATE VIEW sweep_baseline AS
SELECT s.id AS sweep_id,
       (SELECT x.id FROM trials x WHERE x.sweep_id = s.id AND x.role = 'baseline'
          AND x.status = 'ok' ORDER BY x.number LIMIT 1) AS trial_id
FROM sweeps s;

DROP VIEW best;
DROP VIEW sweep_summary;
DROP VIEW trial_results;

CREATE VIEW trial_results AS
SELECT t.id, t.sweep_id, s.name AS sweep_name, s.model, s.hardware, s.strategy,
       t.number, t.role, t.status, t.config, t.label, t.xla_flags, t.tpu_args, t.env, t.command,
       t.steps_budget, t.value, t.n_steps, t.exit_code, t.signal, t.started_at, t.finished_at,
       t.duration_s, t.log_path, t.error, t.slot, t.pid, t.rerun_of,
       t.profile_path, t.profile_status, t.profile_duration_s, t.losses,
       b.id AS baseline_id, b.value AS baseline_ms,
       CASE WHEN t.value > 0 THEN b.value / t.value END AS speedup
FROM trials t
JOIN sweeps s ON s.id = t.sweep_id
LEFT JOIN trials b ON b.id = (SELECT sb.trial_id FROM sweep_baseline sb
                            WHERE sb.sweep_id = t.sweep_id);

CREATE VIEW best AS
WITH chosen AS (
  SELECT s.model, s.hardware, p.sweep_id, p.trial_id,
         coalesce(p.winner_ms, t.value) AS value,
         coalesce(p.winner_baseline_ms, b.value) AS baseline_value,
         p.winner_trials, p.speedup_lo, p.speedup_hi, b.id AS baseline_id
  FROM sweep_best p
  JOIN sweeps s ON s.id = p.sweep_id
  JOIN trials t ON t.id = p.trial_id
  LEFT JOIN trials b ON b.id = (SELECT sb.trial_id FROM sweep_baseline sb
                              WHERE sb.sweep_id = p.sweep_id)
),
ranked AS (
  SELECT c.*, row_number() OVER (PARTITION BY c.model, c.hardware
                                 ORDER BY c.value, c.trial_id) AS rank
  FROM chosen c
)
SELECT r.model, r.hardware, r.sweep_id, s.name AS sweep_name, s.strategy,
       t.id AS trial_id, t.number AS best_trial, t.role, r.value AS best_ms, t.n_steps, t.label,
       t.config, t.xla_flags, t.tpu_args, t.env, t.finished_at,
       r.baseline_id, r.baseline_value AS baseline_ms,
       r.baseline_value / r.value AS speedup,
       r.speedup_lo, r.speedup_hi, r.winner_trials
FROM ranked r
JOIN sweeps s ON s.id = r.sweep_id
JOIN trials t ON t.id = r.trial_id
WHERE r.rank = 1;

CREATE VIEW sweep_summary AS
SELECT c.id, c.name, c.model, c.hardware, c.strategy, c.status, c.created_at, c.finished_at,
       c.running + c.ok + c.oom + c.invalid + c.timeout + c.crash + c.no_metric + c.pruned
         + c.interrupted + c.lost + c.wrong AS n_trials,
       c.running, c.ok, c.oom, c.invalid, c.timeout, c.crash, c.no_metric, c.pruned,
       c.interrupted, c.lost, c.wrong,
       bt.number AS best_trial,
       coalesce(c.winner_ms, bt.value) AS best_ms,
       coalesce(c.winner_baseline_ms, b.value) AS baseline_ms,
       coalesce(c.winner_baseline_ms, b.value) / coalesce(c.winner_ms, bt.value) AS speedup,
       c.speedup_lo, c.speedup_hi
FROM (
  SELECT s.*,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'running'), 0)
      AS running,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'ok'), 0)
      AS ok,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'oom'), 0)
      AS oom,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'invalid'), 0)
      AS invalid,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'timeout'), 0)
      AS timeout,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'crash'), 0)
      AS crash,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'no_metric'), 0)
      AS no_metric,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'pruned'), 0)
      AS pruned,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'interrupted'), 0)
      AS interrupted,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'lost'), 0)
      AS lost,
    coalesce((SELECT k.n FROM sweep_counts k WHERE k.sweep_id = s.id AND k.status = 'wrong'), 0)
      AS wrong,
    (SELECT p.trial_id FROM sweep_best p WHERE p.sweep_id = s.id) AS best_id
  FROM sweeps s
) c
LEFT JOIN trials bt ON bt.id = c.best_id
LEFT JOIN trials b ON b.id = (SELECT sb.trial_id FROM sweep_baseline sb
                            WHERE sb.sweep_id = c.id);
