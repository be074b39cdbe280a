-- flagtune results database, schema 1. Applied by store.c inside one transaction together
-- with `PRAGMA user_version = 1`; docs/SCHEMA.md explains every column and view.
-- Times are ISO-8601 UTC text ('2024-05-01T22:13:07.412Z'); durations in seconds; step times
-- and values in milliseconds.

CREATE TABLE sweeps (
  id              INTEGER PRIMARY KEY,
  name            TEXT NOT NULL,
  model           TEXT NOT NULL,
  hardware        TEXT NOT NULL,
  experiment_path TEXT,
  experiment_text TEXT,
  experiment_hash TEXT,
  strategy        TEXT,
  seed            INTEGER,
  budget_trials   INTEGER,          -- NULL: no limit
  budget_hours    REAL,             -- NULL: no limit
  budget_steps    INTEGER,          -- NULL: the experiment's own
  parallel        INTEGER NOT NULL DEFAULT 1,
  host            TEXT,
  options_json    TEXT,
  status          TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
  error           TEXT,
  pid             INTEGER,          -- the orchestrator's pid while running
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  finished_at     TEXT
);

CREATE TABLE trials (
  id           INTEGER PRIMARY KEY,
  sweep_id     INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  number       INTEGER NOT NULL,    -- 0 is the baseline
  role         TEXT NOT NULL CHECK (role IN ('baseline', 'search', 'rerun', 'confirm')),
  status       TEXT NOT NULL DEFAULT 'running'
               CHECK (status IN ('running', 'ok', 'oom', 'invalid', 'timeout', 'crash',
                                 'no_metric', 'pruned', 'interrupted', 'lost')),
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
  UNIQUE (sweep_id, number)
);

CREATE TABLE steps (
  trial_id INTEGER NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
  step     INTEGER NOT NULL,        -- 1 is the first step time the trial printed
  ms       REAL NOT NULL,
  PRIMARY KEY (trial_id, step)
) WITHOUT ROWID;

-- Per-sweep best and counts read this index alone: entries sort by (sweep, status, value, id),
-- so "lowest value, earliest id" is its first entry past the NULLs.
CREATE INDEX trials_sweep_status_value ON trials (sweep_id, status, value);
-- Questions across all sweeps ("every OOM", "fastest ok anywhere").
CREATE INDEX trials_status_value ON trials (status, value);
CREATE INDEX sweeps_model_hardware ON sweeps (model, hardware);
CREATE INDEX sweeps_name ON sweeps (name);

-- Every trial with its sweep's key and the speedup over that sweep's baseline (trial 0, ok).
CREATE VIEW trial_results AS
SELECT t.id, t.sweep_id, s.name AS sweep_name, s.model, s.hardware, s.strategy,
       t.number, t.role, t.status, t.config, t.label, t.xla_flags, t.tpu_args, t.env, t.command,
       t.steps_budget, t.value, t.n_steps, t.exit_code, t.signal, t.started_at, t.finished_at,
       t.duration_s, t.log_path, t.error, t.slot, t.pid, t.rerun_of,
       b.id AS baseline_id, b.value AS baseline_value,
       CASE WHEN t.value > 0 THEN b.value / t.value END AS speedup
FROM trials t
JOIN sweeps s ON s.id = t.sweep_id
LEFT JOIN trials b ON b.sweep_id = t.sweep_id AND b.number = 0 AND b.status = 'ok';

-- The best ok trial per (model, hardware): lowest value, ties to the earliest id. Each sweep's
-- best is one index seek, so the ranking runs over sweeps, not over trials.
CREATE VIEW best AS
WITH per_sweep AS (
  SELECT s.id AS sweep_id, s.model, s.hardware,
         (SELECT t.id FROM trials t
          WHERE t.sweep_id = s.id AND t.status = 'ok' AND t.value IS NOT NULL
          ORDER BY t.value, t.id LIMIT 1) AS trial_id
  FROM sweeps s
),
ranked AS (
  SELECT p.model, p.hardware, p.sweep_id, p.trial_id,
         row_number() OVER (PARTITION BY p.model, p.hardware ORDER BY t.value, t.id) AS rank
  FROM per_sweep p JOIN trials t ON t.id = p.trial_id
)
SELECT r.model, r.hardware, r.sweep_id, s.name AS sweep_name, s.strategy,
       t.id AS trial_id, t.number AS trial, t.role, t.value, t.n_steps, t.label, t.config,
       t.xla_flags, t.tpu_args, t.env, t.finished_at,
       b.id AS baseline_id, b.value AS baseline_value,
       b.value / t.value AS speedup
FROM ranked r
JOIN sweeps s ON s.id = r.sweep_id
JOIN trials t ON t.id = r.trial_id
LEFT JOIN trials b ON b.sweep_id = r.sweep_id AND b.number = 0 AND b.status = 'ok'
WHERE r.rank = 1;

-- One row per sweep: trial counts per status, best and baseline values, speedup. Each count is
-- a range of trials_sweep_status_value, so filtering on id reads only that sweep's entries.
CREATE VIEW sweep_summary AS
SELECT c.id, c.name, c.model, c.hardware, c.strategy, c.status, c.created_at, c.finished_at,
       c.running + c.ok + c.oom + c.invalid + c.timeout + c.crash + c.no_metric + c.pruned
         + c.interrupted + c.lost AS trials,
       c.running, c.ok, c.oom, c.invalid, c.timeout, c.crash, c.no_metric, c.pruned,
       c.interrupted, c.lost,
       bt.number AS best_trial, bt.value AS best_value, b.value AS baseline_value,
       b.value / bt.value AS speedup
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
    (SELECT t.id FROM trials t
     WHERE t.sweep_id = s.id AND t.status = 'ok' AND t.value IS NOT NULL
     ORDER BY t.value, t.id LIMIT 1) AS best_id
  FROM sweeps s
) c
LEFT JOIN trials bt ON bt.id = c.best_id
LEFT JOIN trials b ON b.sweep_id = c.id AND b.number = 0 AND b.status = 'ok';
