-- The end of a sweep reads every trial of a few configurations (store_trials_load_confirm):
-- the ok ones by a seek of trials_ok_config (schema 13) each, and the others (not ok) by a
-- seek of this index each, instead of a read of every not-ok trial's row of the sweep to
-- keep those of the few configurations. Partial on a term only that read has, so no other
-- statement can take it, whatever statistics the file holds.
CREATE INDEX IF NOT EXISTS trials_unok_config ON trials (sweep_id, config) WHERE status <> 'ok';
