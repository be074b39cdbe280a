#!/usr/bin/env bash
# Orchestration cost benchmark (not run by CI: it measures, it does not gate). Numbers and
# their floors: docs/COST.md.
#  1. per-trial overhead: N trials of a trivial command (printf writing 5 JSON step lines),
#     random{}, parallel 1 and 2, against plain spawn loops of the same command in the same
#     run: bare, through flagtune-supervise, through `flagtune __supervise` (the full program);
#     flagtune itself with its fork server (the default), with the per-trial exec path
#     (FLAGTUNE_NO_FORK_SERVER=1: libuv forks flagtune, which execs flagtune-supervise), and
#     without flagtune-supervise beside it (a copy of the binary alone: the executor then falls
#     back to the full program as its per-trial supervisor). Then a second table takes the fork
#     server's parts away one at a time: without the spare supervisor forked ahead
#     (FLAGTUNE_NO_SPARE=1), with the command started by fork instead of vfork
#     (FLAGTUNE_SUPERVISE_FORK=1), and BASE=DIR's flagtune (another build, e.g. of main: a
#     before/after in the same run). The sweeps skip the software probe (a fixed cost per run,
#     not per trial: section 4 and docs/COST.md);
#  2. output: one trial flooding FLOOD_MB of non-step lines: flagtune's own CPU against what
#     the same writer spends writing to /dev/null, as MB/s;
#  3. memory: peak RSS (VmHWM) of flagtune with a 1 GiB-output trial and with a BIG-trial
#     random{} sweep, and RSS over time for the growth per trial;
#  4. start-up: /bin/true, `flagtune --help`, `flagtune check`, and `lua5.4 -e ''` (a Lua
#     state's creation) where installed.
# Usage: bench_orchestration.sh [BUILD_DIR]   (env: N=1000 RUNS=3 FLOOD_MB=200 BIG=10000;
#        BIG=0 skips the long sweep; ONLY=1 runs section 1 alone; BASE=BUILD_DIR adds that
#        build's flagtune to section 1's second table)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ft=$build/flagtune
sup=$build/flagtune-supervise
selfcpu="python3 $root/tests/bench/selfcpu.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FLAGTUNE_LOG_DIR="$work/logs"
N=${N:-1000} RUNS=${RUNS:-3} FLOOD_MB=${FLOOD_MB:-200} BIG=${BIG:-10000}
mkdir alone && cp "$ft" alone/flagtune # no flagtune-supervise beside it
source "$root/tests/bench/per_trial_exp.sh" # exp NAME TRIALS PARALLEL
# A fresh database and no logs: a rerun of sweep 1 would otherwise reopen the last run's trial
# logs with O_TRUNC, and ext4 frees (and discards) their blocks at the open and writes the new
# data back at the close (its auto_da_alloc for a truncated file): 15 % of flagtune's CPU
# and synchronous I/O per trial that a first run of a sweep never pays.
fresh() { rm -rf b.db* "$FLAGTUNE_LOG_DIR"; }
now() { date +%s%N; }
per_ms() { echo "scale=3; ($2 - $1) / 1000000 / $N" | bc -l; }

