#!/usr/bin/env bash
# End-to-end: `flagtune export` is safe in every shell it names, whatever the database holds.
# The winner's row is given hostile values (quotes, a trailing backslash, $(...), backticks,
# newlines, globs) and variables that would change what a shell runs; then each export is
# really sourced:
#  1. --format sh in bash, dash, zsh and ksh: every value arrives byte for byte, nothing runs
#  2. --format fish in fish: the same (fish reads \' and \\ inside '...' as escapes)
#  3. PATH, LD_PRELOAD, PROMPT_COMMAND, BASH_ENV from the database are left out with a warning
#     and a comment; --unsafe-env keeps them
#  4. --format env refuses a newline; --format json is valid JSON (UTF-8) for any bytes
# Usage: test_export_shells.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

need_shell() { # in CI a shell the export names must be there; elsewhere its part is skipped
  command -v "$1" > /dev/null && return 0
  [ "${CI:-}" = true ] && die "$1 is not installed (tests/deps.sh)"
  skip "$1 is not installed"
  return 1
}

cat > e.lua <<LUA
return experiment {
  name = "e", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = { xla_gpu_enable_latency_hiding_scheduler = bool() },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = random {}, budget = { trials = 4, steps = 6 }, seed = 11,
}
LUA
"$ft" -q run e.lua > /dev/null 2>&1 || die "the sweep did not run"

# The hostile values, in the order the variables are printed back.
names=(V_QUOTE V_BACKSLASH V_BOTH V_SUBST V_TICKS V_DQ V_NL V_GLOB V_EMPTYQ V_SEMI)
values=("it's" 'ends in \' "x\\'y\\\\" '$(touch pwned1)' '`touch pwned2`' 'a"b\"c$HOME' \
        $'two\nlines\n' '* ?[a] ~root' "'''" '; touch pwned3 #')
xla='--xla_dump_to="/tmp/a b" $(touch pwned4) `touch pwned5` \'
obj="json_object("
for i in "${!names[@]}"; do
  v=${values[$i]//\'/\'\'}
  obj+="'${names[$i]}', '${v//$'\n'/\' || char(10) || \'}', "
done
obj+="'PATH', '/tmp/evil', 'LD_PRELOAD', '/tmp/evil.so', 'PROMPT_COMMAND', 'touch pwned6', "
obj+="'BASH_ENV', '/tmp/evil.sh')"
sql "$FLAGTUNE_DB" "UPDATE trials SET env = $obj, xla_flags = '${xla//\'/\'\'}' WHERE id = (SELECT trial_id FROM best)" \
  || die "could not plant the values"
expected() { # NAME=value\0 for each, as the shells print them back
  printf 'XLA_FLAGS=%s\0' "$xla"
  for i in "${!names[@]}"; do printf '%s=%s\0' "${names[$i]}" "${values[$i]}"; done
}
expected > want.bin

"$ft" export 1 -o x.sh 2> x.err
check_eq "export --format sh: exit 0" "$?" 0
for sh in bash dash zsh ksh; do
  need_shell "$sh" || continue
  rm -f pwned*
  list="XLA_FLAGS ${names[*]}"
  "$sh" -c ". ./x.sh; for n in $list; do eval \"v=\\\$\$n\"; printf '%s=%s\\0' \"\$n\" \"\$v\"; done; printf '%s' \"\$PATH\" > path.txt" > got.bin 2> "$sh.err"
  check "$sh: every value arrives byte for byte" cmp -s got.bin want.bin
  check "$sh: nothing ran (no pwned file)" [ -z "$(ls pwned* 2> /dev/null)" ]
  check_eq "$sh: PATH is not the database's" "$(cat path.txt)" "$PATH"
done

"$ft" export 1 --format fish -o x.fish 2> fish.err
check_eq "export --format fish: exit 0" "$?" 0
check "fish lines are set -gx" grep -q "^set -gx V_BACKSLASH 'ends in \\\\\\\\'$" x.fish
if need_shell fish; then
  rm -f pwned*
  fish -c "source x.fish; for n in XLA_FLAGS ${names[*]}; printf '%s=%s\\0' \$n \"\$\$n\"; end" > got.bin 2> fish.run.err
  check "fish: every value arrives byte for byte" cmp -s got.bin want.bin
  check "fish: nothing ran" [ -z "$(ls pwned* 2> /dev/null)" ]
  # The sh format is not for fish: its value ending in a backslash is misread there.
  fish -c "source x.sh; printf '%s' \$V_BACKSLASH" > sh-in-fish.txt 2> /dev/null
  check "the sh format misreads in fish (why fish has its own)" \
    not [ "$(cat sh-in-fish.txt)" = 'ends in \' ]
fi

# 3. variables that change what the shell runs
for f in x.err fish.err; do
  for n in PATH LD_PRELOAD PROMPT_COMMAND BASH_ENV; do
    check "$f: $n is named as left out" grep -q "left out of the export: .*\\b$n\\b" "$f"
  done
done
check "x.sh does not set them" not grep -qE '^export (PATH|LD_PRELOAD|PROMPT_COMMAND|BASH_ENV)=' x.sh
has x.sh "# left out: "
"$ft" export 1 --unsafe-env > unsafe.sh 2> unsafe.err
check "--unsafe-env keeps them" grep -q "^export LD_PRELOAD='/tmp/evil.so'$" unsafe.sh
check "--unsafe-env: no warning" not grep -q "left out" unsafe.err
"$ft" export 1 --format json > x.json 2> /dev/null
check "json leaves them out too" python3 -c "
import json
d = json.load(open('x.json'))
assert not set(d['env']) & {'PATH', 'LD_PRELOAD', 'PROMPT_COMMAND', 'BASH_ENV'}, d
assert any(c.startswith('left out: ') for c in d['comments']), d"

# 4. env refuses a newline; json carries any bytes as valid JSON
"$ft" export 1 --format env > x.env 2> env.err
check_eq "env with a newline in a value: exit 2" "$?" 2
has env.err "holds a line break, which an env file cannot carry"
check "json is valid JSON with the values" python3 -c "
import json,sys
d = json.load(open('x.json', encoding='utf-8'))
assert d['env']['V_NL'] == 'two\nlines\n' and d['env']['V_BACKSLASH'] == 'ends in \\\\', d
assert d['XLA_FLAGS'].endswith('\\\\')"
sql "$FLAGTUNE_DB" "UPDATE trials SET env = CAST(X'7B2256223A2261FF62C3A9227D' AS TEXT) WHERE id = (SELECT trial_id FROM best)"
"$ft" export 1 --format json > bytes.json 2> bytes.err
check_eq "json of a value that is not UTF-8: exit 0" "$?" 0
check "it is valid UTF-8 JSON, the bad byte as U+FFFD" python3 -c "
import json
d = json.loads(open('bytes.json', 'rb').read().decode('utf-8', 'strict'))
assert d['env']['V'] == 'a\ufffdb\u00e9', d"
has bytes.err "not UTF-8"
finish
