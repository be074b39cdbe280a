#!/usr/bin/env bash
# The live view (docs/CLI.md, "run"): on a terminal (tmux: send-keys, capture-pane) a status
# area redrawn in place under the trial lines (done/planned, running trials with elapsed time
# and steps, outcome counts, best so far, ETA), erased at the end; lines fitted to the
# terminal's width, colours unless NO_COLOR; plain timestamped lines when not a terminal;
# -q and -v. The counter never passes its total after a resume, the baseline's
# re-measurement shows no speedup, halving's short rungs are marked, byte thresholds are
# humanised, defaults are left out, and a running trial's steps are in the database.
# Usage: test_progress.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# exp FILE STEPS MS [EXTRA]: trials of STEPS steps of MS ms each, over a long-named space.
exp() {
  cat > "$1" <<LUA
return experiment {
  name = "pg", model = "m", hardware = "h",
  command = { "$stub", "steps", "$2", "$3" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_reduce_combine_threshold_bytes = choice { 67108864, 134217728, 268435456 },
  },
  vars = { A_RATHER_LONG_ENVIRONMENT_VARIABLE_NAME = choice { "first-long-value", "second-long-value" } },
  budget = { trials = 6 }, seed = 3, software_probe = false,
  ${4:-}
}
LUA
}
trial_lines() { grep -E '\[ *[0-9]+/[0-9]+\] #' "$1"; }

