-- What `flagtune report` needs of every trial of a sweep, kept by triggers as trials are
-- written, so that a report reads tens of rows instead of passing over every trial (a pass
-- over 60,000 trials was 0.25 s of a report; docs/COST.md "Read commands"). Each table is a
-- superset the reader narrows exactly: a row too many costs a lookup, never a wrong page.
-- A table that replaces `trials` must recreate these triggers (and schema 12's).

-- The best-so-far curves' candidates: every ok search trial (not the baseline, not a
-- confirmation) that no candidate already beat when it finished. Trial U beats T when U has
-- a lower number, a value no higher, finished no later (the same time format; or T has no
-- finish, so is on no time curve), and ran at least T's step budget (none or <= 0:
-- unlimited); then U comes before T on both curves (by number, by finishing time) and T is a
-- change point of neither, whatever else is written later. So every change point is here,
-- and the reader finds them among these rows.
CREATE TABLE report_curve (
  sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  trial_id INTEGER NOT NULL,
  PRIMARY KEY (sweep_id, trial_id)
) WITHOUT ROWID;

-- Per sweep: the earliest start and the largest step budget of any trial (the curves' time
-- origin, and the full budget halving's short rungs ran less than).
CREATE TABLE report_span (
  sweep_id    INTEGER PRIMARY KEY REFERENCES sweeps (id) ON DELETE CASCADE,
  first_start TEXT,
  max_budget  INTEGER
);

-- Per sweep and step budget (0: none or <= 0) of ok search trials: the largest number and the
-- latest finish among them (where the curves end).
CREATE TABLE report_tail (
  sweep_id    INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  budget      INTEGER NOT NULL,
  last_number INTEGER,
  last_finish TEXT,
  PRIMARY KEY (sweep_id, budget)
) WITHOUT ROWID;

-- Configurations that more than one ok trial of a sweep ran (the top table's medians), with
-- the fastest value among them (a median is no faster, so a repeat slower than the top
-- table's tenth configuration run once is not read); a configuration run once is found in
-- value order off trials_sweep_status_value.
CREATE TABLE report_repeats (
  sweep_id INTEGER NOT NULL REFERENCES sweeps (id) ON DELETE CASCADE,
  config   TEXT NOT NULL,
  best     REAL,
  PRIMARY KEY (sweep_id, config)
) WITHOUT ROWID;

-- Sweeps an ok trial was deleted from, one by one (flagtune deletes none, only whole sweeps,
-- which cascade): their curves' candidates and tails may miss a trial the deleted one hid,
-- so a report computes those over the sweep's trials instead (slower, exact).
CREATE TABLE report_stale (
  sweep_id INTEGER PRIMARY KEY
);

-- The ok trials of a sweep by configuration: the repeats' check as a trial finishes, and the
-- reader's lookup of a repeated configuration's trials.
CREATE INDEX trials_ok_config ON trials (sweep_id, config) WHERE status = 'ok';

-- Backfill. The curves' candidates: for each step budget L among a sweep's ok search trials,
-- the running minima by number, and by (finish, number), of the trials that ran at least L.
INSERT OR IGNORE INTO report_curve (sweep_id, trial_id)
SELECT sweep_id, id FROM (
  SELECT t.sweep_id, t.id, t.value,
    min(t.value) OVER (PARTITION BY t.sweep_id, l.eff ORDER BY t.number
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_n,
    min(t.value) FILTER (WHERE t.finished_at IS NOT NULL)
      OVER (PARTITION BY t.sweep_id, l.eff ORDER BY t.finished_at IS NULL, t.finished_at, t.number
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_t
  FROM (SELECT DISTINCT sweep_id,
          CASE WHEN coalesce(steps_budget, 0) <= 0 THEN 9223372036854775807 ELSE steps_budget END
            AS eff
        FROM trials WHERE status = 'ok' AND value IS NOT NULL
          AND role NOT IN ('baseline', 'confirm')) l
  JOIN trials t ON t.sweep_id = l.sweep_id AND t.status = 'ok' AND t.value IS NOT NULL
    AND t.role NOT IN ('baseline', 'confirm')
    AND CASE WHEN coalesce(t.steps_budget, 0) <= 0 THEN 9223372036854775807
             ELSE t.steps_budget END >= l.eff)
WHERE before_n IS NULL OR value < before_n OR before_t IS NULL OR value < before_t;

INSERT INTO report_span (sweep_id, first_start, max_budget)
SELECT sweep_id, min(started_at), max(steps_budget) FROM trials GROUP BY sweep_id;

INSERT INTO report_tail (sweep_id, budget, last_number, last_finish)
SELECT sweep_id, max(coalesce(steps_budget, 0), 0), max(number), max(finished_at) FROM trials
WHERE status = 'ok' AND value IS NOT NULL AND role NOT IN ('baseline', 'confirm')
GROUP BY sweep_id, max(coalesce(steps_budget, 0), 0);

INSERT INTO report_repeats (sweep_id, config, best)
SELECT sweep_id, config, min(value) FROM trials WHERE status = 'ok' GROUP BY sweep_id, config
HAVING count(*) > 1;

-- A new sweep starts with nothing kept (rows left by a delete that did not cascade, as in a
-- shell without foreign keys, under a reused id).
CREATE TRIGGER sweeps_report_insert AFTER INSERT ON sweeps
BEGIN
  DELETE FROM report_curve WHERE sweep_id = NEW.id;
  DELETE FROM report_span WHERE sweep_id = NEW.id;
  DELETE FROM report_tail WHERE sweep_id = NEW.id;
  DELETE FROM report_repeats WHERE sweep_id = NEW.id;
  DELETE FROM report_stale WHERE sweep_id = NEW.id;
END;

CREATE TRIGGER trials_report_delete AFTER DELETE ON trials
WHEN OLD.status = 'ok' AND EXISTS (SELECT 1 FROM sweeps WHERE id = OLD.sweep_id)
BEGIN
  INSERT OR IGNORE INTO report_stale (sweep_id) VALUES (OLD.sweep_id);
END;

-- The triggers: a trial is inserted running (or, by another tool, already finished) and
-- finishes by an update of its status and value.
CREATE TRIGGER trials_report_insert AFTER INSERT ON trials
BEGIN
  INSERT INTO report_span (sweep_id, first_start, max_budget)
  VALUES (NEW.sweep_id, NEW.started_at, NEW.steps_budget)
  ON CONFLICT (sweep_id) DO UPDATE SET
    first_start = CASE WHEN first_start IS NULL OR excluded.first_start < first_start
                       THEN excluded.first_start ELSE first_start END,
    max_budget = CASE WHEN max_budget IS NULL OR excluded.max_budget > max_budget
                      THEN excluded.max_budget ELSE max_budget END
  WHERE (excluded.first_start IS NOT NULL
         AND (first_start IS NULL OR excluded.first_start < first_start))
     OR (excluded.max_budget IS NOT NULL
         AND (max_budget IS NULL OR excluded.max_budget > max_budget));
END;

CREATE TRIGGER trials_report_span AFTER UPDATE OF started_at, steps_budget ON trials
BEGIN
  INSERT INTO report_span (sweep_id, first_start, max_budget)
  VALUES (NEW.sweep_id, NEW.started_at, NEW.steps_budget)
  ON CONFLICT (sweep_id) DO UPDATE SET
    first_start = CASE WHEN first_start IS NULL OR excluded.first_start < first_start
                       THEN excluded.first_start ELSE first_start END,
    max_budget = CASE WHEN max_budget IS NULL OR excluded.max_budget > max_budget
                      THEN excluded.max_budget ELSE max_budget END
  WHERE (excluded.first_start IS NOT NULL
         AND (first_start IS NULL OR excluded.first_start < first_start))
     OR (excluded.max_budget IS NOT NULL
         AND (max_budget IS NULL OR excluded.max_budget > max_budget));
END;

CREATE TRIGGER trials_report_ok_insert AFTER INSERT ON trials
WHEN NEW.status = 'ok'
BEGIN
  INSERT INTO report_repeats (sweep_id, config, best)
  SELECT NEW.sweep_id, NEW.config,
    (SELECT min(u.value) FROM trials u WHERE u.sweep_id = NEW.sweep_id AND u.status = 'ok'
       AND u.config = NEW.config)
  WHERE EXISTS (
    SELECT 1 FROM trials u WHERE u.sweep_id = NEW.sweep_id AND u.status = 'ok'
      AND u.config = NEW.config AND u.id <> NEW.id)
  ON CONFLICT (sweep_id, config) DO UPDATE SET best = excluded.best;
  INSERT INTO report_tail (sweep_id, budget, last_number, last_finish)
  SELECT NEW.sweep_id, max(coalesce(NEW.steps_budget, 0), 0), NEW.number, NEW.finished_at
  WHERE NEW.value IS NOT NULL AND NEW.role NOT IN ('baseline', 'confirm')
  ON CONFLICT (sweep_id, budget) DO UPDATE SET
    last_number = max(last_number, excluded.last_number),
    last_finish = CASE WHEN last_finish IS NULL OR excluded.last_finish > last_finish
                       THEN excluded.last_finish ELSE last_finish END;
  INSERT OR IGNORE INTO report_curve (sweep_id, trial_id)
  SELECT NEW.sweep_id, NEW.id
  WHERE NEW.value IS NOT NULL AND NEW.role NOT IN ('baseline', 'confirm') AND NOT EXISTS (
    SELECT 1 FROM report_curve c JOIN trials u ON u.id = c.trial_id
    WHERE c.sweep_id = NEW.sweep_id AND u.id <> NEW.id AND u.status = 'ok'
      AND u.number < NEW.number AND u.value <= NEW.value
      AND (NEW.finished_at IS NULL OR (u.finished_at <= NEW.finished_at
           AND length(u.finished_at) = length(NEW.finished_at)))
      AND (coalesce(u.steps_budget, 0) <= 0
           OR (coalesce(NEW.steps_budget, 0) > 0 AND u.steps_budget >= NEW.steps_budget)));
END;

CREATE TRIGGER trials_report_ok_update AFTER UPDATE OF status, value ON trials
WHEN NEW.status = 'ok' AND (OLD.status IS NOT 'ok' OR OLD.value IS NOT NEW.value)
BEGIN
  INSERT INTO report_repeats (sweep_id, config, best)
  SELECT NEW.sweep_id, NEW.config,
    (SELECT min(u.value) FROM trials u WHERE u.sweep_id = NEW.sweep_id AND u.status = 'ok'
       AND u.config = NEW.config)
  WHERE EXISTS (
    SELECT 1 FROM trials u WHERE u.sweep_id = NEW.sweep_id AND u.status = 'ok'
      AND u.config = NEW.config AND u.id <> NEW.id)
  ON CONFLICT (sweep_id, config) DO UPDATE SET best = excluded.best;
  INSERT INTO report_tail (sweep_id, budget, last_number, last_finish)
  SELECT NEW.sweep_id, max(coalesce(NEW.steps_budget, 0), 0), NEW.number, NEW.finished_at
  WHERE NEW.value IS NOT NULL AND NEW.role NOT IN ('baseline', 'confirm')
  ON CONFLICT (sweep_id, budget) DO UPDATE SET
    last_number = max(last_number, excluded.last_number),
    last_finish = CASE WHEN last_finish IS NULL OR excluded.last_finish > last_finish
                       THEN excluded.last_finish ELSE last_finish END;
  INSERT OR IGNORE INTO report_curve (sweep_id, trial_id)
  SELECT NEW.sweep_id, NEW.id
  WHERE NEW.value IS NOT NULL AND NEW.role NOT IN ('baseline', 'confirm') AND NOT EXISTS (
    SELECT 1 FROM report_curve c JOIN trials u ON u.id = c.trial_id
    WHERE c.sweep_id = NEW.sweep_id AND u.id <> NEW.id AND u.status = 'ok'
      AND u.number < NEW.number AND u.value <= NEW.value
      AND (NEW.finished_at IS NULL OR (u.finished_at <= NEW.finished_at
           AND length(u.finished_at) = length(NEW.finished_at)))
      AND (coalesce(u.steps_budget, 0) <= 0
           OR (coalesce(NEW.steps_budget, 0) > 0 AND u.steps_budget >= NEW.steps_budget)));
END;
