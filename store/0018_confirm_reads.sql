-- The end of a sweep reads the trials of a few of its configurations (src/sweep/confirm.h:
-- the baseline, the fastest, the confirmed, the repeated; store_trials_load_confirm), each
-- set off an index instead of a read of every trial of the sweep:
--   trials_measured_config: the ok trials of a positive value by configuration, with the
--                           columns the check of repeated configurations reads, so that
--                           check reads this index alone, in configuration order (no sort,
--                           no table row);
--   trials_confirm_config:  the configurations of a sweep's confirm trials, by a seek.
-- (A kept configuration's ok trials are a seek of trials_ok_config, schema 13.) Both are
-- partial, on terms only those reads have, so no other statement can take them, whatever
-- statistics the file holds.
CREATE INDEX IF NOT EXISTS trials_measured_config
  ON trials (sweep_id, config, steps_budget, value, status) WHERE status = 'ok' AND value > 0;
CREATE INDEX IF NOT EXISTS trials_confirm_config ON trials (sweep_id, config)
  WHERE role = 'confirm';
