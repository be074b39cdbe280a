-- metric.check: a trial whose loss left the baseline's computed something else. Its status
-- is 'wrong' (never the best, never exported), and every trial keeps the losses it printed
-- (a JSON array, in order) so that a resumed sweep compares with the same baseline.
-- SQLite cannot change a CHECK constraint in place, so trials is rebuilt as
-- sqlite.org/lang_altertable.html ("Making Other Kinds Of Table Schema Changes") describes:
-- store.c runs migrations with foreign keys off and checks them before it commits. The views
-- that read trials are dropped first and made again (sweep_summary now counts 'wrong').
DROP VIEW best;
DROP VIEW sweep_summary;
DROP VIEW sweep_best;
DROP VIEW trial_results;

CREATE TABLE trials_new (
  id           INTEGER PRIMARY KEY,
  sweep_id     INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  number       INTEGER NOT NULL,    -- 0 is the baseline
  role         TEXT NOT NULL CHECK (role IN ('baseline', 'search', 'rerun', 'confirm')),
  status       TEXT NOT NULL DEFAULT 'running'
               CHECK (status IN ('running', 'ok', 'oom', 'invalid', 'timeout', 'crash',
                                 'no_metric', 'pruned', 'interrupted', 'lost', 'wrong')),
  config       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config)),
  label        TEXT,
  xla_flags    TEXT,
  tpu_args     TEXT,
  env          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(env)),
  command      TEXT CHECK (command IS NULL OR json_valid(command)),
  steps_budget INTEGER,
  value        REAL CHECK (value IS NULL OR status = 'ok'),
  n_steps      INTEGER NOT NULL DEFAULT 0,
  exit_code    INTEGER,
  signal       INTEGER,
  started_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at  TEXT,
  duration_s   REAL,
  log_path     TEXT,
  error        TEXT,
  slot         INTEGER,
  pid          INTEGER,
  rerun_of     INTEGER,             -- number of the trial this one re-measures
  profile_path TEXT,
  profile_status TEXT,              -- ok, or the outcome that ended the trial
  profile_duration_s REAL,
  losses       TEXT CHECK (losses IS NULL OR json_valid(losses)),
  UNIQUE (sweep_id, number)
);
INSERT INTO trials_new (id, sweep_id, number, role, status, config, label, xla_flags, tpu_args,
                        env, command, steps_budget, value, n_steps, exit_code, signal,
                        started_at, finished_at, duration_s, log_path, error, slot, pid,
                        rerun_of, profile_path, profile_status, profile_duration_s)
SELECT id, sweep_id, number, role, status, config, label, xla_flags, tpu_args, env, command,
       steps_budget, value, n_steps, exit_code, signal, started_at, finished_at, duration_s,
       log_path, error, slot, pid, rerun_of, profile_path, profile_status, profile_duration_s
FROM trials;
DROP TABLE trials;
ALTER TABLE trials_new RENAME TO trials;
CREATE INDEX trials_sweep_status_value ON trials (sweep_id, status, value);
CREATE INDEX trials_status_value ON trials (status, value);

CREATE VIEW trial_results AS
SELECT t.id, t.sweep_id, s.name AS sweep_name, s.model, s.hardware, s.strategy,
       t.number, t.role, t.status, t.config, t.label, t.xla_flags, t.tpu_args, t.env, t.command,
       t.steps_budget, t.value, t.n_steps, t.exit_code, t.signal, t.started_at, t.finished_at,
       t.duration_s, t.log_path, t.error, t.slot, t.pid, t.rerun_of,
       t.profile_path, t.profile_status, t.profile_duration_s, t.losses,
       b.id AS baseline_id, b.value AS baseline_value,
       CASE WHEN t.value > 0 THEN b.value / t.value END AS speedup
FROM trials t
JOIN sweeps s ON s.id = t.sweep_id
LEFT JOIN trials b ON b.sweep_id = t.sweep_id AND b.number = 0 AND b.status = 'ok';

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
         + c.interrupted + c.lost + c.wrong AS trials,
       c.running, c.ok, c.oom, c.invalid, c.timeout, c.crash, c.no_metric, c.pruned,
       c.interrupted, c.lost, c.wrong,
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
    (SELECT count(*) FROM trials t WHERE t.sweep_id = s.id AND t.status = 'wrong') AS wrong,
    (SELECT p.trial_id FROM sweep_best p WHERE p.sweep_id = s.id) AS best_id
  FROM sweeps s
) c
LEFT JOIN trials bt ON bt.id = c.best_id
LEFT JOIN trials b ON b.sweep_id = c.id AND b.number = 0 AND b.status = 'ok';