echo "## 1. per-trial cost, N=$N, medians of $RUNS paired runs (ms per trial)"
echo "| run | bare loop | loop via flagtune-supervise | loop via flagtune __supervise | flagtune p1 | flagtune p2 | p1, exec path | p2, exec path | p1, full-program supervisor | p1 / bare | p2 / bare |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
exp p1 "$N" 1
exp p2 "$N" 2
for r in $(seq "$RUNS"); do
  s=$(now); for _ in $(seq "$N"); do /usr/bin/printf "$five" > /dev/null; done; e=$(now)
  bare=$(per_ms "$s" "$e")
  s=$(now); for _ in $(seq "$N"); do "$sup" __supervise -- /usr/bin/printf "$five" > /dev/null; done; e=$(now)
  viasup=$(per_ms "$s" "$e")
  s=$(now); for _ in $(seq "$N"); do "$ft" __supervise -- /usr/bin/printf "$five" > /dev/null; done; e=$(now)
  viafull=$(per_ms "$s" "$e")
  fresh; s=$(now); "$ft" -q run p1.lua --db b.db > /dev/null; e=$(now); p1=$(per_ms "$s" "$e")
  fresh; s=$(now); "$ft" -q run p2.lua --db b.db > /dev/null; e=$(now); p2=$(per_ms "$s" "$e")
  fresh; s=$(now); FLAGTUNE_NO_FORK_SERVER=1 "$ft" -q run p1.lua --db b.db > /dev/null; e=$(now); x1=$(per_ms "$s" "$e")
  fresh; s=$(now); FLAGTUNE_NO_FORK_SERVER=1 "$ft" -q run p2.lua --db b.db > /dev/null; e=$(now); x2=$(per_ms "$s" "$e")
  fresh; s=$(now); alone/flagtune -q run p1.lua --db b.db > /dev/null; e=$(now); old=$(per_ms "$s" "$e")
  ok=$(sqlite3 b.db "SELECT count(*) FROM trials WHERE status='ok'")
  [ "$ok" = "$N" ] || echo "warning: $ok of $N trials ok"
  printf '| %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |\n' "$r" "$bare" "$viasup" "$viafull" "$p1" "$p2" "$x1" "$x2" "$old" \
    "$(echo "$p1 / $bare" | bc -l)" "$(echo "$p2 / $bare" | bc -l)"
done
echo
echo "The fork server's parts, one at a time (ms per trial, paired runs, load average at the end of each row):"
base_ft=""
[ -n "${BASE:-}" ] && base_ft=$(cd "$BASE" && pwd)/flagtune
echo "| run | bare loop | p1 | p2 | p1, no spare | p2, no spare | p1, command by fork | p2, command by fork |${base_ft:+ p1, BASE | p2, BASE |} p1 / bare | p2 / bare | p1 no spare / bare | p1 fork / bare |${base_ft:+ p1 BASE / bare | p2 BASE / bare |} load |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${base_ft:+ ---: | ---: |} ---: | ---: | ---: | ---: |${base_ft:+ ---: | ---: |} ---: |"
sweep_ms() { # PARALLEL [ENV...]: one sweep of p$1.lua, ms per trial
  local par=$1 s e
  shift
  fresh
  s=$(now)
  env "$@" "${sweep_ft:-$ft}" -q run "p$par.lua" --db b.db > /dev/null
  e=$(now)
  per_ms "$s" "$e"
}
ratio() { echo "$1 / $2" | bc -l; }
for r in $(seq "$RUNS"); do
  s=$(now); for _ in $(seq "$N"); do /usr/bin/printf "$five" > /dev/null; done; e=$(now)
  bare=$(per_ms "$s" "$e")
  a1=$(sweep_ms 1) a2=$(sweep_ms 2)
  n1=$(sweep_ms 1 FLAGTUNE_NO_SPARE=1) n2=$(sweep_ms 2 FLAGTUNE_NO_SPARE=1)
  f1=$(sweep_ms 1 FLAGTUNE_SUPERVISE_FORK=1) f2=$(sweep_ms 2 FLAGTUNE_SUPERVISE_FORK=1)
  row=$(printf '| %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |' "$r" "$bare" "$a1" "$a2" "$n1" "$n2" "$f1" "$f2")
  tail=$(printf ' %.2f | %.2f | %.2f | %.2f |' "$(ratio "$a1" "$bare")" "$(ratio "$a2" "$bare")" "$(ratio "$n1" "$bare")" "$(ratio "$f1" "$bare")")
  if [ -n "$base_ft" ]; then
    b1=$(sweep_ft=$base_ft sweep_ms 1) b2=$(sweep_ft=$base_ft sweep_ms 2)
    row="$row$(printf ' %.3f | %.3f |' "$b1" "$b2")"
    tail="$tail$(printf ' %.2f | %.2f |' "$(ratio "$b1" "$bare")" "$(ratio "$b2" "$bare")")"
  fi
  echo "$row$tail $(cut -d' ' -f1 /proc/loadavg) |"
