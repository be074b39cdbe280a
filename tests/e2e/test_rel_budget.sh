#!/usr/bin/env bash
# Reliability: the time budget (docs/RELIABILITY.md, "Time budget"):
#  1. budget.hours (here 6 s, trials of ~1.2 s, parallel 1: a sweep that only stops starting
#     at the deadline starts a trial it cannot finish): no trial starts that cannot end before
#     the deadline, judged by the trials measured so far (mean or max duration of ok trials;
#     the baseline's before any other); the sweep ends `interrupted` with the error "time
#     budget" (its trial budget is unspent: `resume` continues it, test_rel_resume.sh), exit 0,
#     and its last trial finishes before created_at + hours; at least 3 trials ran.
#  2. --hours on the command line the same (3 s).
#  3. --until HH:MM[:SS] (a time already past today means tomorrow): 2 h ahead, the stored
#     budget_hours is the time left at start; a near deadline (5 s ahead) follows the same
#     rule as 1; --until 25:00 is exit 2.
#  4. a deadline shorter than the baseline's own run: the baseline is stopped at the deadline
#     and recorded `interrupted` (so `resume --hours` can run it again), nothing else starts,
#     the sweep ends within the deadline plus the grace, exit 1 (no ok trial).
# Usage: test_rel_budget.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"
write_exp() { # name extra
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1", model = "m", hardware = "h",
  command = { "$stub", "steps", "6", "200" },
  env = { REL_MARK = "$$", REL_ITER = "$1" },
  metric = { json = "step_time_ms", skip = 1 },
  vars = { V = int(1, 100, 1) },
  budget = { trials = 100 $2 }, seed = 1, grace = 1,
  software_probe = false, -- the time budget is under test, not python3's start-up
}
LUA
}
# Seconds between the sweep's start and its last trial's end, and the number of trials.
overrun() { # sweep-id budget-seconds -> true when the last trial ended within the budget
  val "SELECT (julianday(max(t.finished_at)) - julianday(s.created_at)) * 86400 <= $2
       FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.id = $1" | grep -qx 1
}
span() { val "SELECT round((julianday(max(t.finished_at)) - julianday(s.created_at)) * 86400, 2)
              FROM trials t JOIN sweeps s ON s.id = t.sweep_id WHERE s.id = $1"; }

# 6 s: room for at least 3 trials of ~1.2 s even under ASan (slower than a release build).
write_exp hours ', hours = "6s"'
"$ft" -q run hours.lua > /dev/null 2>&1
code=$?
n=$(val "SELECT count(*) FROM trials WHERE sweep_id=1")
echo "     budget.hours 6 s: exit $code, $n trials, last ended $(span 1) s after start"
check "budget.hours: exit 0" [ $code = 0 ]
check "budget.hours: at least 3 trials" [ "$n" -ge 3 ]
check "budget.hours: last trial ended before the deadline" overrun 1 6
check "budget.hours: sweep interrupted by its time budget (resumable)" \
  [ "$(val "SELECT status || ',' || error FROM sweeps WHERE id=1")" = "interrupted,time budget" ]

write_exp cli ''
"$ft" -q run cli.lua --hours 0.000833 > /dev/null 2>&1 # 3 s
code=$?
echo "     --hours 3 s: exit $code, last ended $(span 2) s after start"
check "--hours: last trial ended before the deadline" overrun 2 3

write_exp until ''
# A far deadline: the sweep runs its 3 trials; budget_hours is the time left at start.
"$ft" -q run until.lua --trials 3 --until "$(date -d '+2 hours' +%H:%M)" > /dev/null 2> until.err
code=$?
sid=$(val "SELECT max(id) FROM sweeps")
check "--until +2 h: exit 0 (got $code)" [ $code = 0 ]
check "--until +2 h: budget_hours stored (1.98-2.0 h)" \
  [ "$(val "SELECT budget_hours BETWEEN 1.98 AND 2.0 FROM sweeps WHERE id=$sid")" = 1 ]
# A near deadline, to the second.
until=$(date -d "+5 seconds" +%H:%M:%S)
"$ft" -q run until.lua --until "$until" > /dev/null 2>&1
code=$?
sid=$(val "SELECT max(id) FROM sweeps")
echo "     --until $until: exit $code, last ended $(span "$sid") s after start"
check "--until near: exit 0 (got $code)" [ $code = 0 ]
check "--until near: last trial ended before the deadline" overrun "$sid" 5.5
"$ft" -q run until.lua --until 25:00 > /dev/null 2> bad.err
check "--until 25:00: exit 2" [ $? = 2 ]

write_exp tiny ', hours = "1s"'
"$ft" -q run tiny.lua > /dev/null 2>&1
code=$?
sid=$(val "SELECT max(id) FROM sweeps")
check "deadline shorter than the baseline: exit 1 (got $code)" [ $code = 1 ]
check "deadline shorter than the baseline: only the baseline ran" \
  [ "$(val "SELECT count(*) FROM trials WHERE sweep_id=$sid")" = 1 ]
check "deadline shorter than the baseline: baseline interrupted" \
  [ "$(val "SELECT status FROM trials WHERE sweep_id=$sid AND number=0")" = interrupted ]
check "deadline shorter than the baseline: ended within deadline + grace" overrun "$sid" 3
finish
