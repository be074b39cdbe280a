-- One owner per sweep, and a sweep that carries where it runs. The orchestrator that holds a
-- sweep also holds an OS lock on the file "<database>.sweep-<id>.lock" beside the database
-- (flock: the kernel drops it when the holder dies); the row records who holds it, so that a
-- second `run`/`resume` can name the holder, and so that a pid reused by an unrelated process
-- is told apart from the orchestrator by its start time.
ALTER TABLE sweeps ADD COLUMN pid_start INTEGER;  -- /proc/PID/stat field 22 (clock ticks after boot)
ALTER TABLE sweeps ADD COLUMN claimed_at TEXT;    -- when the current (or last) orchestrator took it
-- Where `run` was started (absolute) and the command as it resolved there (argv[0] found on
-- PATH or made absolute): `resume` runs the remaining trials the same way from any directory.
ALTER TABLE sweeps ADD COLUMN workdir TEXT;
ALTER TABLE sweeps ADD COLUMN command_json TEXT;
