-- Trial counts per (sweep, status), kept by triggers as trials are written, so that `sweeps`,
-- `show` and the sweep_summary view read 11 numbers per sweep instead of counting the sweep's
-- trials at every call (an index range per status: with 100,000 trials most of a read's
-- time; docs/COST.md "Read commands"). A table that replaces `trials` must recreate the three
-- triggers. Rows whose count fell to 0 stay (readers skip them).
CREATE TABLE sweep_counts (
  sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  status   TEXT NOT NULL,
  n        INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, status)
) WITHOUT ROWID;

INSERT INTO sweep_counts (sweep_id, status, n)
SELECT sweep_id, status, count(*) FROM trials GROUP BY sweep_id, status;

CREATE TRIGGER trials_count_insert AFTER INSERT ON trials
BEGIN
  INSERT INTO sweep_counts (sweep_id, status, n) VALUES (NEW.sweep_id, NEW.status, 1)
  ON CONFLICT (sweep_id, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER trials_count_delete AFTER DELETE ON trials
BEGIN
  UPDATE sweep_counts SET n = n - 1 WHERE sweep_id = OLD.sweep_id AND status = OLD.status;
END;

CREATE TRIGGER trials_count_update AFTER UPDATE OF sweep_id, status ON trials
WHEN OLD.sweep_id IS NOT NEW.sweep_id OR OLD.status IS NOT NEW.status
BEGIN
  UPDATE sweep_counts SET n = n - 1 WHERE sweep_id = OLD.sweep_id AND status = OLD.status;
  INSERT INTO sweep_counts (sweep_id, status, n) VALUES (NEW.sweep_id, NEW.status, 1)
  ON CONFLICT (sweep_id, status) DO UPDATE SET n = n + 1;
END;

-- sweep_summary as in schema 9, its counts read off sweep_counts.
DROP VIEW sweep_summary;

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
LEFT JOIN trials b ON b.sweep_id = c.id AND b.number = 0 AND b.status = 'ok';
