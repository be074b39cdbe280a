-- Manual PGLE: a trial runs a profile phase before its measured run. The profile phase is
-- recorded on the trial: where its profile went, how it ended and how long it took; its
-- output is in the log beside the trial's (trial-NNNN.profile.log).
ALTER TABLE trials ADD COLUMN profile_path TEXT;
ALTER TABLE trials ADD COLUMN profile_status TEXT;  -- ok, or the outcome that ended the trial
ALTER TABLE trials ADD COLUMN profile_duration_s REAL;

DROP VIEW trial_results;
CREATE VIEW trial_results AS
SELECT t.id, t.sweep_id, s.name AS sweep_name, s.model, s.hardware, s.strategy,
       t.number, t.role, t.status, t.config, t.label, t.xla_flags, t.tpu_args, t.env, t.command,
       t.steps_budget, t.value, t.n_steps, t.exit_code, t.signal, t.started_at, t.finished_at,
       t.duration_s, t.log_path, t.error, t.slot, t.pid, t.rerun_of,
       t.profile_path, t.profile_status, t.profile_duration_s,
       b.id AS baseline_id, b.value AS baseline_value,
       CASE WHEN t.value > 0 THEN b.value / t.value END AS speedup
FROM trials t
JOIN sweeps s ON s.id = t.sweep_id
LEFT JOIN trials b ON b.sweep_id = t.sweep_id AND b.number = 0 AND b.status = 'ok';
