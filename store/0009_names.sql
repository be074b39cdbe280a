-- One name for one field, in the views as in every command's --json (docs/SCHEMA.md "Names"):
-- a trial's step time is `value`, a sweep's (or a model's) chosen one `best_ms`, the baseline's
-- `baseline_ms`, the chosen trial's number `best_trial`, a count of trials `n_trials`, the
-- pooled trial count `winner_trials` (as the sweeps column). Before schema 9 the views said
-- baseline_value, best_value, trial, value (in best), trials and pooled_trials.
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
LEFT JOIN trials b ON b.sweep_id = t.sweep_id AND b.number = 0 AND b.status = 'ok';

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
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'wrong') AS wrong,
    (SELECT p.trial_id FROM sweep_best p WHERE p.sweep_id = s.id) AS best_id
  FROM sweeps s
) c
LEFT JOIN trials bt ON bt.id = c.best_id
LEFT JOIN trials b ON b.sweep_id = c.id AND b.number = 0 AND b.status = 'ok';
