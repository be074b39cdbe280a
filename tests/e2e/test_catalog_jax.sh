#!/usr/bin/env bash
# The flag catalog against the pinned CPU jaxlib itself (tests/jax/pin.txt): its XLA parses,
# and refuses, every flag of its table, GPU flags included. Regenerates what
# tests/data/probe/regen.sh records and diffs it with the checked-in record, which
# tests/lua/test_catalog_probe_jax012.lua holds the catalog to:
#   - the defaults record in full (one jax start with every catalog flag at its default);
#   - the probe's verdicts for every flag the record refuses, plus a sample of accepted ones
#     (a handful of runs instead of the full probe's minutes).
# And `flags import` against the jaxlib's own XLA_FLAGS=--help table, which absl cuts short.
source "$(dirname "$0")/lib.sh"
need_jax
v=$("$jaxpy" -c 'import jaxlib; print(jaxlib.__version__)')
rec="$src/tests/data/probe/jaxlib-$v.txt"
[ -f "$rec" ] || die "no record for jaxlib $v under tests/data/probe/ (run regen.sh)"
cmd="$jaxpy -c 'import jax; jax.devices()'"

"$ft" flags --json | "$jaxpy" "$src/tests/data/probe/defaults.py" "$rec" > defaults.txt 2> defaults.err
check "defaults: the jax run" [ -s defaults.txt ]
check_eq "defaults: the same as the record" "$(diff "$src/tests/data/probe/jaxlib-$v-defaults.txt" defaults.txt)" ""

# Every refused flag of the record, and every tenth accepted one.
names=$(awk '$2 != "accepted" && NF > 1 && $1 ~ /^[a-z]/ {print $1}' "$rec";
        awk '$2 == "accepted" && NR % 10 == 0 {print $1}' "$rec")
n=$(echo "$names" | wc -l)
# shellcheck disable=SC2086
"$ft" -q flags probe --command "$cmd" $names > probe.txt 2> probe.err
check_eq "probe: exit 0" "$?" 0
for name in $names; do
  want=$(grep "^$name " "$rec" | sed 's/  */ /g')
  got=$(grep "^$name " probe.txt | sed 's/  */ /g')
  [ "$got" = "$want" ] || fail "probe $name: got '$got', want '$want'"
done
check_eq "probe: $n verdicts, each the record's" "$(grep -c '^[a-z]' probe.txt)" "$n"

# XLA_FLAGS=--help: the table is tsl's usage text inside a QCHECK message, and absl cuts every
# log message at 15000 bytes (absl/log/internal/log_message.h kLogMessageBufferSize), so the
# table always stops early. import reads every flag it lists and says the table was cut.
"$ft" flags import --command "$cmd" --jaxlib "$v" > import.txt 2>&1
check_eq "import: exit 0" "$?" 0
listed=$(XLA_FLAGS=--help sh -c "$cmd" 2>&1 | grep -c '^	--')
has import.txt "imported $listed flags of jaxlib $v"
has import.txt "the table stops at"
finish
