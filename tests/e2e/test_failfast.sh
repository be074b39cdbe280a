#!/usr/bin/env bash
# Fail fast, say why (docs/RELIABILITY.md, "A first night that cannot fail quietly"): a
# command that cannot start is an error of `check` and `run` before anything is written
# (a mistyped program with a "did you mean", a script its interpreter would not find, a path
# that is not executable); a step budget the command never hears of is a warning; a failed
# baseline stops the sweep with its reason and log (unless --keep-going); five first trials
# that fail alike stop it too, and trials that fail in different ways do not.
# Usage: test_failfast.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

# exp FILE COMMAND-LUA [EXTRA-LUA]: an experiment of 8 trials over one variable.
exp() {
  cat > "$1" <<LUA
return experiment {
  name = "ff", model = "m", hardware = "h",
  command = $2,
  env = { REL_MARK = "$$" },
  metric = { json = "step_time_ms" },
  vars = { V = choice { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j" } },
  budget = { trials = 8 }, seed = 1,
  ${3:-}
}
LUA
}
rows() { [ -e "$FLAGTUNE_DB" ] && val "SELECT count(*) FROM sweeps" || echo 0; }

# ---- the command, checked before the first trial
exp typo.lua '{ "pythn3", "train.py" }'
"$ft" check typo.lua > out 2> err
check_eq "mistyped program: check exits 2" "$?" 2
has err "typo.lua:3: command[1] 'pythn3' is not a program on \$PATH"
if command -v python3 > /dev/null; then has err "(did you mean 'python3'?)"; fi
"$ft" run typo.lua > out 2> err
check_eq "mistyped program: run exits 2" "$?" 2
check_eq "mistyped program: nothing written" "$(rows)" 0

exp noscript.lua '{ "sh", "train.sh", "--fast" }'
"$ft" check noscript.lua > out 2> err
check_eq "missing script: check exits 2" "$?" 2
has err "noscript.lua:3: command[2] 'train.sh': no such file for sh to run (looked for $work/train.sh)"
printf 'exec %s steps 3 1\n' "$stub" > train.sh
"$ft" check noscript.lua > out 2> err
check_eq "the script there: check passes" "$?" 0

mkdir -p sub
exp inwork.lua '{ "sh", "train.sh" }' 'workdir = "sub",'
"$ft" check inwork.lua > out 2> err
check_eq "script looked up in the workdir: check exits 2" "$?" 2
has err "looked for $work/sub/train.sh"

printf '#!/bin/sh\nexit 0\n' > run.sh
exp noexec.lua '{ "./run.sh" }'
"$ft" check noexec.lua > out 2> err
check_eq "not executable: check exits 2" "$?" 2
has err "command[1] './run.sh' is not an executable file"

exp nosteps.lua "{ \"$stub\", \"steps\", \"3\", \"1\" }" 'budget = { trials = 8, steps = 5 },'
sed -i '/budget = { trials = 8 }, seed = 1,/s/budget = { trials = 8 }, //' nosteps.lua
"$ft" check nosteps.lua > out 2> err
check_eq "steps budget without {steps}: a warning only" "$?" 0
has err "warning: budget.steps = 5, but the command has no {steps}"

exp modarg.lua '{ "python3", "-m", "no.such.module" }'
if command -v python3 > /dev/null; then
  "$ft" check modarg.lua > out 2> err
  check_eq "python3 -m MODULE: no script to look for" "$?" 0
fi

# ---- a failed baseline stops the sweep, with its reason and log
exp base.lua "{ \"/bin/sh\", \"-c\", \"echo 'Fatal: CUDA driver not found' >&2; exit 3\" }" 'parallel = 2,'
"$ft" run base.lua > out 2> err
check_eq "failed baseline: exit 1" "$?" 1
check_eq "failed baseline: sweep failed" "$(val 'SELECT status FROM sweeps WHERE id = 1')" failed
has err "the baseline (trial 0) ended crash: Fatal: CUDA driver not found (log: $work/logs/t.db/sweep-1/trial-0000.log)"
has err "pass --keep-going"
# With parallel 2 search trials start beside the baseline; running the same instantly failing
# command, one may end (crash) and free its slot for the next before the baseline's own end is
# handled. What must hold: no trial starts after the baseline has ended.
n=$(val "SELECT count(*) FROM trials t, trials b WHERE t.sweep_id = 1 AND b.sweep_id = 1 AND b.number = 0 AND t.started_at > b.finished_at")
check_eq "failed baseline: no trial started after it ended" "$n" 0
check_eq "failed baseline: the baseline crashed" \
  "$(val "SELECT status FROM trials WHERE sweep_id = 1 AND number = 0")" crash
check_eq "failed baseline: nothing left running" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id = 1 AND status = 'running'")" 0
check "the recorded error names the reason" grep -q "Fatal: CUDA driver not found" <(val "SELECT error FROM sweeps WHERE id = 1")

"$ft" run base.lua --keep-going > out 2> err
check_eq "--keep-going: every trial runs" \
  "$(val "SELECT count(*) FROM trials WHERE sweep_id = 2 AND status = 'crash'")" 8
check_eq "--keep-going: sweep done" "$(val 'SELECT status FROM sweeps WHERE id = 2')" done
c=$(grep -c "Fatal: CUDA driver not found" err)
check "every crash prints its reason live ($c lines)" [ "$c" -ge 8 ]

# ---- five first trials that fail alike (their numbers differ): stopped
alike='if [ "$FLAGTUNE_TRIAL" = 0 ]; then exec '"$stub"' steps 3 1; fi; echo "Segfault at 0x$FLAGTUNE_TRIAL$$" >&2; exit 139'
exp alike.lua "{ \"/bin/sh\", \"-c\", [[$alike]] }" 'budget = { trials = 20 },'
sed -i '/budget = { trials = 8 }, seed = 1,/s/budget = { trials = 8 }, //' alike.lua
"$ft" run alike.lua > out 2> err
check_eq "alike failures: exit 1" "$?" 1
check_eq "alike failures: sweep failed" "$(val 'SELECT status FROM sweeps WHERE id = 3')" failed
check_eq "alike failures: baseline + 5 ran" "$(val 'SELECT count(*) FROM trials WHERE sweep_id = 3')" 6
has err "the first 5 trials all ended crash the same way: Segfault at 0x"

# ---- failures of different kinds: no stop
mixed='if [ "$FLAGTUNE_TRIAL" = 0 ]; then exec '"$stub"' steps 3 1; fi; if [ $((FLAGTUNE_TRIAL % 2)) = 0 ]; then echo "Error: disk" >&2; else echo "Error: net" >&2; fi; exit 1'
exp mixed.lua "{ \"/bin/sh\", \"-c\", [[$mixed]] }"
"$ft" run mixed.lua > out 2> err
check_eq "different failures: all 8 ran" "$(val 'SELECT count(*) FROM trials WHERE sweep_id = 4')" 8
check_eq "different failures: sweep done" "$(val 'SELECT status FROM sweeps WHERE id = 4')" done

# ---- a command that prints nothing the metric reads, and no error: the reason says so
exp silent.lua '{ "/bin/sh", "-c", "echo warming up" }'
"$ft" run silent.lua > out 2> err
check_eq "silent baseline: exit 1" "$?" 1
has err "ended no_metric: the metric read 0 step times (the first 0 skipped) and the command printed no error: check \`metric\` against the lines in the log"
# ---- the same with a log on stderr hiding stdout's lines: a JSON step line under another key
#      is named by its keys in the reason
exp wrongkey.lua '{ "/bin/sh", "-c", "echo starting >&2; echo \"{\\\"step\\\": 1, \\\"step_ms\\\": 12.5}\"" }'
"$ft" run wrongkey.lua > out 2> err
check_eq "wrong key: exit 1" "$?" 1
has err "the metric read 0 step times: no JSON line on stdout has the key 'step_time_ms'; the last holds the keys 'step', 'step_ms' (\`flagtune check EXPERIMENT --sample LOG\` shows what the metric reads)"
finish
