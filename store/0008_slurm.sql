-- The Slurm executor (docs/SLURM.md): the job, the step and the node each trial ran as. Without
-- Slurm accounting nothing else remembers a step once it ends, and `resume` cancels what a
-- dead orchestrator left by these ids (scancel JOB.STEP) and finds the allocation again.
-- NULL for trials of the local executor.
ALTER TABLE trials ADD COLUMN slurm_job INTEGER;
ALTER TABLE trials ADD COLUMN slurm_step INTEGER;
ALTER TABLE trials ADD COLUMN node TEXT;