done
echo
echo "CPU split of one parallel-1 run (flagtune itself vs its trials and supervisors):"
fresh; $selfcpu --label "flagtune run p1 ($N trials)" "$ft" -q run p1.lua --db b.db
fresh; FLAGTUNE_NO_FORK_SERVER=1 $selfcpu --label "flagtune run p1, exec path ($N trials)" "$ft" -q run p1.lua --db b.db
fresh; FLAGTUNE_NO_SPARE=1 $selfcpu --label "flagtune run p1, no spare ($N trials)" "$ft" -q run p1.lua --db b.db
fresh; FLAGTUNE_SUPERVISE_FORK=1 $selfcpu --label "flagtune run p1, command by fork ($N trials)" "$ft" -q run p1.lua --db b.db
if [ -n "$base_ft" ]; then
  fresh; $selfcpu --label "BASE's flagtune run p1 ($N trials)" "$base_ft" -q run p1.lua --db b.db
fi
[ "${ONLY:-}" = 1 ] && exit 0 # ONLY=1: section 1 alone

echo
echo "## 2. output flood: one trial writing $FLOOD_MB MB of non-step lines"
cat > flood.lua <<LUA
return experiment {
  name = "flood",
  command = { "sh", "-c",
    "yes 'step line of output that is not a metric, printed again and again by a noisy trial' | head -c $((FLOOD_MB * 1048576)); echo; echo '{\"step_time_ms\": 2}'" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 4) },
  budget = { trials = 2 }, timeout = "10m", seed = 1,
}
LUA
cat > quiet.lua <<'LUA'
return experiment {
  name = "quiet",
  command = { "sh", "-c", "echo '{\"step_time_ms\": 2}'" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 4) },
  budget = { trials = 2 }, seed = 1,
}
LUA
rm -f f.db*; $selfcpu --label "flagtune, 2 trials x $FLOOD_MB MB" "$ft" -q run flood.lua --db f.db
rm -f f.db*; $selfcpu --label "flagtune, 2 quiet trials (the fixed cost)" "$ft" -q run quiet.lua --db f.db
$selfcpu --label "the writer alone to /dev/null, $FLOOD_MB MB" sh -c \
  "yes 'step line of output that is not a metric, printed again and again by a noisy trial' | head -c $((FLOOD_MB * 1048576)) > /dev/null"
echo "(flagtune's MB/s = 2 x $FLOOD_MB / (flood self CPU - quiet self CPU))"

echo
echo "## 3. memory"
cat > gig.lua <<'LUA'
return experiment {
  name = "gig",
  command = { "sh", "-c",
    "yes 'step line of output that is not a metric, printed again and again by a noisy trial' | head -c 1073741824; echo; echo '{\"step_time_ms\": 2}'" },
  metric = { json = "step_time_ms" },
  flags = { xla_gpu_autotune_level = int(0, 4) },
  budget = { trials = 2 }, timeout = "20m", seed = 1,
}
LUA
rm -f g.db*; $selfcpu --label "flagtune, 2 trials x 1 GiB output" "$ft" -q run gig.lua --db g.db
if [ "$BIG" -gt 0 ]; then
  exp big "$BIG" 2
  rm -f big.db*
  SELFCPU_RSS_LOG=rss.log $selfcpu --label "flagtune, $BIG-trial random{} sweep, parallel 2" "$ft" -q run big.lua --db big.db
  python3 - rss.log <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
if rows:
    n = len(rows)
    for frac in (0.1, 0.25, 0.5, 0.75, 1.0):
        t, r = rows[min(n - 1, int(frac * n) - 1 if frac < 1 else n - 1)]
        print("  at %3d%% of the run (%.0f s): RSS %.1f MiB" % (frac * 100, t, r / 1024))
PY
fi

echo
echo "## 4. start-up (median of 21 runs, ms)"
python3 - "$ft" "$work/p1.lua" <<'PY'
import shutil, statistics, subprocess, sys, time
ft, exp = sys.argv[1], sys.argv[2]
cases = [("/bin/true", ["/bin/true"]), ("flagtune --help", [ft, "--help"]),
         ("flagtune check", [ft, "check", exp])]
if shutil.which("lua5.4"): cases.insert(1, ("lua5.4 -e ''", ["lua5.4", "-e", ""]))
for name, argv in cases:
    ts = []
    for _ in range(21):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ts.append((time.perf_counter() - t) * 1e3)
    print("  %-16s %.2f" % (name, statistics.median(ts)))
PY