# ---- not a terminal: timestamped lines, abbreviations, defaults left out
exp plain.lua 3 1 'confirm = { top = 1, repeats = 1 }, budget = { trials = 8 },'
sed -i '/budget = { trials = 6 }, seed = 3/s/budget = { trials = 6 }, //' plain.lua
"$ft" run plain.lua > out 2> err
check_eq "plain: exit 0" "$?" 0
bad=$(trial_lines err | grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} \[')
check_eq "plain: every trial line starts with a timestamp" "$bad" 0
check "plain: byte thresholds humanised" grep -qE 'all_reduce_combine_threshold_bytes=(64|128|256)MiB' err
check "plain: no raw byte counts" lacks -qE '=(67108864|134217728|268435456)' err
check "plain: xla_gpu_ and enable_ dropped, true as +name" lacks -q 'xla_gpu_\|enable_latency' err
check "plain: a flag at its default (false) left out" lacks -q 'latency_hiding_scheduler=false\|-latency_hiding_scheduler' err
base_re=$(grep 'baseline (re-measured)' err)
check "the baseline's re-measurement is marked" [ -n "$base_re" ]
check "and shows no speedup" lacks -qE '[0-9]x ' <<< "$base_re"
check "the baseline shows no speedup" lacks -qE '[0-9]x +baseline$' err
check "no line past its total" awk 'match($0, /\[ *[0-9]+\/[0-9]+\]/) { split(substr($0, RSTART + 1, RLENGTH - 2), a, "/"); if (a[1] + 0 > a[2] + 0) bad = 1 } END { exit bad }' err
has err "[   8/8] "

# ---- -q: no trial lines; -v: whole labels
"$ft" -q run plain.lua > out 2> err
check_eq "-q: no trial line" "$(trial_lines err | wc -l)" 0

# ---- resume: the counter goes on from where it stood and never passes its total
exp slow.lua 10 50 'budget = { trials = 10 }, parallel = 2,'
sed -i '/budget = { trials = 6 }, seed = 3/s/budget = { trials = 6 }, //' slow.lua
export FLAGTUNE_DB=$work/r.db
"$ft" run slow.lua > r1.out 2> r1.err &
pid=$!
for ((i = 0; i < 200; i++)); do
  n=$(val "SELECT count(*) FROM trials WHERE status = 'ok'" 2> /dev/null)
  [ "${n:-0}" -ge 4 ] && break
  sleep 0.05
done
kill -INT $pid
wait $pid
"$ft" resume 1 > r2.out 2> r2.err
check_eq "resume: exit 0" "$?" 0
check "resume: no line past its total" awk 'match($0, /\[ *[0-9]+\/[0-9]+\]/) { split(substr($0, RSTART + 1, RLENGTH - 2), a, "/"); if (a[1] + 0 > a[2] + 0) bad = 1 } END { exit bad }' r2.err
first=$(trial_lines r2.err | head -1 | sed -E 's/.*\[ *([0-9]+)\/.*/\1/')
check "resume: the counter starts past the trials done before ($first)" [ "$first" -ge 5 ]
has r2.err "[  10/10] "

# ---- halving: short rungs marked
cat > halv.lua <<LUA
return experiment {
  name = "hv", model = "m", hardware = "h",
  command = { "$stub", "steps", "{steps}", "1" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d", "e", "f", "g", "h", "i" } },
  strategy = halving { base = random {}, eta = 3, min_steps = 3 },
  budget = { trials = 8, steps = 9 }, seed = 1, software_probe = false,
}
LUA
export FLAGTUNE_DB=$work/h.db
"$ft" run halv.lua > out 2> err
check "halving: short-rung trials marked" grep -q '\[rung 3 steps\]' err

# ---- a running trial's steps are in the database before it ends
cat > long.lua <<LUA
return experiment {
  name = "lg", model = "m", hardware = "h",
  command = { "$stub", "steps", "60", "100" },
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b" } },
  budget = { trials = 2 }, seed = 1, software_probe = false,
}
LUA
export FLAGTUNE_DB=$work/l.db
"$ft" run long.lua > out 2> err &
pid=$!
seen=0
for ((i = 0; i < 60; i++)); do
  seen=$(val "SELECT count(*) FROM steps JOIN trials ON trials.id = steps.trial_id WHERE trials.status = 'running'" 2> /dev/null || echo 0)
  [ "${seen:-0}" -ge 5 ] && break
  sleep 0.1
done
check "steps of a running trial are stored as they arrive ($seen)" [ "${seen:-0}" -ge 5 ]
n=$(val "SELECT n_steps FROM trials WHERE status = 'running'" 2> /dev/null)
check "its n_steps counts them ($n)" [ "${n:-0}" -ge 5 ]
kill -INT $pid
wait $pid

# ---- a terminal: tmux
if ! command -v tmux > /dev/null; then
  skip "tmux is not installed (tests/deps.sh installs it): the terminal checks"
  finish
  exit
fi
export FLAGTUNE_DB=$work/tty.db
sock="-L flagtune-test-$$"
tmx() { tmux $sock "$@"; }
trap 'tmux $sock kill-server 2> /dev/null; lib_cleanup' EXIT
exp tty.lua 40 100 'parallel = 2,'
# Wide enough for the status area, too narrow for the labels.
tmx new-session -d -x 70 -y 40 -s ft "bash --norc --noprofile"
tmx send-keys -t ft "cd $work && export FLAGTUNE_DB=$FLAGTUNE_DB FLAGTUNE_LOG_DIR=$FLAGTUNE_LOG_DIR && unset NO_COLOR && $ft run tty.lua > tty.out; echo EXIT=\$? > tty.code" Enter
mid=""
for ((i = 0; i < 250; i++)); do
  sleep 0.1
  mid=$(tmx capture-pane -p -t ft)
  grep -q 'ETA' <<< "$mid" && grep -q 'running 2' <<< "$mid" && grep -q 'best #' <<< "$mid" &&
    grep -qE '#[0-9]+ +[0-9]+s +[0-9]+ steps' <<< "$mid" && break
done
echo "$mid" > mid.txt
has mid.txt "done"
has mid.txt "running 2"
check "status area: running trials with elapsed time and steps" grep -qE '#[0-9]+ +[0-9]+s +[0-9]+ steps' mid.txt
has mid.txt "ETA"
check "status area: best so far with speedup" grep -qE 'best #[0-9]+ [0-9.]+ ms [0-9.]+x' mid.txt
color=$(tmx capture-pane -e -p -t ft)
check "colours on a terminal" grep -q $'\e\\[32m' <<< "$color"
for ((i = 0; i < 300; i++)); do [ -e tty.code ] && break; sleep 0.1; done
has tty.code "EXIT=0"
end=$(tmx capture-pane -p -t ft -S -100)
echo "$end" > end.txt
check "the status area is erased at the end" lacks -qE '^[0-9]+/[0-9]+ done' end.txt
long=$(awk 'length($0) > 70' end.txt | wc -l)
check_eq "every line fits 70 columns" "$long" 0
check "a cut label ends with ..." grep -qE '\] #.*\.\.\.$' end.txt
# too narrow for the labels: the short names (what differs), with their legend once
has end.txt "arctb = all_reduce_combine_threshold_bytes"
check_eq "the legend is printed once" "$(grep -c 'names when a line is narrow' end.txt)" 1
check "a narrow line uses the short names" grep -qE '\] #.* arctb=(64|128|256)MiB' end.txt
check "no narrow line cuts a name" not grep -qE '\] #.*all_reduce_comb' end.txt
tmx kill-session -t ft

# NO_COLOR
tmx new-session -d -x 100 -y 40 -s nc "bash --norc --noprofile"
exp nc.lua 3 1
tmx send-keys -t nc "cd $work && export FLAGTUNE_DB=$work/nc.db FLAGTUNE_LOG_DIR=$FLAGTUNE_LOG_DIR NO_COLOR=1 && $ft run nc.lua > nc.out; echo EXIT=\$? > nc.code" Enter
for ((i = 0; i < 300; i++)); do [ -e nc.code ] && break; sleep 0.1; done
nc=$(tmx capture-pane -e -p -t nc -S -100)
check "NO_COLOR: no colours" lacks -q $'\e\\[3[0-9]m' <<< "$nc"
check "NO_COLOR: the trial lines are there" grep -q '\[   6/6\] #' <<< "$nc"
tmx kill-session -t nc
finish
