-- What a trial costs in wall time, beside what it measured. A real trial is mostly start and
-- compile: process start, Python and jax import, backend start, jit compile and autotuning
-- all come before the first step line (16-40 s a trial on one H100, of which about 1 s was
-- the measured steps: docs/GPU.md). Budgets (`--hours`), successive halving and the search
-- benchmarks count this cost (docs/STRATEGIES.md, "What a trial costs").
--   first_step_ms: from the start of the trial's measured run to its first step line, in
--                  ms (NULL: it printed no step); a PGLE profile run before it is
--                  profile_duration_s, not part of this.
--   step_ms:       the steady step time in wall ms: the time between its step lines past
--                  the metric's skip (from its first line when it printed no more), whatever
--                  the outcome, so a pruned or timed-out trial still says what its steps
--                  cost. Wall time, not the printed step time (`value`), which a program may
--                  measure its own way. NULL: fewer than two step lines.
-- trial_results shows both and compile_ms, first_step_ms less one steady step (the first
-- step line comes after the first step ran). The views are in store/views.sql.
ALTER TABLE trials ADD COLUMN first_step_ms REAL;
ALTER TABLE trials ADD COLUMN step_ms REAL;

-- What the confirmation answered (src/confirm.h, confirm_guard): 'search' when its pooled
-- winner was confirmed faster than the baseline and than the public recipe, 'recipe' or
-- 'baseline' when that one is the answer instead (winner_trial_id is then its trial); NULL
-- when no confirmation chose a winner.
ALTER TABLE sweeps ADD COLUMN winner_kind TEXT
  CHECK (winner_kind IS NULL OR winner_kind IN ('search', 'recipe', 'baseline'));
