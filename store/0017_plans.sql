-- Read plans that do not depend on statistics: trial_results reads each trial's sweep by
-- primary key (store/views.sql) instead of joining sweeps, whose order the planner chose
-- from ANALYZE statistics (a `show` of a 60,000-trial sweep read every trial and scanned the
-- sweeps for each). The views are made again from store/views.sql after this migration;
-- tests/unit/test_store_plan.c plans every read statement with and without statistics.
SELECT 1;
