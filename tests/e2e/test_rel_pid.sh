#!/usr/bin/env bash
# Reliability: the pid a trial's row holds is its supervisor's (the process resume's exec_reap
# looks for after a kill -9), whichever way it got there. The fork server announces each spare
# it forks, and the trial's begin row carries the announced pid when the spare will most
# likely serve it; the answer's pid decides, and a separate write follows when it differs.
#  a. the spare serves every trial (parallel 1): each row's pid is its command's parent;
#  b. no spare (FLAGTUNE_NO_SPARE=1: nothing announced, every pid written after the answer);
#  c. each trial's command kills the server's spare, so that the next trial's announced pid
#     is dead and a fresh fork serves it: the row must hold the fresh fork's pid, not the
#     announced one.
#  d. parallel 2: two trials at a time, each spare serving trial after trial (a pid is in
#     several rows), each row its own supervisor's pid all the same.
# Usage: test_rel_pid.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# The trial: records its parent (the supervisor) and, with KILL_SPARE, kills its server's
# spare (the child forked after this trial's answer) and records its pid. The server's other
# children are supervisors, this trial's and, on a slow build (ASan), an earlier trial's still
# ending: every one of them is in a ppid-N file, and none of them is killed.
cat > trial.sh <<'SH'
echo "$PPID" > "$PID_DIR/ppid-$FLAGTUNE_TRIAL"
date +%s%N > "$PID_DIR/start-$FLAGTUNE_TRIAL"
if [ -n "$KILL_SPARE" ]; then
  server=$(awk '{print $4}' "/proc/$PPID/stat")
  for i in 1 2 3 4 5 6 7 8 9 10; do
    cat "$PID_DIR"/ppid-* > "$PID_DIR/sups-$FLAGTUNE_TRIAL"
    spare=$(pgrep -P "$server" | grep -vxFf "$PID_DIR/sups-$FLAGTUNE_TRIAL")
    [ -n "$spare" ] && break
    sleep 0.05
  done
  for p in $spare; do kill -9 "$p" && echo "$p" >> "$PID_DIR/killed"; done
fi
printf '{"step_time_ms": 1.5}\n{"step_time_ms": 1.5}\n'
date +%s%N > "$PID_DIR/end-$FLAGTUNE_TRIAL"
SH

write_exp() { # name parallel
  cat > "$1.lua" <<LUA
return experiment {
  name = "$1",
  command = { "/bin/sh", "$work/trial.sh" },
  env = { REL_MARK = "$$", PID_DIR = "$work/$1" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 100000000) },
  budget = { trials = 6 }, parallel = $2, seed = 1, software_probe = false,
}
LUA
  mkdir -p "$work/$1"
}

# Every trial's stored pid against the parent its command saw; prints the mismatches.
wrong_pids() { # name db
  local n pid want
  while IFS='|' read -r n pid; do
    want=$(cat "$work/$1/ppid-$n" 2>/dev/null)
    [ "$pid" = "$want" ] || echo "trial $n: row $pid, supervisor ${want:-?}"
  done < <(sql "$2" "SELECT number, pid FROM trials ORDER BY number")
}

run_case() { # what name parallel [env...]
  local what=$1 name=$2 par=$3
  shift 3
  write_exp "$name" "$par"
  env "$@" FLAGTUNE_DB="$work/$name.db" "$ft" -q run "$name.lua" > "$name.out" 2>&1
  check "$what: sweep exits 0" [ $? = 0 ]
  check_eq "$what: 6 trials, all ok" \
    "$(sql "$work/$name.db" "SELECT count(*) FROM trials WHERE status = 'ok'")" 6
  check_eq "$what: every row holds its supervisor's pid" "$(wrong_pids "$name" "$work/$name.db")" ""
}

run_case "spare" spare 1
run_case "no spare" nospare 1 FLAGTUNE_NO_SPARE=1
run_case "spare killed" killed 1 KILL_SPARE=1
# The case must have done what it says: spares were killed, and none of them is in a row.
check "spare killed: spares were killed" [ -s "$work/killed/killed" ]
in_rows=$(sql "$work/killed.db" "SELECT pid FROM trials" | grep -cxFf "$work/killed/killed")
check_eq "spare killed: no killed spare's pid in a row" "$in_rows" 0
run_case "parallel 2" par2 2
# A pid in several rows is a spare that served them one after another, never two at once.
at_once() { # name db: prints each pid whose trials' commands overlapped in time
  local n pid
  sql "$2" "SELECT number, pid FROM trials" | while IFS='|' read -r n pid; do
    echo "$pid $(cat "$work/$1/start-$n" "$work/$1/end-$n" | tr '\n' ' ')"
  done | sort -k1,1n -k2,2n | awk 'NF != 3 { print "trial times missing"; next }
    $1 == p && $2 < e { print "pid " $1 " in two trials at once" } { p = $1; e = $3 }'
}
check_eq "parallel 2: no pid in two trials at once" "$(at_once par2 "$work/par2.db")" ""
finish
