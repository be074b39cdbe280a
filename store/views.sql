-- The views, in one place. flagtune applies this file after the numbered migrations, in the
-- same transaction, whenever it upgrades a database (src/store.c migrate_all): each view is
-- dropped and made again from the definition below, so a schema change edits a view here
-- instead of copying every view into its migration. A change to this file alone still needs a
-- new numbered migration (a comment is enough): a database already at the latest schema is
-- not upgraded, so it would keep the old definitions.
--
-- sweep_baseline: a sweep's baseline, read by every view and statement that compares with it:
--   its first trial with role 'baseline' that ended ok (trial 0 unless `resume` measured the
--   baseline again after trial 0 was interrupted or lost). The subquery is one seek of the
--   partial index trials_baseline_ok.
-- sweep_best: a sweep's winner: the confirmed one when the confirmation chose it, else its
--   fastest ok trial at the full step budget.
-- trial_results: every trial with its sweep's names and its speedup over the baseline, and
--   what it cost (schema 16): first_step_ms, step_ms and compile_ms (first_step_ms less one
--   steady step, never below 0). The sweep's names are read by primary key for each trial
--   (scalar subqueries, not a join): a join lets the planner put the trials inner and scan
--   the sweeps for each one once ANALYZE statistics exist (schema 17).
-- best: the best trial per (model, hardware) over all sweeps.
-- sweep_summary: one row per sweep with its counts by status (kept by triggers in
--   sweep_counts), best trial and speedup.
DROP VIEW IF EXISTS sweep_summary;
DROP VIEW IF EXISTS best;
DROP VIEW IF EXISTS trial_results;
DROP VIEW IF EXISTS sweep_best;
DROP VIEW IF EXISTS sweep_baseline;

CREATE VIEW sweep_baseline AS
SELECT s.id AS sweep_id,
       (SELECT x.id FROM trials x WHERE x.sweep_id = s.id AND x.role = 'baseline'
          AND x.status = 'ok' ORDER BY x.number LIMIT 1) AS trial_id
FROM sweeps s;

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

CREATE VIEW trial_results AS
SELECT t.id, t.sweep_id,
       (SELECT s.name FROM sweeps s WHERE s.id = t.sweep_id) AS sweep_name,
       (SELECT s.model FROM sweeps s WHERE s.id = t.sweep_id) AS model,
       (SELECT s.hardware FROM sweeps s WHERE s.id = t.sweep_id) AS hardware,
       (SELECT s.strategy FROM sweeps s WHERE s.id = t.sweep_id) AS strategy,
       t.number, t.role, t.status, t.config, t.label, t.xla_flags, t.tpu_args, t.env, t.command,
       t.steps_budget, t.value, t.n_steps, t.exit_code, t.signal, t.started_at, t.finished_at,
       t.duration_s, t.log_path, t.error, t.slot, t.pid, t.rerun_of,
       t.profile_path, t.profile_status, t.profile_duration_s, t.losses,
       b.id AS baseline_id, b.value AS baseline_ms,
       CASE WHEN t.value > 0 THEN b.value / t.value END AS speedup,
       t.first_step_ms, t.step_ms,
       max(t.first_step_ms - coalesce(t.step_ms, 0), 0) AS compile_ms
FROM trials t
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
