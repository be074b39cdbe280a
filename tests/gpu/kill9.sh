#!/usr/bin/env bash
# The orchestrator killed with -9 while a real JAX trial holds the GPU, then resumed.
#
#   bash tests/gpu/kill9.sh BIN_DIR DEB_DIR OUT_DIR
#
# BIN_DIR and DEB_DIR as for tests/gpu/run.sh. Runs a 4-layer transformer sweep, waits until a
# trial's python3 holds GPU memory (nvidia-smi's compute apps), 10 s more (KILL_AFTER), sends
# SIGKILL to flagtune alone (not its group: what the OOM killer or `kill -9 PID` does), then
# samples every 0.1 s until no process of the trial is left and the GPU holds no memory for
# one, and writes how long each took. Then `flagtune resume` finishes the sweep. Writes to
# OUT_DIR: kill9.txt (the timeline), the run's and resume's texts, show, and the database.
set -u
out=$3
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/gpu/lib.sh
source "$repo/tests/gpu/lib.sh"
gpu_setup /tmp/ftk9 "$1" "$2"

cp "$repo"/experiments/jax_transformer.py "$work/"
sed -e 's/"--layers", "8" }/"--layers", "4" }/' -e 's/name = "jax-transformer-1gpu"/name = "k9"/' \
    -e 's/strategy = tpe { startup = 10 }/strategy = random{}, confirm = false/' \
    -e 's/budget = { trials = 40, steps = 30, hours = 2 }/budget = { trials = 4, steps = 40 }/' \
    "$repo/experiments/jax_transformer.lua" >"$work/k9.lua"
cd "$work" || exit 1
log=$out/kill9.txt
flagtune check k9.lua >"$log" 2>&1 || { cat "$log"; exit 1; }

apps() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>/dev/null; }
trial_procs() { pgrep -f jax_transformer.py; }
ms() { date +%s%3N; }

step "sweep k9, killed with -9 mid-trial"
flagtune run k9.lua >"$out/run.txt" 2>&1 &
ft=$!
# Wait (at most 120 s) for a trial to hold GPU memory, then 10 s more (its compile or steps).
for _ in $(seq 1200); do
  [ -n "$(apps)" ] && break
  sleep 0.1
done
sleep "${KILL_AFTER:-10}"
{
  echo "before the kill:"; apps; echo "trial processes: $(trial_procs | tr '\n' ' ')"
  ps -o pid,ppid,pgid,sid,comm -p "$(trial_procs | head -1)" 2>/dev/null
} >>"$log"
k0=$(ms)
kill -9 "$ft"
gone_procs="" gone_mem=""
for _ in $(seq 300); do
  [ -z "$gone_procs" ] && [ -z "$(trial_procs)" ] && gone_procs=$(($(ms) - k0))
  [ -z "$gone_mem" ] && [ -z "$(apps)" ] && gone_mem=$(($(ms) - k0))
  [ -n "$gone_procs" ] && [ -n "$gone_mem" ] && break
  sleep 0.1
done
wait "$ft" 2>/dev/null
{
  echo "after SIGKILL to flagtune (pid $ft):"
  echo "trial processes gone after: ${gone_procs:-NOT within 30 s} ms"
  echo "GPU memory released after: ${gone_mem:-NOT within 30 s} ms"
  echo "left: $(trial_procs | tr '\n' ' ')"; apps
  pgrep -fa flagtune-supervise || echo "no flagtune-supervise left"
} >>"$log"
# What the database says of the dead sweep: `sweeps` must read `died` (its flagtune is gone from
# this host), and the running trial's row must hold the pid of the trial's process group leader
# (written with the begin row since the fork server announces its spares).
flagtune sweeps >>"$log" 2>&1
python3 - "$work/gpu.db" >>"$log" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT id, status, pid, host FROM sweeps"):
    print("sweep row:", row)
for row in db.execute("SELECT id, status, role, pid FROM trials ORDER BY id"):
    print("trial row:", row)
PY
cat "$log"
flagtune show 1 >"$out/show_killed.txt" 2>&1; cat "$out/show_killed.txt"

step "resume"
timeout -s INT 200 flagtune resume 1 >"$out/resume.txt" 2>&1
echo "rc=$?" >>"$out/resume.txt"; tail -12 "$out/resume.txt"
flagtune show 1 >"$out/show.txt" 2>&1; cat "$out/show.txt"
cp "$work/gpu.db" "$out/k9.db" 2>/dev/null
step finished
