#!/usr/bin/env bash
# docs/ARCHITECTURE.md is true to the tree: every file path it names (src/, lua/, search/,
# store/, tests/, tools/, man/, completions/, docs/) exists, and every src/*.c, lua/*.lua and
# search/*.lua file is named in it: by path, by file name, or (a src/ module) as the first cell
# of a row of the module table (| `diag` |).
# Usage: test_architecture.sh FLAGTUNE_BIN SIM_BIN SOURCE_DIR (only SOURCE_DIR is used)
source "$(dirname "$0")/lib.sh"
doc="$src/docs/ARCHITECTURE.md"
[ -f "$doc" ] || die "$doc does not exist"
cd "$src" || die "cannot enter $src"

# Paths: a known top directory, then name characters; globs and placeholders (*, NNNN) are not
# files. A trailing dot or comma is the sentence's.
paths=$(grep -oE '(src|lua|search|store|tests|tools|man|completions|docs)/[A-Za-z0-9_.*/-]+' "$doc" |
  sed 's/[.,]*$//' | grep -vE 'NNNN|[*]' | LC_ALL=C sort -u)
[ -n "$paths" ] || die "no path found in $doc"
missing=""
for p in $paths; do
  [ -e "$p" ] || missing+=" $p"
done
check_eq "every path ARCHITECTURE.md names exists" "${missing# }" ""

unnamed=""
for f in src/*.c lua/*.lua search/*.lua; do
  base=$(basename "$f")
  grep -qF -- "$f" "$doc" && continue
  grep -qE -- "(^|[^A-Za-z0-9_/])${base//./\\.}([^A-Za-z0-9_]|$)" "$doc" && continue
  [ "${f%/*}" = src ] && grep -qF -- "| \`${base%.c}\` |" "$doc" && continue
  unnamed+=" $f"
done
check_eq "every src/*.c, lua/*.lua and search/*.lua is named in ARCHITECTURE.md" "${unnamed# }" ""

# The sweep's files call one way (docs/ARCHITECTURE.md, the `sweep` row): no two of them call
# each other. A file's functions are those it defines at the start of a line, not static.
defs() { grep -oE '^[a-z][a-z0-9_ ]*[ *]([a-z_][a-z0-9_]*)\(' "$1" | grep -v '^static' |
  sed -E 's/.*[ *]([a-z_][a-z0-9_]*)\($/\1/' | sort -u; }
calls() { # calls A B: A calls a function B defines
  local fn
  for fn in $(defs "$2"); do grep -qE "(^|[^a-z0-9_])$fn\(" "$1" && return 0; done
  return 1
}
family=(src/sweep*.c src/run_process.c src/budget.c src/best.c src/failfast.c)
circles=""
for ((i = 0; i < ${#family[@]}; i++)); do
  for ((k = i + 1; k < ${#family[@]}; k++)); do
    a=${family[i]} b=${family[k]}
    calls "$a" "$b" && calls "$b" "$a" && circles+=" $a<->$b"
  done
done
check_eq "no two of the sweep's files call each other" "${circles# }" ""
[ -n "$(defs src/sweep_queue.c)" ] || fail "defs found no function in src/sweep_queue.c"
calls src/sweep_confirm.c src/sweep_queue.c || fail "calls misses sweep_confirm.c -> sweep_queue.c"
finish
