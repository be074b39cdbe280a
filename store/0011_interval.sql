-- The best-versus-baseline 95 % interval of a sweep, computed once when the sweep ends
-- (docs/COST.md): a bootstrap over two 20,000-step trials is the slowest thing `show`,
-- `export` and the summary did, at every display. Valid while best_ci_trial and
-- best_ci_baseline are still the sweep's best and baseline trials; otherwise (a running sweep,
-- an older database) readers compute it again.
ALTER TABLE sweeps ADD COLUMN best_ci_trial INTEGER;
ALTER TABLE sweeps ADD COLUMN best_ci_baseline INTEGER;
ALTER TABLE sweeps ADD COLUMN best_ci_lo REAL;
ALTER TABLE sweeps ADD COLUMN best_ci_hi REAL;
