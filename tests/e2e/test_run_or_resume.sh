#!/usr/bin/env bash
# Run or resume (src/sweep/rerun.c, docs/CLI.md): `flagtune run` of an experiment whose sweep is
# unfinished in the database continues it; --new, another --name, an edited file, or a done
# sweep start a new one; a sweep held by a live orchestrator is not taken (exit 2).
source "$(dirname "$0")/lib.sh"
cat > e.lua <<'LUA'
return experiment {
  name = "e", model = "m", hardware = "h",
  command = { "sh", "-c", "sleep $D; echo '{\"step_time_ms\": 5}'" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { A = choice { "1", "2", "3", "4", "5" }, D = choice { "1" } },
  strategy = grid {}, budget = { trials = 5 }, parallel = 1, seed = 1,
  confirm = false, prune = false,
}
LUA
sed -i "s/\\\$\\\$/$$/" e.lua
sweeps() { val "SELECT count(*) FROM sweeps"; }
started() { [ -s "$FLAGTUNE_DB" ] && [ "$(val "SELECT count(*) FROM trials WHERE status = 'ok'")" -ge 1 ]; }
wait_for() { local i; for ((i = 0; i < $1 * 10; i++)); do "${@:2}" && return 0; sleep 0.1; done; return 1; }

"$ft" run e.lua > r1.out 2>&1 & pid=$!
check "a trial ended" wait_for 30 started
kill -INT $pid; wait $pid
check_eq "interrupted: exit 130" "$?" 130
"$ft" run e.lua > r2.out 2>&1
check_eq "run again: exit 0" "$?" 0
has r2.out 'flagtune: continuing sweep 1 "e" (interrupted)'
has r2.out 'resuming sweep 1 "e": '
check_eq "one sweep, done, 5 ok" "$(val "SELECT count(*) || ' ' || max(status) || ' ' || (SELECT count(*) FROM trials WHERE status = 'ok') FROM sweeps")" "1 done 5"
"$ft" run e.lua > r3.out 2>&1
check_eq "a done sweep is not continued: sweep 2" "$(sweeps)" 2
check "nothing said of continuing" lacks -q continuing r3.out

"$ft" run e.lua > r4.out 2>&1 & pid=$!
three() { [ "$(sweeps)" = 3 ]; } # (a function: wait_for asks again each time)
check "sweep 3 runs" wait_for 30 three
"$ft" run e.lua > held.out 2>&1
check_eq "held by a live run: exit 2" "$?" 2
has held.out "sweep 3 is held by another flagtune (pid $pid"
"$ft" run e.lua --name other --trials 2 > other.out 2>&1
check_eq "--name other: a new sweep (4)" "$(sweeps)" 4
kill -INT $pid; wait $pid
"$ft" run e.lua --new --trials 2 > new.out 2>&1
check_eq "--new: a new sweep (5) beside the unfinished 3" "$(val "SELECT count(*) || ' ' || (SELECT status FROM sweeps WHERE id = 3) FROM sweeps")" "5 interrupted"
echo "-- edited" >> e.lua
"$ft" run e.lua --trials 2 > edited.out 2>&1
check_eq "an edited file is another experiment: sweep 6" "$(sweeps)" 6
check "nothing said of continuing" lacks -q continuing edited.out
finish
