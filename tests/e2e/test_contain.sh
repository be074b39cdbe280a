#!/usr/bin/env bash
# Reliability: nothing a trial starts outlives the trial (docs/RELIABILITY.md, "Trial
# containment"). Trials that leave a background helper (`sleep 600 &`), a setsid() helper, a
# double-forked daemon, 200 background sleeps, or a setsid() helper and then hang until their
# timeout: right after the sweep (no waiting) no process carrying the trial's environment mark
# is alive, the trials end as they would have without the helpers, and each trial's record
# says how many leftovers were killed.
# Usage: test_contain.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

write_exp() { # file name iteration timeout command...
  local file=$1 name=$2 iter=$3 timeout=$4
  shift 4
  local cmd="" w
  for w in "$@"; do cmd="$cmd\"$w\", "; done
  cat > "$file" <<LUA
return experiment {
  name = "$name", model = "m", hardware = "h",
  command = { $cmd },
  env = { REL_MARK = "$$", REL_ITER = "$iter" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 }, parallel = 2, grace = 1, timeout = "$timeout", seed = 1,
}
LUA
}

# a. The three ways out of a process group, then 5 steps and exit 0.
export FLAGTUNE_DB="$work/three.db"
write_exp three.lua three three 30s "$stub" helper 600 setsid-helper 600 double-fork 600 \
  steps 5 10
"$ft" -q run three.lua > three.out 2> three.err
code=$?
check_eq "three escapes: exit 0" "$code" 0
check_eq "three escapes: no process left at once" "$(procs_with REL_ITER=three | wc -l)" 0
check_eq "three escapes: both trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 2
check_eq "three escapes: each record says 3 leftovers were killed" \
  "$(val "SELECT count(*) FROM trials WHERE error LIKE 'flagtune: killed 3 leftover processes after the command ended%'")" 2

# b. 200 background sleeps per trial (the issue: 2 trials left 400 processes).
export FLAGTUNE_DB="$work/many.db"
write_exp many.lua many many 30s /bin/sh -c \
  "i=0; while [ \$i -lt 200 ]; do sleep 600 & i=\$((i+1)); done; exec $stub steps 5 10"
"$ft" -q run many.lua > many.out 2> many.err
code=$?
check_eq "200 helpers: exit 0" "$code" 0
check_eq "200 helpers: no process left at once" "$(procs_with REL_ITER=many | wc -l)" 0
check_eq "200 helpers: both trials ok" "$(val "SELECT count(*) FROM trials WHERE status='ok'")" 2
check_eq "200 helpers: each record says 200" \
  "$(val "SELECT count(*) FROM trials WHERE error LIKE 'flagtune: killed 200 leftover processes%'")" 2

# c. A setsid() helper, then the command hangs ignoring SIGTERM: timeout, TERM, KILL after the
# grace, and the helper (outside the group) dies with it.
export FLAGTUNE_DB="$work/hang.db"
write_exp hang.lua hang hang 1s "$stub" setsid-helper 600 ignore-term 60
t0=$(date +%s%N)
"$ft" -q run hang.lua --keep-going > hang.out 2> hang.err # both trials hang: the failed baseline must not stop it
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check_eq "hanging trial: no process left at once" "$(procs_with REL_ITER=hang | wc -l)" 0
check_eq "hanging trial: both trials timeout" \
  "$(val "SELECT count(*) FROM trials WHERE status='timeout'")" 2
check "hanging trial: sweep within timeout + grace + 3 s (${ms} ms)" [ "$ms" -lt 5000 ]

finish
