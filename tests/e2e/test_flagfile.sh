#!/usr/bin/env bash
# End-to-end: `export --format flagfile`, a file of XLA flags for XLA_FLAGS=/path/to/file.
# XLA reads such a file when XLA_FLAGS does not start with '-' (openxla/xla
# xla/parse_flags_from_env.cc:153-155 at 001918b, SetArgvFromEnv: "assume it's a file name")
# and splits it like the variable: whitespace " \t\r\n" between flags (:40, :136), quoted
# values --f="a b" (:112), and it stops at the first item that does not start with '-' (:102),
# so the file has no comments. flagtune-sim reads XLA_FLAGS the same way.
#  1. the file holds the winner's flags one per line, nothing else
#  2. a trial run with XLA_FLAGS=FILE (and the variables) prints the same steps as with the flags
#  3. the variables the file cannot hold are named on stderr
#  4. a quoted value with a blank stays one item; bad format names are refused, exit 2
# Usage: test_flagfile.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR
source "$(dirname "$0")/lib.sh"

cat > f.lua <<LUA
return experiment {
  name = "f", model = "sim-7b", hardware = "test-box",
  command = { "$sim", "--landscape", "fsdp8", "--steps", "{steps}", "--time-scale", "0" },
  metric = { json = "step_time_ms", skip = 2 },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "4GiB"),
  },
  vars = { XLA_PYTHON_CLIENT_MEM_FRACTION = range(0.75, 0.95, 0.05) },
  strategy = random {},
  budget = { trials = 8, steps = 8 },
  seed = 11,
}
LUA
"$ft" -q run f.lua > /dev/null 2>&1 || die "the sweep did not run"

# 1. the file
"$ft" export 1 --format flagfile -o flags.txt 2> export.err
check_eq "export --format flagfile exits 0" "$?" 0
want=$(val "SELECT xla_flags FROM best")
[ -n "$want" ] || die "the winner sets no XLA flag; pick another seed"
check_eq "one flag per line, the best's flags" "$(tr '\n' ' ' < flags.txt | sed 's/ $//')" "$want"
check "every line is a flag (no comment: XLA would stop reading there)" \
  lacks -qv '^--xla_[a-z0-9_]*=' flags.txt

# 2. XLA_FLAGS=FILE runs the same configuration as XLA_FLAGS=flags
"$ft" export 1 > export.sh
(. ./export.sh && "$sim" --landscape fsdp8 --steps 4 --time-scale 0 2> /dev/null) > direct.out
(. ./export.sh && XLA_FLAGS="$work/flags.txt" "$sim" --landscape fsdp8 --steps 4 --time-scale 0 \
  2> file.err) > file.out
check "the sim ran with XLA_FLAGS=FILE" grep -q step_time_ms file.out
check_eq "same steps as with the flags themselves" "$(cat file.out)" "$(cat direct.out)"
(. ./export.sh && XLA_FLAGS="$work/nope.txt" "$sim" --steps 1 --time-scale 0 > /dev/null 2> nope.err) 2> /dev/null
has nope.err 'to read flags for environment variable "XLA_FLAGS"'

# 3. what the file cannot hold
mem=$(val "SELECT json_extract(env, '\$.XLA_PYTHON_CLIENT_MEM_FRACTION') FROM best")
has export.err "the flagfile holds XLA_FLAGS only; the winner also sets XLA_PYTHON_CLIENT_MEM_FRACTION=$mem"
has export.err "--format env"

# 4. a value with a blank (quoted as XLA quotes it) stays one item; a bad format is refused
sql "$FLAGTUNE_DB" "UPDATE trials SET xla_flags = '--xla_dump_to=\"/tmp/a b\"  --xla_gpu_enable_latency_hiding_scheduler=true' WHERE id = (SELECT trial_id FROM best)"
"$ft" export 1 --format flagfile > quoted.txt 2> /dev/null
check_eq "a quoted value with a blank is one line" "$(sed -n 1p quoted.txt)" '--xla_dump_to="/tmp/a b"'
check_eq "two lines" "$(wc -l < quoted.txt | tr -d ' ')" 2
sql "$FLAGTUNE_DB" "UPDATE trials SET xla_flags = '--xla_a=1 stray --xla_b=2' WHERE id = (SELECT trial_id FROM best)"
"$ft" export 1 --format flagfile -o bad.txt 2> bad.err
check_eq "an item XLA would stop at: exit 2" "$?" 2
has bad.err "XLA would stop reading the flags at 'stray"
check "nothing half-written" [ -z "$(ls -A | grep "^bad\.txt")" ]
"$ft" export 1 --format yaml > /dev/null 2> fmt.err
check_eq "an unknown format: exit 2" "$?" 2
has fmt.err "use sh, fish, env, json or flagfile"
finish
