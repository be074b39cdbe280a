#!/usr/bin/env bash
# Reliability: a sweep that does not depend on its terminal or its directory
# (docs/RELIABILITY.md, "Self-contained sweeps" and "How to run a night").
#  1. `resume` from another directory, without the PATH entry `run` had: the command (found
#     on PATH at `run`), its relative script argument and the relative `workdir` resolve as
#     `run` saw them: every trial ok, done, exit 0.
#  2. SIGHUP (the SSH session closed) does not stop a sweep: it runs to `done`, exit 0, and
#     notes the hangup.
#  3. A closed pipe (`flagtune run ... 2>&1 | head -1`): no death by SIGPIPE, the sweep
#     runs to `done`, exit 0.
#  4. `run --detach` returns at once with the sweep id and its log; the sweep runs to `done`
#     in the background, its progress in the log; `resume --detach --log FILE` likewise.
#  5. SIGBUS (a memory-mapped file gone bad) is a message, not a silent exit 135.
# Usage: test_rel_place.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# 1. A project directory with a tool on its own PATH entry and a script beside the experiment.
mkdir -p proj/bin proj/data elsewhere
cat > proj/bin/fake-train <<SH
#!/bin/sh
# The script path is relative: it resolves against the trial's directory (proj/data).
[ -f ../train.cfg ] || { echo "no train.cfg from \$(pwd)" >&2; exit 3; }
exec "$sim" "\$@"
SH
chmod +x proj/bin/fake-train
echo "cfg" > proj/train.cfg
cat > proj/exp.lua <<LUA
return experiment {
  name = "place", model = "m", hardware = "h",
  command = { "fake-train", "--steps", "{steps}", "--time-scale", "0.004" },
  workdir = "data",
  env = { REL_MARK = "$$", REL_ITER = "place" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  strategy = random {}, budget = { trials = 10, steps = 9 }, seed = 2,
}
LUA
(cd proj && PATH="$work/proj/bin:$PATH" exec "$ft" -q run exp.lua > ../place.out 2>&1) &
pid=$!
for ((i = 0; i < 200; i++)); do
  [ "$(sql "$FLAGTUNE_DB" "SELECT count(*) FROM trials WHERE status = 'ok'" 2>/dev/null || echo 0)" -ge 3 ] && break
  sleep 0.02
done
kill -INT $pid
wait $pid
check_eq "run from proj/: interrupted" "$(val 'SELECT status FROM sweeps WHERE id=1')" interrupted
check_eq "the directory run ran in is stored" "$(val 'SELECT workdir FROM sweeps WHERE id=1')" "$work/proj"
check_eq "the command as it resolved is stored" \
  "$(val "SELECT json_extract(command_json, '\$[0]') FROM sweeps WHERE id=1")" "$work/proj/bin/fake-train"
(cd elsewhere && exec "$ft" -q resume 1 > ../resume.out 2>&1)
code=$?
check "resume from elsewhere, without proj/bin on PATH: exit 0 (got $code)" [ $code = 0 ]
check_eq "resumed: done" "$(val 'SELECT status FROM sweeps WHERE id=1')" done
check_eq "resumed: no trial failed" \
  "$(val "SELECT count(*) FROM trials WHERE status NOT IN ('ok', 'interrupted', 'oom', 'pruned')")" 0
check_eq "resumed: 10 trials counted" \
  "$(val "SELECT count(*) FROM trials WHERE status NOT IN ('interrupted', 'lost')")" 10
check "resumed: no log or database written in elsewhere/" [ -z "$(ls -A elsewhere)" ]

# A plain experiment for the rest: trials of ~0.2 s.
cat > plain.lua <<LUA
return experiment {
  name = "plain", model = "m", hardware = "h",
  command = { "$sim", "--steps", "{steps}", "--time-scale", "0.004" },
  env = { REL_MARK = "$$", REL_ITER = "plain" },
  metric = { json = "step_time_ms", skip = 1 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool(),
            xla_gpu_all_gather_combine_threshold_bytes = pow2("1MiB", "4GiB") },
  strategy = random {}, budget = { trials = 8, steps = 9 }, seed = 2,
}
LUA

# started DB: waits (up to 10 s) until the sweep in DB has recorded a trial.
started() {
  local i
  for ((i = 0; i < 500; i++)); do
    [ "$(sql "$1" 'SELECT count(*) FROM trials' 2>/dev/null || echo 0)" -ge 1 ] && return
    sleep 0.02
  done
}

# 2. SIGHUP.
"$ft" run plain.lua --db "$work/hup.db" > hup.out 2> hup.err &
pid=$!
started "$work/hup.db"
kill -HUP $pid
wait $pid
code=$?
check "SIGHUP: exit 0 (got $code)" [ $code = 0 ]
check_eq "SIGHUP: done" "$(FLAGTUNE_DB=$work/hup.db val 'SELECT status FROM sweeps')" done
has hup.err "SIGHUP (terminal closed): the sweep keeps running"

# 3. A closed pipe: head takes the first line and leaves.
"$ft" run plain.lua --db "$work/pipe.db" 2>&1 | head -n 1 > pipe.out
code=${PIPESTATUS[0]}
check "closed pipe: exit 0 (got $code)" [ $code = 0 ]
check_eq "closed pipe: done" "$(FLAGTUNE_DB=$work/pipe.db val 'SELECT status FROM sweeps')" done
check_eq "closed pipe: 8 trials" "$(FLAGTUNE_DB=$work/pipe.db val 'SELECT count(*) FROM trials')" 8

# 4. --detach.
t0=$(date +%s%N)
"$ft" run plain.lua --db "$work/det.db" --trials 16 --detach > det.out 2> det.err
code=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "     run --detach returned in $ms ms: $(head -n1 det.out)"
check "--detach: exit 0 (got $code)" [ $code = 0 ]
has det.out "flagtune: sweep 1 runs in the background"
has det.out "log: $FLAGTUNE_LOG_DIR/det.db/sweep-1/run.log"
check "--detach: returned before the sweep ended" \
  [ "$(FLAGTUNE_DB=$work/det.db val 'SELECT status FROM sweeps')" = running ]
for ((i = 0; i < 300; i++)); do
  [ "$(FLAGTUNE_DB=$work/det.db val 'SELECT status FROM sweeps')" = done ] && break
  sleep 0.05
done
check_eq "--detach: the sweep ran to done" "$(FLAGTUNE_DB=$work/det.db val 'SELECT status FROM sweeps')" done
log=$FLAGTUNE_LOG_DIR/det.db/sweep-1/run.log
for ((i = 0; i < 100; i++)); do grep -q "^best:" "$log" 2>/dev/null && break; sleep 0.05; done
has "$log" "[  16/16] "
has "$log" "status done"
# A detached child is its own session leader: no terminal can hang it up.
"$ft" run plain.lua --db "$work/det2.db" --trials 30 --detach > det2.out 2>&1
pid=$(sed -n 's/.*(pid \([0-9]*\)).*/\1/p' det2.out)
check_eq "--detach: its own session" "$(ps -o sid= -p "$pid" | tr -d ' ')" "$pid"
kill -INT "$pid"
for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
check_eq "--detach: SIGINT interrupts it" "$(FLAGTUNE_DB=$work/det2.db val 'SELECT status FROM sweeps')" interrupted
"$ft" resume 1 --db "$work/det2.db" --detach --log resume.log > det3.out 2>&1
check "resume --detach: exit 0" [ $? = 0 ]
has det3.out "log: $work/resume.log"
for ((i = 0; i < 400; i++)); do
  [ "$(FLAGTUNE_DB=$work/det2.db val 'SELECT status FROM sweeps')" = done ] && break
  sleep 0.05
done
check_eq "resume --detach: done" "$(FLAGTUNE_DB=$work/det2.db val 'SELECT status FROM sweeps')" done
for ((i = 0; i < 100; i++)); do grep -q "^best:" resume.log 2>/dev/null && break; sleep 0.05; done
has resume.log "resuming sweep 1"
"$ft" run missing.lua --detach > det4.out 2> det4.err
check "--detach with a bad experiment: exit 2 in the foreground" [ $? = 2 ]

# 5. SIGBUS: a message, exit 1.
"$ft" run plain.lua --db "$work/bus.db" > bus.out 2> bus.err &
pid=$!
started "$work/bus.db"
kill -BUS $pid
wait $pid
code=$?
check "SIGBUS: exit 1 (got $code)" [ $code = 1 ]
has bus.err "flagtune: SIGBUS: a memory-mapped file went bad under the sweep"
"$ft" -q resume 1 --db "$work/bus.db" > bus2.out 2>&1
check "SIGBUS: resumable (exit $?)" [ $? = 0 ]
finish
